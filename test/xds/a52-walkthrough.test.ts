// gRFC A52 "Configuration Example", run end to end: a control plane selects the application's own policy,
// myorg.MyCustomLeastRequestPolicy, through a TypedStruct under WrrLocality, and the cluster runs in the
// simulator with it under xds_wrr_locality_experimental → weighted_target_experimental.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Registry } from '../../src/core/index.js';
import { registerAllPolicies } from '../../src/policies/index.js';
import { Simulation } from '../../src/sim/index.js';
import { registerXdsPolicies } from '../../src/xds/balancer/index.js';
import {
  clusterLbConfig,
  clusterToTree,
  encodeCluster,
  encodeClusterLoadAssignment,
  localityKey,
  registerPolicy,
} from '../../src/xds/index.js';
import { customLeastRequest, TYPE } from './helpers.js';

const CUSTOM = 'myorg.MyCustomLeastRequestPolicy';

/** The Cluster of A52's example, as proto3 JSON. */
const CLUSTER = {
  name: 'cluster-a',
  type: 'EDS',
  edsClusterConfig: { edsConfig: { ads: {} } },
  loadBalancingPolicy: {
    policies: [
      {
        typedExtensionConfig: {
          name: '<<backend-id>>-0',
          typedConfig: {
            '@type': TYPE.wrrLocality,
            endpointPickingPolicy: {
              policies: [
                {
                  typedExtensionConfig: {
                    name: '<<backend-id>>-1',
                    typedConfig: {
                      '@type': TYPE.xdsTypedStruct,
                      typeUrl: `type.googleapis.com/${CUSTOM}`,
                      value: { choiceCount: 2 },
                    },
                  },
                },
                {
                  typedExtensionConfig: {
                    name: '<<backend-id>>-2',
                    typedConfig: { '@type': TYPE.roundRobin },
                  },
                },
              ],
            },
          },
        },
      },
    ],
  },
};

const REGION_A = { region: 'region_a', zone: 'zone_a', subZone: 'subZone_a' };
const REGION_B = { region: 'region_b', zone: 'zone_b', subZone: 'subZone_b' };
const ADDRESSES_A = ['10.0.1.1', '10.0.1.2'];
const ADDRESSES_B = ['10.0.2.1', '10.0.2.2'];

/** Step 4's two localities, with weights 1 and 2. */
const ASSIGNMENT = {
  clusterName: 'cluster-a',
  endpoints: [
    { locality: REGION_A, loadBalancingWeight: 1, lbEndpoints: ADDRESSES_A.map(endpoint) },
    { locality: REGION_B, loadBalancingWeight: 2, lbEndpoints: ADDRESSES_B.map(endpoint) },
  ],
};

function endpoint(address: string) {
  return { endpoint: { address: { socketAddress: { address, portValue: 443 } } } };
}

/** Step 1: what the xDS client puts in the CDS update. */
const STEP_1 = [{ xds_wrr_locality_experimental: { childPolicy: [{ [CUSTOM]: { choiceCount: 2 } }] } }];

/** Each priority's child as cds builds it: xds_cluster_impl over xds_override_host over `policy` (A37, A55). */
function underClusterImpl(policy: unknown): unknown {
  const clusterName = 'cluster-a';
  return [
    {
      xds_cluster_impl_experimental: {
        clusterName,
        childPolicy: [{ xds_override_host_experimental: { clusterName, childPolicy: policy } }],
      },
    },
  ];
}

function runInSimulation(registry: Registry | undefined, tree: ReturnType<typeof clusterToTree>): Simulation {
  const sim = registry ? new Simulation({ registry }) : new Simulation();
  for (const a of [...ADDRESSES_A, ...ADDRESSES_B]) sim.script(`${a}:443`, { connectAfterMs: 1 });
  assert.equal(sim.update(tree.endpoints, tree.config, tree.attributes), true, sim.lastConfigError?.message);
  sim.advance(5);
  assert.equal(sim.state, 'READY');
  return sim;
}

