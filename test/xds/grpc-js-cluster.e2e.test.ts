// A whole xDS cluster on a real grpc-js channel, before the ADS client exists: clusterToTree's root config as
// the channel's service config, and its endpoints delivered by a tiny test resolver in the form
// @grpc/grpc-js-xds hands its policies (locality path, locality, locality weight, endpoint weight), which
// lbtree's grpc-js adapter reads. Checks A52's tree (priority → xds_wrr_locality → weighted_target →
// round_robin) on real subchannels: locality weights apply, and priority 1 takes over when priority 0 dies.
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
import { ENDPOINT_WEIGHT, type Endpoint, HIERARCHICAL_PATH, LOCALITY_WEIGHT } from '../../src/core/index.js';
import { register } from '../../src/grpc-js/index.js';
import {
  encodeCluster,
  encodeClusterLoadAssignment,
  registerPolicy,
  XDS_LOCALITY_NAME,
  XdsClusterTreeGenerator,
} from '../../src/xds/index.js';
import { assignment, customLeastRequest, edsCluster, TYPE } from './helpers.js';

const SCHEME = 'lbtree-xds-test';
/** The endpoint lists the test resolver serves, by target path. */
const lists = new Map<string, experimental.Endpoint[]>();

/** As @grpc/grpc-js-xds's cluster policies hand endpoints to their children. */
function toGrpcJs(e: Endpoint): experimental.Endpoint {
  const locality = e.attributes.get(XDS_LOCALITY_NAME)!;
  return Object.assign(
    { addresses: e.addresses.map((a) => ({ ...(a as { host: string; port: number }) })) },
    {
      localityPath: [...(e.attributes.get(HIERARCHICAL_PATH) ?? [])],
      locality: { region: locality.region, zone: locality.zone, sub_zone: locality.subZone },
      localityWeight: e.attributes.get(LOCALITY_WEIGHT),
      endpointWeight: e.attributes.get(ENDPOINT_WEIGHT),
    },
  );
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

describe('clusterToTree on a real grpc-js channel (A52 tree, A56 priorities, A28 locality weights)', () => {
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
    const port = (b: Backend) => ({ address: '127.0.0.1', port: b.port });
    const tree = new XdsClusterTreeGenerator().updateEndpoints(
      encodeCluster(edsCluster()), // legacy ROUND_ROBIN: xds_wrr_locality_experimental over round_robin
      encodeClusterLoadAssignment(
        assignment([
          { zone: 'a', weight: 1, endpoints: [port(a1)] },
          { zone: 'b', weight: 3, endpoints: [port(b1), port(b2)] },
          { zone: 'c', weight: 1, priority: 1, endpoints: [port(c1)] },
        ]),
      ),
    );
    lists.set('cluster-a', tree.endpoints.map(toGrpcJs));
    client = newClient(`${SCHEME}:cluster-a`, tree.config as unknown[]);

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
    const port = (b: Backend) => ({ address: '127.0.0.1', port: b.port });
    // The application registers its policy in the process-wide registry before any channel uses it.
    const custom = customLeastRequest('myorg.MyCustomLeastRequestPolicy');
    registerPolicy(custom.factory, { override: true });
    const cluster = edsCluster({
      loadBalancingPolicy: {
        policies: [
          {
            typedExtensionConfig: {
              name: 'wrr',
              typedConfig: {
                '@type': TYPE.wrrLocality,
                endpointPickingPolicy: {
                  policies: [
                    {
                      typedExtensionConfig: {
                        name: 'custom',
                        typedConfig: {
                          '@type': TYPE.xdsTypedStruct,
                          typeUrl: 'type.googleapis.com/myorg.MyCustomLeastRequestPolicy',
                          value: { choiceCount: 2 },
                        },
                      },
                    },
                    { typedExtensionConfig: { name: 'fallback', typedConfig: { '@type': TYPE.roundRobin } } },
                  ],
                },
              },
            },
          },
        ],
      },
    });
    const tree = new XdsClusterTreeGenerator().updateEndpoints(
      encodeCluster(cluster),
      encodeClusterLoadAssignment(
        assignment([
          { zone: 'a', weight: 1, endpoints: [port(a1)] },
          { zone: 'b', weight: 1, endpoints: [port(b1), port(b2)] },
        ]),
      ),
    );
    assert.match(JSON.stringify(tree.config), /myorg\.MyCustomLeastRequestPolicy/);
    lists.set('walkthrough', tree.endpoints.map(toGrpcJs));
    const c = newClient(`${SCHEME}:walkthrough`, tree.config as unknown[]);
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
