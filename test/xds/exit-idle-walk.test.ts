// The exitIdle() walk through an xDS tree (xds_cluster_manager → the cluster's tree: priority → cluster_impl
// → override_host → xds_wrr_locality → weighted_target → the endpoint-picking policy). grpc-js calls exitIdle()
// on the root before every call: with nothing IDLE below, the cluster's tree is not even entered; with an IDLE
// pick_first endpoint (A52 endpoint-picking policy), exitIdle() reaches it and it reconnects (A62).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PolicyFactory } from '../../src/core/index.js';
import { defaultRegistry } from '../../src/policies/index.js';
import { Simulation } from '../../src/sim/index.js';
import { registerXdsPolicies } from '../../src/xds/balancer/index.js';
import { clusterToTreeFromJson } from '../../src/xds/index.js';
import { assignment, edsCluster } from './helpers.js';

const PICK_FIRST = {
  loadBalancingPolicy: {
    policies: [
      {
        typedExtensionConfig: {
          name: 'pf',
          typedConfig: {
            '@type': 'type.googleapis.com/envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst',
          },
        },
      },
    ],
  },
};

/**
 * A simulation running `clusterFields`' tree under xds_cluster_manager, its connections made 1 ms after they
 * are asked for; `calls()` counts the exitIdle() calls that reached the cluster's tree.
 */
function clusterUnderManager(clusterFields: Record<string, unknown>): {
  sim: Simulation;
  calls: () => number;
} {
  const tree = clusterToTreeFromJson(
    edsCluster(clusterFields),
    assignment([
      { zone: 'a', endpoints: ['10.0.0.1', '10.0.0.2'] },
      { zone: 'b', endpoints: ['10.0.1.1'] },
    ]),
  );
  const registry = registerXdsPolicies(defaultRegistry().clone());
  const rootName = Object.keys((tree.config as Record<string, unknown>[])[0]!)[0]!;
  const inner = registry.get(rootName)!;
  let calls = 0;
  const counting: PolicyFactory = {
    name: rootName,
    parseConfig: (json, path, lookup) => inner.parseConfig(json, path, lookup),
    create(helper, lookup) {
      // The same helper: the tree's own word on exitIdle() reaches the manager as it would without this.
      const policy = inner.create(helper, lookup);
      return {
        update: (update) => policy.update(update),
        exitIdle: () => {
          calls++;
          policy.exitIdle();
        },
        resetBackoff: () => policy.resetBackoff(),
        destroy: () => policy.destroy(),
      };
    },
  };
  registry.register(counting, { override: true });
  const sim = new Simulation({ registry });
  for (const a of ['10.0.0.1:80', '10.0.0.2:80', '10.0.1.1:80']) sim.script(a, { connectAfterMs: 1 });
  const manager = [
    { xds_cluster_manager_experimental: { children: { backend: { childPolicy: tree.config } } } },
  ];
  assert.ok(sim.update(tree.endpoints, manager, tree.attributes), sim.lastConfigError?.message);
  sim.advance(5);
  return { sim, calls: () => calls };
}

describe('the exitIdle() walk through an xDS tree', () => {
  test('round_robin endpoints all READY: nothing below is IDLE, and 1,000 exitIdle() calls never enter the cluster', () => {
    const { sim, calls } = clusterUnderManager({ lbPolicy: 'ROUND_ROBIN' });
    assert.equal(sim.state, 'READY');
    assert.equal(sim.rootWakeable, false);
    for (let i = 0; i < 1000; i++) sim.exitIdle();
    assert.equal(calls(), 0);
  });

  test('pick_first endpoints (A52): one IDLE after a disconnect is reached by exitIdle() and reconnects (A62)', () => {
    const { sim, calls } = clusterUnderManager(PICK_FIRST);
    assert.equal(sim.state, 'READY');
    assert.equal(sim.rootWakeable, false);
    sim.exitIdle();
    assert.equal(calls(), 0);
    const connected = [...sim.subchannels.values()].filter((s) => s.state === 'READY');
    assert.ok(connected.length > 0);
    connected[0]!.setState('IDLE');
    sim.flush();
    assert.equal(sim.rootWakeable, true, 'an IDLE pick_first below');
    sim.advance(1000);
    assert.equal(sim.subchannel(connected[0]!.key).released, true, 'nothing else wakes it');
    sim.exitIdle();
    assert.equal(calls(), 1);
    assert.equal(sim.subchannel(connected[0]!.key).released, false, 'exitIdle() started a new pass');
    sim.advance(1);
    assert.equal(sim.subchannel(connected[0]!.key).state, 'READY');
    assert.equal(sim.rootWakeable, false);
    sim.exitIdle();
    assert.equal(calls(), 1);
  });
});
