// lbtree's xds: resolver when backends go away (issue 12 §5): EDS priority failover and back with a locality
// then moved between priorities (A56), circuit breaking max_requests (A37 xds_cluster_impl), and an aggregate
// cluster failing over between its leaf clusters and back (A37 / A75). Real grpc-js servers on loopback,
// lbtree's control plane over ADS, lbtree's resolver and policies on real grpc-js channels; lbtree's trace
// lines and counters show that lbtree's code made the decisions.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type * as Grpc from '@grpc/grpc-js';
import { findClusterCallStats } from '../../src/xds/balancer/index.js';
import {
  cp,
  grpc,
  LbtreeXdsHarness,
  rpcsUntil,
  servedByExactly,
  startLoad,
  until,
  whoami,
} from '../support/lbtree-xds-harness.js';

const allFrom =
  (name: string, n = 20) =>
  (latest: readonly string[]) =>
    latest.length >= n && latest.slice(-n).every((x) => x === name);

describe("lbtree's xds: resolver: failover, circuit breaking, aggregate clusters", () => {
  const h = new LbtreeXdsHarness('lbtree-xds-failover-e2e');
  before(() => h.start(['p0', 'p1', 'cb', 'x1', 'x2']));
  after(() => h.close());

  test('A56: priority 0 drains → priority 1 serves, no wait-for-ready RPC fails; back to priority 0; a locality moved between priorities keeps its connection', async () => {
    const [p0, p1] = [h.backend('p0'), h.backend('p1')];
    const eds = (a: number, b: number) =>
      cp.xdsService({
        name: 'prio',
        clusters: [
          {
            name: 'prio',
            localities: [
              { zone: 'a', priority: a, endpoints: [p0.address] },
              { zone: 'b', priority: b, endpoints: [p1.address] },
            ],
          },
        ],
      });
    h.publish('prio', eds(0, 1));
    const c = h.channel('prio');
    await rpcsUntil(c, servedByExactly(['p0']), { window: 5 });
    const load = startLoad(c);
    const latest = () => JSON.stringify(load.report.latest.slice(-20));
    const mark = h.traceMark();
    try {
      await p0.drain();
      await until('priority 1 to serve', () => allFrom('p1')(load.report.latest), 10_000, latest);
      await p0.start();
      await until('priority 0 to serve again', () => allFrom('p0')(load.report.latest), 10_000, latest);
      const failover = h.lbtreeTraces(mark);
      assert.match(failover, /priority: child priority-0-0 reported TRANSIENT_FAILURE/);
      assert.match(failover, /priority: creating child priority-0-1/);

      // Locality b moves to priority 0 and a to priority 1: b's child keeps its name, so its connection.
      const connections = p1.peers.size;
      const swap = h.traceMark();
      await h.publishAcked('prio', eds(1, 0), cp.CLUSTER_LOAD_ASSIGNMENT_TYPE_URL);
      await until('the moved locality to serve', () => allFrom('p1')(load.report.latest), 10_000, latest);
      assert.equal(p1.peers.size, connections, 'no new connection to the moved locality');
      assert.doesNotMatch(h.lbtreeTraces(swap), /priority: creating child/);
    } finally {
      await load.stop();
    }
    assert.deepEqual(load.report.failures, [], 'no wait-for-ready RPC failed');
    assert.ok(load.report.served > 0);
  });

  test('A37: circuit breaking max_requests: calls over the limit fail UNAVAILABLE at once, the count stays within it', async () => {
    const b = h.backend('cb');
    h.publish(
      'cb',
      cp.xdsService({
        name: 'cb',
        clusters: [{ name: 'cb', maxRequests: 3, localities: [{ zone: 'a', endpoints: [b.address] }] }],
      }),
    );
    const c = h.channel('cb');
    await rpcsUntil(c, servedByExactly(['cb']), { window: 3 });
    const issued = findClusterCallStats('cb', 'cb')?.issued ?? 0;
    b.hold();
    const outcomes: (string | Grpc.ServiceError)[] = [];
    const calls = Array.from({ length: 8 }, () =>
      whoami(c, { waitForReady: true, deadlineMs: 10_000 }).then(
        (name) => void outcomes.push(name),
        (e: Grpc.ServiceError) => void outcomes.push(e),
      ),
    );
    try {
      await until(
        'three calls held by the backend and five failed',
        () => b.waiting === 3 && outcomes.length === 5,
        10_000,
        () => `(${b.waiting} held, ${outcomes.length} done)`,
      );
      for (const e of outcomes) {
        assert.ok(typeof e !== 'string', 'no call over the limit reached the backend');
        assert.equal(e.code, grpc.status.UNAVAILABLE);
        assert.match(e.details, /cluster cb: circuit breaking, 3 requests in flight/);
      }
      const stats = findClusterCallStats('cb', 'cb');
      assert.equal(stats?.inFlight, 3, "lbtree's xds_cluster_impl counts the calls in flight");
      assert.equal(stats?.issued, issued + 3, 'three calls started');
      assert.ok((stats?.uncategorizedDrops ?? 0) >= 5);
    } finally {
      b.release();
      await Promise.all(calls);
    }
    assert.deepEqual(outcomes.slice(5), ['cb', 'cb', 'cb']);
    await until('the in-flight count to return to 0', () => findClusterCallStats('cb', 'cb')?.inFlight === 0);
  });

  test('A37 / A75: an aggregate cluster fails over from its first leaf cluster to its second and back, no wait-for-ready RPC fails', async () => {
    const [x1, x2] = [h.backend('x1'), h.backend('x2')];
    h.publish('agg', [
      cp.listener('agg', { rds: 'agg-routes' }),
      cp.routeConfiguration('agg-routes', [{ routes: [{ cluster: 'agg' }] }]),
      cp.aggregateCluster('agg', ['primary', 'secondary']),
      cp.cluster({ name: 'primary' }),
      cp.cluster({ name: 'secondary' }),
      cp.clusterLoadAssignment('primary', [{ zone: 'a', endpoints: [x1.address] }]),
      cp.clusterLoadAssignment('secondary', [{ zone: 'b', endpoints: [x2.address] }]),
    ]);
    const c = h.channel('agg');
    await rpcsUntil(c, servedByExactly(['x1']), { window: 5 });
    const load = startLoad(c);
    const latest = () => JSON.stringify(load.report.latest.slice(-20));
    const mark = h.traceMark();
    try {
      await x1.drain();
      await until(
        'the second leaf cluster to serve',
        () => allFrom('x2')(load.report.latest),
        10_000,
        latest,
      );
      await x1.start();
      await until(
        'the first leaf cluster to serve again',
        () => allFrom('x1')(load.report.latest),
        10_000,
        latest,
      );
    } finally {
      await load.stop();
    }
    const seen = h.lbtreeTraces(mark);
    assert.match(seen, /priority: child primary reported TRANSIENT_FAILURE/);
    assert.match(seen, /priority: creating child secondary/);
    assert.deepEqual(load.report.failures, [], 'no wait-for-ready RPC failed');
  });
});
