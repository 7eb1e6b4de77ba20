// The policy trees @grpc/grpc-js-xds generates, on a real grpc-js channel with lbtree registered, without a
// control plane: the config its cds policy builds for an EDS cluster (`priority` → `xds_wrr_locality` →
// `round_robin`, suffix-less names, `ignore_reresolution_requests`, children named "cluster=…,
// child_number=N") as the channel's service config, and the endpoints in the form grpc-js-xds hands its
// policies (localityPath [priority child, locality name], locality, localityWeight, endpointWeight = locality
// weight × endpoint weight), delivered by a tiny test resolver. Checks that lbtree's policies run that tree
// (A56 priorities, A28 locality weights, A52 custom policies). test/xds/grpc-js-xds-*.e2e.test.ts run the
// same trees through the real grpc-js-xds client and an ADS server.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { experimental } from '@grpc/grpc-js';
import {
  type Backend,
  type BackendClientType,
  newClient,
  startBackends,
  whoami,
} from '../../src/cli/loopback-backends.js';
import { register } from '../../src/grpc-js/index.js';
import { registerPolicy } from '../../src/xds/index.js';
import { customLeastRequest } from './helpers.js';

const SCHEME = 'lbtree-xds-test';
/** The endpoint lists the test resolver serves, by target path. */
const lists = new Map<string, experimental.Endpoint[]>();

interface LocalitySpec {
  readonly zone: string;
  readonly weight: number;
  readonly priority?: number;
  readonly backends: readonly Backend[];
}

/** grpc-js-xds's cds child naming and locality naming. */
const childName = (cluster: string, n: number) => `cluster=${cluster}, child_number=${n}`;
const localityName = (zone: string) => `{region=,zone=${zone},sub_zone=}`;

/**
 * What grpc-js-xds's cds policy builds for an EDS cluster: the `priority` config around the cluster's
 * endpoint-picking policy, and the endpoint list with its locality fields (endpoint weights are 1 here).
 */
function grpcJsXdsTree(
  cluster: string,
  endpointPicking: object,
  localities: readonly LocalitySpec[],
): { config: object[]; endpoints: experimental.Endpoint[] } {
  const priorities = [...new Set(localities.map((l) => l.priority ?? 0))].sort();
  const children: Record<string, object> = {};
  for (const p of priorities) {
    children[childName(cluster, p)] = { config: [endpointPicking], ignore_reresolution_requests: true };
  }
  const endpoints = localities.flatMap((l) =>
    l.backends.map((b) =>
      Object.assign(
        { addresses: [{ host: '127.0.0.1', port: b.port }] },
        {
          localityPath: [childName(cluster, l.priority ?? 0), localityName(l.zone)],
          locality: { region: '', zone: l.zone, sub_zone: '' },
          localityWeight: l.weight,
          endpointWeight: l.weight * 1,
        },
      ),
    ),
  );
  return {
    config: [{ priority: { children, priorities: priorities.map((p) => childName(cluster, p)) } }],
    endpoints,
  };
}

class TestResolver implements experimental.Resolver {
  constructor(
    private readonly target: experimental.GrpcUri,
    private readonly listener: experimental.ResolverListener,
  ) {}
  updateResolution(): void {
    const list = lists.get(this.target.path.replace(/^\//, '')) ?? [];
    process.nextTick(() => this.listener(experimental.statusOrFromValue(list), {}, null, ''));
  }
  destroy(): void {}
  static getDefaultAuthority(): string {
    return 'localhost';
  }
}

describe('grpc-js-xds-shaped cluster trees on a real grpc-js channel (A52 tree, A56 priorities, A28 locality weights)', () => {
  let backends: Backend[];
  let client: BackendClientType | undefined;
  before(async () => {
    register();
    experimental.registerResolver(SCHEME, TestResolver);
    backends = await startBackends(['a1', 'b1', 'b2', 'c1']);
  });
  after(() => {
    client?.close();
    for (const b of backends) b.stop();
  });

  test('RPCs follow the locality weights of priority 0, then fail over to priority 1', async () => {
    const [a1, b1, b2, c1] = backends as [Backend, Backend, Backend, Backend];
    // The legacy ROUND_ROBIN cluster: grpc-js-xds's endpoint-picking policy is xds_wrr_locality over round_robin.
    const tree = grpcJsXdsTree('cluster-a', { xds_wrr_locality: { child_policy: [{ round_robin: {} }] } }, [
      { zone: 'a', weight: 1, backends: [a1] },
      { zone: 'b', weight: 3, backends: [b1, b2] },
      { zone: 'c', weight: 1, priority: 1, backends: [c1] },
    ]);
    lists.set('cluster-a', tree.endpoints);
    client = newClient(`${SCHEME}:cluster-a`, tree.config);
    const counts: Record<string, number> = {};
    for (let i = 0; i < 400; i++) {
      const name = await whoami(client, { waitForReady: true });
      counts[name] = (counts[name] ?? 0) + 1;
    }
    assert.equal(counts.c1, undefined, 'priority 1 is not used while priority 0 is up');
    const a = counts.a1 ?? 0;
    const b = (counts.b1 ?? 0) + (counts.b2 ?? 0);
    assert.ok(a > 60 && a < 140, `locality a (weight 1 of 4) got ${a} of 400: ${JSON.stringify(counts)}`);
    assert.ok(b > 260, `locality b (weight 3 of 4) got ${b} of 400`);

    // Priority 0's backends go away (GOAWAY, then gone): the channel moves to priority 1. An RPC that races
    // the shutdown may fail; what matters is where the channel settles.
    await Promise.all([a1.drain(), b1.drain(), b2.drain()]);
    const after: string[] = [];
    for (let i = 0; i < 20; i++) {
      after.push(
        await whoami(client, { waitForReady: true, deadlineMs: 15_000 }).catch((e: Error) => e.message),
      );
    }
    assert.ok(
      after.slice(-10).every((n) => n === 'c1'),
      `after failover: ${after.join(' | ')}`,
    );
  });

  test('A52 walkthrough on real servers: the control plane selects the application’s own policy by TypedStruct', async () => {
    const [a1, b1, b2] = backends as [Backend, Backend, Backend, Backend];
    // The previous test took these down.
    for (const b of [a1, b1, b2]) if (!b.running) await b.start();
    // The application registers its policy in the process-wide registry before any channel uses it.
    const custom = customLeastRequest('myorg.MyCustomLeastRequestPolicy');
    registerPolicy(custom.factory, { override: true });
    register();
    // grpc-js-xds converts WrrLocality { TypedStruct(myorg…) , RoundRobin } to the first supported entry only,
    // flattening the TypedStruct's value into the config.
    const tree = grpcJsXdsTree(
      'walkthrough',
      { xds_wrr_locality: { child_policy: [{ 'myorg.MyCustomLeastRequestPolicy': { choiceCount: 2 } }] } },
      [
        { zone: 'a', weight: 1, backends: [a1] },
        { zone: 'b', weight: 1, backends: [b1, b2] },
      ],
    );
    lists.set('walkthrough', tree.endpoints);
    const c = newClient(`${SCHEME}:walkthrough`, tree.config);
    try {
      const served = new Set<string>();
      for (let i = 0; i < 60; i++) served.add(await whoami(c, { waitForReady: true }));
      assert.deepEqual([...served].sort(), ['a1', 'b1', 'b2']);
      assert.equal(
        custom.instances,
        2,
        'one instance of the custom policy per locality, on the real channel',
      );
      assert.deepEqual(custom.configs[0], { choiceCount: 2 });
    } finally {
      c.close();
    }
  });
});
