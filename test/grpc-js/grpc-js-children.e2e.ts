// A child policy only grpc-js knows, under an lbtree parent (issue 9): the name resolves through grpc-js's
// registry, and grpc-js runs the policy over subchannels lbtree's helper chain created. (grpc-js-xds's cds
// under an aggregate cluster's priority is the case users meet; here an application's own grpc-js policy and
// grpc-js's outlier_detection stand in for it.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ChannelOptions, experimental } from '@grpc/grpc-js';
import { type Backend, newClient, startBackends, whoami } from '../../src/cli/loopback-backends.js';
import { register } from '../../src/grpc-js/index.js';
import type { LbtreeTypedConfig } from '../../src/grpc-js/policy-adapter.js';
// Loaded by grpc-js-channels.e2e.test.ts before grpc-js: grpc-js's outlier_detection trace lines are collected.
import { traces } from '../support/traced-grpc.js';

/** A grpc-js policy of the application's: pick_first underneath, counting what it is given. */
const counted = { instances: 0, updates: 0 };
class CountingConfig implements experimental.TypedLoadBalancingConfig {
  getLoadBalancerName(): string {
    return 'test_grpc_counting';
  }
  toJsonObject(): object {
    return { test_grpc_counting: {} };
  }
  static createFromJson(json: unknown): CountingConfig {
    if (typeof json !== 'object' || json === null) throw new Error('test_grpc_counting wants an object');
    return new CountingConfig();
  }
}
class CountingBalancer implements experimental.LoadBalancer {
  private readonly child: experimental.ChildLoadBalancerHandler;
  constructor(helper: experimental.ChannelControlHelper) {
    counted.instances++;
    this.child = new experimental.ChildLoadBalancerHandler(helper);
  }
  updateAddressList(
    endpoints: experimental.StatusOr<experimental.Endpoint[]>,
    _config: experimental.TypedLoadBalancingConfig,
    options: ChannelOptions,
    note: string,
  ): boolean {
    counted.updates++;
    return this.child.updateAddressList(
      endpoints,
      experimental.parseLoadBalancingConfig({ round_robin: {} }),
      options,
      note,
    );
  }
  exitIdle(): void {
    this.child.exitIdle();
  }
  resetBackoff(): void {
    this.child.resetBackoff();
  }
  destroy(): void {
    this.child.destroy();
  }
  getTypeName(): string {
    return 'test_grpc_counting';
  }
}

describe('a grpc-js-only child policy under lbtree parents', () => {
  let backends: Backend[];
  const clients: ReturnType<typeof newClient>[] = [];
  before(async () => {
    experimental.registerLoadBalancerType('test_grpc_counting', CountingBalancer, CountingConfig);
    register();
    backends = await startBackends(['g1', 'g2', 'g3']);
  });
  after(() => {
    for (const c of clients) c.close();
    for (const b of backends) b.stop();
  });

  test('an application’s grpc-js policy as a weighted_target child serves RPCs, run by grpc-js', async () => {
    const [g1, g2, g3] = backends as [Backend, Backend, Backend];
    const c = newClient(`endpoints:a=${g1.address};a=${g2.address};b=${g3.address}`, [
      {
        weighted_target_experimental: {
          targets: {
            a: { weight: 1, childPolicy: [{ test_grpc_counting: {} }] },
            b: { weight: 1, childPolicy: [{ lbtree_pick_first: {} }] },
          },
        },
      },
    ]);
    clients.push(c);
    const served = new Set<string>();
    for (let i = 0; i < 60 && served.size < 3; i++) served.add(await whoami(c, { waitForReady: true }));
    assert.deepEqual([...served].sort(), ['g1', 'g2', 'g3']);
    assert.equal(counted.instances, 1);
    assert.ok(counted.updates >= 1);
  });

  test('grpc-js’s outlier_detection under priority_experimental', async () => {
    const [g1] = backends as [Backend, Backend, Backend];
    const mark = traces.length;
    const c = newClient(`endpoints:p0=${g1.address}`, [
      {
        priority_experimental: {
          children: { p0: { config: [{ outlier_detection: { child_policy: [{ round_robin: {} }] } }] } },
          priorities: ['p0'],
        },
      },
    ]);
    clients.push(c);
    assert.equal(await whoami(c, { waitForReady: true }), 'g1');
    // grpc-js's policy ran, not lbtree's (whose lines read `| lbtree | outlier_detection: …`): its own tracer
    // logged the config it was given.
    const grpcJsLines = traces.slice(mark).filter((t) => t.includes('| outlier_detection | '));
    assert.ok(
      grpcJsLines.some((t) => t.includes('Received update with config')),
      `no trace line of grpc-js's outlier_detection: ${traces.slice(mark, mark + 5).join('\n')}`,
    );
  });

  test('a child name neither lbtree nor grpc-js knows is a config error naming the path', () => {
    const config = experimental.parseLoadBalancingConfig({
      priority_experimental: { children: { p0: { config: [{ no_such_policy: {} }] } }, priorities: ['p0'] },
    }) as LbtreeTypedConfig;
    assert.match(
      config.error?.message ?? '',
      /^\$\.priority_experimental\.children\.p0\.config: no registered LB policy among \[no_such_policy\]/,
    );
  });
});
