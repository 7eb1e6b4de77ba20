// lbtree's xds: resolver while the control plane changes things under continuous traffic (issue 12 §5): the LB
// policy switched live (ROUND_ROBIN → RING_HASH → an A52 custom policy by TypedStruct → ROUND_ROBIN), an
// invalid Cluster NACKed while the last good config keeps serving and then fixed, and the control plane
// restarted (A57: cached resources keep serving). Real grpc-js servers on loopback, lbtree's control plane over
// ADS, lbtree's resolver and policies on real grpc-js channels; every RPC is wait-for-ready and none may fail.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ClusterSpec } from '../../src/control-plane/index.js';
import type { PolicyFactory } from '../../src/core/index.js';
import { registerPolicy, roundRobinFactory } from '../../src/policies/index.js';
import {
  cp,
  LbtreeXdsHarness,
  type LoadReport,
  rpcsUntil,
  servedByExactly,
  startLoad,
  until,
} from '../support/lbtree-xds-harness.js';

/** A52 walkthrough: an application's own policy, registered with lbtree and selected by a TypedStruct. */
const CUSTOM = 'myorg.LiveRoundRobin';
const custom = { created: 0, destroyed: 0 };
const customPolicy: PolicyFactory<object> = {
  name: CUSTOM,
  parseConfig: (json, path, registry) => roundRobinFactory.parseConfig(json, path, registry),
  create(helper, registry) {
    custom.created++;
    const inner = roundRobinFactory.create(helper, registry);
    return {
      update: (u) => inner.update(u),
      exitIdle: () => inner.exitIdle(),
      resetBackoff: () => inner.resetBackoff(),
      destroy() {
        custom.destroyed++;
        inner.destroy();
      },
    };
  },
};

/** The latest `n` answers all came from `names` and each of `names` answered. */
const latestServedBy = (report: LoadReport, names: string[], n = 20) =>
  report.latest.length >= n && servedByExactly(names)(report.latest.slice(-n));

