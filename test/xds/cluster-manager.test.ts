import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Code } from '../../src/core/index.js';
import type { Simulation } from '../../src/sim/index.js';
import { forCluster, xdsSimulation } from './xds-config-fixtures.js';

// Each cluster child is a priority policy over its own hierarchical path, so the two children see different
// endpoints although the cluster manager hands both the same list.
function child(path: string): unknown {
  return {
    childPolicy: [
      {
        priority_experimental: {
          children: { [path]: { config: [{ round_robin: {} }] } },
          priorities: [path],
        },
      },
    ],
  };
}
const A = { addresses: ['10.0.0.1:80'], attributes: { path: ['a'] } };
const B = { addresses: ['10.0.0.2:80'], attributes: { path: ['b'] } };

function manager(children: Record<string, unknown>): unknown {
  return [{ xds_cluster_manager_experimental: { children } }];
}

describe('xds_cluster_manager_experimental (A31 "Implementation for xDS RouteAction Support")', () => {
  test('A31: each pick goes to the child of the cluster the config selector named for the call', () => {
    const sim = xdsSimulation();
    sim.script('10.0.0.1:80', { connectAfterMs: 1 });
    sim.script('10.0.0.2:80', { connectAfterMs: 1 });
    assert.ok(sim.update([A, B], manager({ 'cluster:a': child('a'), 'cluster:b': child('b') })));
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    for (let i = 0; i < 5; i++) {
      assert.deepEqual(pickAddress(sim, 'cluster:a'), '10.0.0.1:80');
      assert.deepEqual(pickAddress(sim, 'cluster:b'), '10.0.0.2:80');
    }
  });

  test('A31: a call naming no known cluster is dropped with INTERNAL (it never queues)', () => {
    const sim = xdsSimulation();
    sim.script('10.0.0.1:80', { connectAfterMs: 1 });
    sim.update([A], manager({ 'cluster:a': child('a') }));
    sim.advance(1);
    const unknown = sim.pick({ callAttributes: forCluster('cluster:zzz') });
    assert.equal(unknown.type, 'drop');
    assert.equal(unknown.type === 'drop' && unknown.status.code, Code.INTERNAL);
    assert.equal(sim.pick().type, 'drop');
  });

  test('A28 "Picking": a child that is not READY still gets its calls (they queue), while the channel is READY', () => {
    const sim = xdsSimulation();
    sim.script('10.0.0.1:80', { connectAfterMs: 1 });
    sim.script('10.0.0.2:80', { connectAfterMs: 1000 });
    sim.update([A, B], manager({ 'cluster:a': child('a'), 'cluster:b': child('b') }));
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    assert.equal(sim.pick({ callAttributes: forCluster('cluster:b') }).type, 'queue');
    sim.advance(1000);
    assert.equal(pickAddress(sim, 'cluster:b'), '10.0.0.2:80');
  });

  test('A28: the reported state aggregates the children (CONNECTING over TRANSIENT_FAILURE, then all failed)', () => {
    const sim = xdsSimulation({ backoffMs: 10_000 });
    sim.script('10.0.0.1:80', { failAfterMs: 1 });
    sim.script('10.0.0.2:80', { failAfterMs: 5 });
    sim.update([A, B], manager({ 'cluster:a': child('a'), 'cluster:b': child('b') }));
    sim.advance(1);
    assert.equal(sim.state, 'CONNECTING');
    sim.advance(4);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    assert.equal(sim.pick({ callAttributes: forCluster('cluster:a') }).type, 'fail');
  });

  test('A31: an update keeps the children whose cluster stays (same connections) and removes the others', () => {
    const sim = xdsSimulation();
    sim.script('10.0.0.1:80', { connectAfterMs: 1 });
    sim.script('10.0.0.2:80', { connectAfterMs: 1 });
    sim.update([A, B], manager({ 'cluster:a': child('a'), 'cluster:b': child('b') }));
    sim.advance(1);
    const created = sim.subchannelsCreated;
    assert.ok(sim.update([A, B], manager({ 'cluster:a': child('a') })));
    assert.equal(sim.subchannelsCreated, created, 'cluster:a kept its child and its subchannel');
    assert.equal(pickAddress(sim, 'cluster:a'), '10.0.0.1:80');
    assert.ok(sim.subchannel('10.0.0.2:80').released, "the removed cluster's subchannel is released");
    assert.equal(sim.pick({ callAttributes: forCluster('cluster:b') }).type, 'drop');
  });

  test('config errors name their JSON path', () => {
    const sim = xdsSimulation();
    assert.equal(sim.update([A], [{ xds_cluster_manager_experimental: {} }]), false);
    assert.equal(sim.lastConfigError?.path, '$[0].xds_cluster_manager_experimental.children');
    assert.equal(
      sim.update(
        [A],
        manager({
          'cluster:a': { childPolicy: [{ round_robin: { bad: 1 } }, { nope: {} }] },
          'cluster:b': {},
        }),
      ),
      false,
    );
    assert.equal(
      sim.lastConfigError?.path,
      '$[0].xds_cluster_manager_experimental.children["cluster:b"].childPolicy',
    );
  });
});

function pickAddress(sim: Simulation, cluster: string): string {
  const p = sim.pick({ callAttributes: forCluster(cluster) });
  return p.type === 'complete' ? p.address : p.type;
}
