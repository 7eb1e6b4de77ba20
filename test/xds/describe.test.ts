// LoadBalancer.describe() of the xDS policies (lbtree/admin's live view): the tree an xds: channel runs below
// xds_cluster_manager, as cds builds it from the XdsConfig (A74), read in the simulator.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChildNode, PolicyNode } from '../../src/core/index.js';
import { Code } from '../../src/core/index.js';
import {
  edsEntry,
  endpointResource,
  errorEntry,
  locality,
  withXdsConfig,
  xdsCluster,
  xdsConfig,
  xdsSimulation,
} from './xds-config-fixtures.js';

function only(node: PolicyNode, name?: string): ChildNode {
  const children = node.children ?? [];
  const found = name === undefined ? children[0] : children.find((c) => c.name === name);
  assert.ok(
    found,
    `${node.policy} has the child ${name ?? '(first)'}: ${JSON.stringify(children.map((c) => c.name))}`,
  );
  return found;
}

/** The policy names from `node` down its first children. */
function spine(node: PolicyNode): string[] {
  const names = [node.policy];
  let n = node;
  while (n.children !== undefined && n.children.length > 0) {
    n = n.children[0]!.node;
    names.push(n.policy);
  }
  return names;
}

const manager = {
  xds_cluster_manager_experimental: {
    children: { 'cluster:c': { childPolicy: [{ cds_experimental: { cluster: 'c' } }] } },
  },
};

describe('describe(): the xDS tree (A74, A31, A56, A52)', () => {
  test('cluster_manager → cds → priority → cluster_impl → override_host → wrr_locality → weighted_target → round_robin → pick_first', () => {
    const sim = xdsSimulation();
    const zoneA = ['10.0.1.1:80', '10.0.1.2:80'];
    for (const k of [...zoneA, '10.0.2.1:80']) sim.script(k, { connectAfterMs: 1 });
    const eds = endpointResource(
      'c',
      [[locality('a', 3, zoneA)], [locality('b', 1, ['10.0.2.1:80'])]],
      [{ category: 'lb', perMillion: 50_000 }],
    );
    const attributes = withXdsConfig(xdsConfig({ c: edsEntry(xdsCluster('c', { maxRequests: 7 }), eds) }));
    assert.ok(sim.update([], [manager], attributes));
    sim.advance(1);
    const root = sim.describe();
    assert.ok(root);
    assert.equal(root.state, 'READY');
    assert.deepEqual(spine(root), [
      'xds_cluster_manager_experimental',
      'cds_experimental',
      'priority_experimental',
      'xds_cluster_impl_experimental',
      'xds_override_host_experimental',
      'xds_wrr_locality_experimental',
      'weighted_target_experimental',
      'round_robin',
      'pick_first',
    ]);
    const cds = only(root, 'cluster:c').node;
    assert.deepEqual(cds.facts, { cluster: 'c' });
    const priority = only(cds, 'c').node;
    // A56: priority 0 is READY, so it is the one in use and priority 1 is not created.
    assert.equal(priority.facts?.priorityInUse, priority.children?.[0]?.name);
    assert.equal(priority.children?.length, 1);
    const impl = only(priority).node;
    assert.equal(impl.facts?.cluster, 'c');
    assert.equal(impl.facts?.maxConcurrentRequests, 7);
    assert.deepEqual(impl.facts?.drops, ['lb: 50000 per million']);
    const override = only(impl).node;
    assert.deepEqual(override.facts?.overridableStatuses, ['UNKNOWN', 'HEALTHY']);
    assert.equal(override.facts?.addresses, 2);
  });

  test('A88: a cluster that does not exist shows cds in TRANSIENT_FAILURE with the status, and no tree below', () => {
    const sim = xdsSimulation();
    const notFound = { code: Code.UNAVAILABLE, details: 'cluster c does not exist (test)' };
    sim.update([], [manager], withXdsConfig(xdsConfig({ c: errorEntry(notFound) })));
    const cds = only(sim.describe()!, 'cluster:c').node;
    assert.equal(cds.policy, 'cds_experimental');
    assert.equal(cds.state, 'TRANSIENT_FAILURE');
    assert.deepEqual(cds.status, notFound);
    assert.deepEqual(cds.children, []);
  });
});