describe("lbtree's xds: resolver: live changes from the control plane under traffic", () => {
  const h = new LbtreeXdsHarness('lbtree-xds-live-e2e');
  before(() => h.start(['s1', 's2', 'n1', 'n2', 'r1', 'r2'], () => registerPolicy(customPolicy)));
  after(() => h.close());

  test('A52 / A42: ROUND_ROBIN → RING_HASH → a custom policy by TypedStruct → ROUND_ROBIN, switched live with no failed RPC', async () => {
    const [s1, s2] = [h.backend('s1'), h.backend('s2')];
    const service = (policy: Partial<Pick<ClusterSpec, 'lbPolicy' | 'loadBalancingPolicy'>>) =>
      cp.xdsService({
        name: 'switch',
        hashPolicy: [{ header: 'x-user' }],
        clusters: [
          { name: 'switch', ...policy, localities: [{ zone: 'a', endpoints: [s1.address, s2.address] }] },
        ],
      });
    h.publish('switch', service({ lbPolicy: 'ROUND_ROBIN' }));
    const c = h.channel('switch');
    const headers = { 'x-user': 'alice' };
    await rpcsUntil(c, servedByExactly(['s1', 's2']), { window: 4, headers });
    // One request hash for every call: ring_hash sends them all to one backend, round robin to both.
    const load = startLoad(c, { headers: () => headers });
    const latest = () => JSON.stringify(load.report.latest.slice(-20));
    try {
      let mark = h.traceMark();
      await h.publishAcked('switch', service({ lbPolicy: 'RING_HASH' }));
      await until(
        'ring_hash to serve',
        () => latestServedBy(load.report, ['s1']) || latestServedBy(load.report, ['s2']),
        10_000,
        latest,
      );
      assert.match(h.lbtreeTraces(mark), /child policy ring_hash_experimental created/);

      mark = h.traceMark();
      const typedStruct = cp.lbPolicies.custom(`type.googleapis.com/${CUSTOM}`);
      await h.publishAcked('switch', service({ loadBalancingPolicy: [typedStruct] }));
      await until(
        'the custom policy to serve',
        () => latestServedBy(load.report, ['s1', 's2']),
        10_000,
        latest,
      );
      assert.ok(custom.created > custom.destroyed, 'the custom policy runs');
      assert.match(h.lbtreeTraces(mark), new RegExp(`child policy ${CUSTOM.replace('.', '\\.')} created`));

      await h.publishAcked('switch', service({ lbPolicy: 'ROUND_ROBIN' }));
      await until('the custom policy to go', () => custom.created === custom.destroyed, 10_000);
      const served = load.report.served;
      await until('round robin to serve', () => load.report.served >= served + 20, 10_000);
      assert.ok(latestServedBy(load.report, ['s1', 's2']), latest());
    } finally {
      await load.stop();
    }
    assert.deepEqual(load.report.failures, [], 'no RPC failed');
    assert.deepEqual(
      h.plane.nacks.filter((n) => n.nodeId === h.nodeId),
      [],
    );
  });

  test('A88: an invalid Cluster is NACKed naming the field while the last good config serves with no failure; the fix is ACKed and applied', async () => {
    const [n1, n2] = [h.backend('n1'), h.backend('n2')];
    // The cluster's EDS service name says which backend serves: "nack-v1" → n1, "nack-v2" → n2.
    const resources = (clusterSpec: Omit<ClusterSpec, 'name'>) => [
      cp.listener('nack', { rds: 'nack-routes' }),
      cp.routeConfiguration('nack-routes', [{ routes: [{ cluster: 'nack' }] }]),
      cp.cluster({ name: 'nack', ...clusterSpec }),
      cp.clusterLoadAssignment('nack-v1', [{ zone: 'a', endpoints: [n1.address] }]),
      cp.clusterLoadAssignment('nack-v2', [{ zone: 'a', endpoints: [n2.address] }]),
    ];
    h.publish('nack', resources({ edsServiceName: 'nack-v1' }));
    const c = h.channel('nack');
    await rpcsUntil(c, servedByExactly(['n1']), { window: 3 });
    const load = startLoad(c);
    const latest = () => JSON.stringify(load.report.latest.slice(-20));
    try {
      const mark = h.traceMark();
      const bad = h.publish(
        'nack',
        resources({
          edsServiceName: 'nack-v2',
          lbPolicy: 'RING_HASH',
          ringHash: { minimumRingSize: 4096, maximumRingSize: 1024 },
        }),
      );
      const nack = await h.plane.waitForNack({
        nodeId: h.nodeId,
        typeUrl: cp.CLUSTER_TYPE_URL,
        version: bad,
      });
      assert.match(
        nack.reason,
        /ring_hash_lb_config\.minimum_ring_size: 4096 is greater than maximum_ring_size/,
      );
      assert.match(h.lbtreeTraces(mark), /xds client: Cluster "nack" NACKED: .*ring_hash_lb_config/);
      const served = load.report.served;
      await until('traffic after the NACK', () => load.report.served >= served + 30, 10_000);
      assert.ok(latestServedBy(load.report, ['n1']), `the last good cluster serves: ${latest()}`);

      const fixed = await h.publishAcked('nack', resources({ edsServiceName: 'nack-v2' }));
      assert.ok(Number(fixed) > Number(bad));
      await until('the fixed cluster to serve', () => latestServedBy(load.report, ['n2']), 10_000, latest);
    } finally {
      await load.stop();
    }
    assert.deepEqual(load.report.failures, [], 'no RPC failed');
  });

  test('A57: the control plane restarted mid-load: no wait-for-ready RPC fails on the cached resources; after it returns an update is applied', async () => {
    const [r1, r2] = [h.backend('r1'), h.backend('r2')];
    const service = (backend: string) =>
      cp.xdsService({
        name: 'restart',
        clusters: [{ name: 'restart', localities: [{ zone: 'a', endpoints: [backend] }] }],
      });
    h.publish('restart', service(r1.address));
    const c = h.channel('restart');
    await rpcsUntil(c, servedByExactly(['r1']), { window: 3 });
    const load = startLoad(c);
    const latest = () => JSON.stringify(load.report.latest.slice(-20));
    try {
      const mark = h.traceMark();
      const port = h.plane.port;
      await h.plane.close();
      await until('the xDS client to see the control plane down', () =>
        /xds client: xDS stream to \S+ failed before any response/.test(h.lbtreeTraces(mark)),
      );
      const served = load.report.served;
      await until('traffic while the control plane is down', () => load.report.served >= served + 30, 10_000);
      assert.ok(latestServedBy(load.report, ['r1']), latest());

      await h.plane.listen(`127.0.0.1:${port}`);
      const version = h.publish('restart', service(r2.address));
      await h.plane.waitForAck({
        nodeId: h.nodeId,
        typeUrl: cp.CLUSTER_LOAD_ASSIGNMENT_TYPE_URL,
        version,
      });
      await until(
        'the update after the restart to apply',
        () => latestServedBy(load.report, ['r2']),
        10_000,
        latest,
      );
    } finally {
      await load.stop();
    }
    assert.deepEqual(load.report.failures, [], 'no RPC failed');
  });
});