/** Picks per locality over n picks (no call is left open, so least-request sees equal loads). */
function picksByLocality(sim: Simulation, n: number): { a: number; b: number } {
  const counts = { a: 0, b: 0 };
  for (let i = 0; i < n; i++) {
    const p = sim.pick();
    assert.equal(p.type, 'complete');
    if (p.type !== 'complete') continue;
    if (ADDRESSES_A.some((a) => p.address === `${a}:443`)) counts.a++;
    else counts.b++;
  }
  return counts;
}

describe('A52 "Configuration Example": a custom policy selected by TypedStruct, end to end', () => {
  test('steps 1–4 with a registry that has the custom policy: converted, placed under priority, run', () => {
    const custom = customLeastRequest(CUSTOM);
    const registry = registerXdsPolicies(registerAllPolicies(new Registry()));
    registry.register(custom.factory);

    // Step 1: the converted, validated CDS LB config.
    assert.deepEqual(clusterLbConfig(encodeCluster(CLUSTER), { registry }), STEP_1);

    // Steps 2–3: the cluster resolver's priority config, the converted config as each priority's child.
    const tree = clusterToTree(encodeCluster(CLUSTER), encodeClusterLoadAssignment(ASSIGNMENT), { registry });
    assert.deepEqual(tree.config, [
      {
        priority_experimental: {
          children: {
            'priority-0-0': { config: underClusterImpl(STEP_1), ignoreReresolutionRequests: true },
          },
          priorities: ['priority-0-0'],
        },
      },
    ]);
    assert.deepEqual(
      tree.endpoints.map((e) => [e.addresses[0], e.attributes.locality, e.attributes.localityWeight]),
      [
        ['10.0.1.1:443', localityKey(REGION_A), 1],
        ['10.0.1.2:443', localityKey(REGION_A), 1],
        ['10.0.2.1:443', localityKey(REGION_B), 2],
        ['10.0.2.2:443', localityKey(REGION_B), 2],
      ],
    );

    // Step 4: in the simulator, wrr_locality builds weighted_target over the two localities, weights 1 and 2,
    // each running the custom policy with choiceCount 2.
    const sim = runInSimulation(registry, tree);
    assert.equal(custom.instances, 2, 'one custom policy per locality');
    assert.ok(custom.configs.length >= 2 && custom.configs.every((c) => c.choiceCount === 2));
    const counts = picksByLocality(sim, 3000);
    const share = counts.b / (counts.a + counts.b);
    assert.ok(share > 0.6 && share < 0.73, `locality b (weight 2) got ${counts.b} of 3000 picks`);
  });

  test('registered through the public registerPolicy(): no registry needs passing', () => {
    const custom = customLeastRequest(CUSTOM);
    registerPolicy(custom.factory, { override: true });
    assert.deepEqual(clusterLbConfig(encodeCluster(CLUSTER)), STEP_1);
    const tree = clusterToTree(encodeCluster(CLUSTER), encodeClusterLoadAssignment(ASSIGNMENT));
    runInSimulation(undefined, tree);
    assert.equal(custom.instances, 2);
  });

  test('a client without the custom policy falls back to the next entry, RoundRobin', () => {
    const registry = registerXdsPolicies(registerAllPolicies(new Registry()));
    const tree = clusterToTree(encodeCluster(CLUSTER), encodeClusterLoadAssignment(ASSIGNMENT), { registry });
    const child = (
      tree.config[0] as { priority_experimental: { children: Record<string, { config: unknown }> } }
    ).priority_experimental.children['priority-0-0']!.config;
    assert.deepEqual(
      child,
      underClusterImpl([{ xds_wrr_locality_experimental: { childPolicy: [{ round_robin: {} }] } }]),
    );
    const sim = runInSimulation(registry, tree);
    const counts = picksByLocality(sim, 3000);
    assert.ok(counts.b > counts.a * 1.6, `weights 1:2 still apply: ${counts.a} / ${counts.b}`);
  });
});
