import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Code } from '../../../src/core/index.js';
import type { ClusterStats } from '../../../src/protos/gen/envoy/config/endpoint/v3/load_report_pb.js';
import { VirtualClock } from '../../../src/sim/index.js';
import { parseBootstrap } from '../../../src/xds/client/bootstrap.js';
import { LrsClient } from '../../../src/xds/lrs/lrs-client.js';
import { A64_BACKEND_METRIC_PROPAGATION } from '../../../src/xds/resources/backend-metric-propagation.js';
import { FakeLrsServer } from './fake-lrs.js';

const BOOTSTRAP = parseBootstrap({
  xds_servers: [{ server_uri: 'cp.example:443', channel_creds: [{ type: 'insecure' }] }],
  node: { id: 'node-1', cluster: 'c' },
});
const ZONE_A = { region: 'r', zone: 'a', subZone: '' };
const BACKOFF = { initialMs: 1000, multiplier: 2, jitter: 0, maxMs: 60_000 };

function setUp() {
  const clock = new VirtualClock();
  const server = new FakeLrsServer();
  const client = new LrsClient({ bootstrap: BOOTSTRAP, transport: server.factory, clock, backoff: BACKOFF });
  return { clock, server, client };
}

/** Counts `n` calls issued and ended OK in zone a of the store. */
function calls(store: ReturnType<LrsClient['acquireClusterLoad']>, n: number, ok = true): void {
  const counter = store.locality(ZONE_A, A64_BACKEND_METRIC_PROPAGATION);
  for (let i = 0; i < n; i++) {
    counter.callStarted();
    counter.callEnded(ok, undefined);
  }
}

const names = (stats: readonly ClusterStats[]) => stats.map((c) => c.clusterName);

describe('LRS stream (A27 "LRS")', () => {
  test('the first acquired cluster opens the stream; its first request carries the node with envoy.lrs.supports_send_all_clusters', () => {
    const { server, client } = setUp();
    assert.equal(server.calls.length, 0);
    client.acquireClusterLoad('c1', 'eds1');
    assert.equal(server.calls.length, 1);
    assert.equal(server.servers[0]?.serverUri, 'cp.example:443');
    const first = server.call.requests[0]!;
    assert.equal(first.node?.id, 'node-1');
    assert.ok(first.node?.clientFeatures.includes('envoy.lrs.supports_send_all_clusters'));
    assert.ok(first.node?.clientFeatures.includes('envoy.lb.does_not_support_overprovisioning'));
    assert.deepEqual(first.clusterStats, []);
    client.acquireClusterLoad('c2', '');
    assert.equal(server.calls.length, 1, 'one stream per server, shared by the clusters');
  });

  test('A47: each cluster reports to the server that sent it (one stream per server); the first xds_servers entry when unknown', () => {
    const clock = new VirtualClock();
    const server = new FakeLrsServer();
    const other = { ...BOOTSTRAP.xdsServers[0]!, serverUri: 'other.example:443' };
    const client = new LrsClient({
      bootstrap: BOOTSTRAP,
      transport: server.factory,
      clock,
      serverOfCluster: (name) =>
        name === 'xdstp://other/envoy.config.cluster.v3.Cluster/c' ? other : undefined,
    });
    client.acquireClusterLoad('c1', '');
    client.acquireClusterLoad('xdstp://other/envoy.config.cluster.v3.Cluster/c', '');
    assert.deepEqual(
      server.servers.map((s) => s.serverUri),
      ['cp.example:443', 'other.example:443'],
    );
    assert.equal(server.calls.length, 2);
    assert.equal(client.stream(other)?.state, 'connecting');
  });

  test('a report goes out at the interval, not a millisecond before, with the interval measured on the clock', () => {
    const { clock, server, client } = setUp();
    const store = client.acquireClusterLoad('c1', 'eds1');
    clock.advance(300);
    server.call.respond({ sendAllClusters: true, intervalMs: 2000 });
    calls(store, 3);
    clock.advance(1999);
    assert.equal(server.call.reports.length, 0);
    clock.advance(1);
    assert.equal(server.call.reports.length, 1);
    const [stats] = server.call.reports[0]!.clusterStats;
    assert.equal(stats?.clusterName, 'c1');
    assert.equal(stats?.clusterServiceName, 'eds1');
    // Since the store was created (300 ms before the response): 2.3 s.
    assert.equal(stats?.loadReportInterval?.seconds, 2n);
    assert.equal(stats?.loadReportInterval?.nanos, 300_000_000);
    const [locality] = stats!.upstreamLocalityStats;
    assert.deepEqual(
      [locality?.locality?.region, locality?.locality?.zone, locality?.locality?.subZone],
      ['r', 'a', ''],
    );
    assert.equal(locality?.totalIssuedRequests, 3n);
    assert.equal(locality?.totalSuccessfulRequests, 3n);
    // The next interval counts afresh and is 2 s long.
    calls(store, 1, false);
    clock.advance(2000);
    const second = server.call.reports[1]!.clusterStats[0]!;
    assert.equal(second.upstreamLocalityStats[0]?.totalIssuedRequests, 1n);
    assert.equal(second.upstreamLocalityStats[0]?.totalErrorRequests, 1n);
    assert.equal(second.upstreamLocalityStats[0]?.totalSuccessfulRequests, 0n);
    assert.equal(second.loadReportInterval?.seconds, 2n);
    assert.equal(second.loadReportInterval?.nanos, 0);
  });

  test('clusters: only the listed clusters are reported; an unknown name reports nothing and is no error; send_all_clusters reports all', () => {
    const { clock, server, client } = setUp();
    const c1 = client.acquireClusterLoad('c1', '');
    const c2 = client.acquireClusterLoad('c2', '');
    server.call.respond({ clusters: ['c2', 'unknown'], intervalMs: 1000 });
    calls(c1, 1);
    calls(c2, 2);
    clock.advance(1000);
    assert.deepEqual(names(server.call.reports[0]!.clusterStats), ['c2']);
    assert.equal(client.stream()?.error, undefined);
    server.call.respond({ sendAllClusters: true, clusters: ['c2'], intervalMs: 1000 });
    calls(c2, 1);
    clock.advance(1000);
    // c1's load of the first interval was kept for it: reported now, with its 2 s interval.
    const report = server.call.reports[1]!.clusterStats;
    assert.deepEqual(names(report), ['c1', 'c2']);
    assert.equal(report[0]?.loadReportInterval?.seconds, 2n);
    assert.equal(report[1]?.loadReportInterval?.seconds, 1n);
  });

  test('load_reporting_interval zero, negative or missing: an error naming the field, the last good request stays in force', () => {
    const { clock, server, client } = setUp();
    const store = client.acquireClusterLoad('c1', '');
    server.call.respond({ sendAllClusters: true, seconds: 0n, nanos: 0 });
    assert.equal(client.stream()?.error?.code, Code.INVALID_ARGUMENT);
    assert.match(client.stream()?.error?.details ?? '', /load_reporting_interval: must be positive/);
    calls(store, 1);
    clock.advance(10_000);
    assert.equal(server.call.reports.length, 0, 'no report before a valid response');
    server.call.respond({ sendAllClusters: true, intervalMs: 1500 });
    assert.equal(client.stream()?.error, undefined);
    server.call.respond({ sendAllClusters: true });
    assert.match(
      client.stream()?.error?.details ?? '',
      /LoadStatsResponse\.load_reporting_interval: missing/,
    );
    server.call.respond({ sendAllClusters: true, seconds: -1n });
    assert.match(client.stream()?.error?.details ?? '', /load_reporting_interval: must be positive/);
    clock.advance(1500);
    assert.equal(server.call.reports.length, 1, 'the 1.5 s interval still runs');
    assert.equal(client.stream()?.state, 'reporting');
    assert.equal(server.calls.length, 1, 'the call stays up');
  });

  test("an interval under C-core's 1 s floor is raised to 1 s; 1 s and 1.001 s are kept", () => {
    const { server, client } = setUp();
    client.acquireClusterLoad('c1', '');
    server.call.respond({ sendAllClusters: true, intervalMs: 999 });
    assert.equal(client.stream()?.requestedLoad?.intervalMs, 1000);
    server.call.respond({ sendAllClusters: true, intervalMs: 1000 });
    assert.equal(client.stream()?.requestedLoad?.intervalMs, 1000);
    server.call.respond({ sendAllClusters: true, intervalMs: 1001 });
    assert.equal(client.stream()?.requestedLoad?.intervalMs, 1001);
  });

  test('report_endpoint_granularity is ignored: reports stay per locality (A27)', () => {
    const { clock, server, client } = setUp();
    const store = client.acquireClusterLoad('c1', '');
    server.call.respond({ sendAllClusters: true, intervalMs: 1000 });
    calls(store, 1);
    clock.advance(1000);
    const stats = server.call.reports[0]!.clusterStats[0]!.upstreamLocalityStats[0]!;
    assert.deepEqual(stats.upstreamEndpointStats, []);
  });

  test('a report with no load goes out once, then idle intervals send nothing until load comes back', () => {
    const { clock, server, client } = setUp();
    const store = client.acquireClusterLoad('c1', '');
    server.call.respond({ sendAllClusters: true, intervalMs: 1000 });
    clock.advance(1000);
    assert.equal(server.call.reports.length, 1);
    assert.deepEqual(server.call.reports[0]!.clusterStats, []);
    clock.advance(3000);
    assert.equal(server.call.reports.length, 1);
    calls(store, 1);
    clock.advance(1000);
    assert.equal(server.call.reports.length, 2);
    assert.deepEqual(names(server.call.reports[1]!.clusterStats), ['c1']);
  });

  test('in-progress calls keep their locality in the reports until they end, then it reports 0 in progress', () => {
    const { clock, server, client } = setUp();
    const store = client.acquireClusterLoad('c1', '');
    server.call.respond({ sendAllClusters: true, intervalMs: 1000 });
    const counter = store.locality(ZONE_A, A64_BACKEND_METRIC_PROPAGATION);
    counter.callStarted();
    clock.advance(1000);
    clock.advance(1000);
    const inProgress = server.call.reports.map(
      (r) => r.clusterStats[0]?.upstreamLocalityStats[0]?.totalRequestsInProgress,
    );
    assert.deepEqual(inProgress, [1n, 1n]);
    counter.callEnded(true, undefined);
    clock.advance(1000);
    const last = server.call.reports[2]!.clusterStats[0]!.upstreamLocalityStats[0]!;
    assert.equal(last.totalRequestsInProgress, 0n);
    assert.equal(last.totalSuccessfulRequests, 1n);
    assert.equal(last.totalIssuedRequests, 0n);
  });

  test('a failed call is retried with backoff and its load is kept; a call that got a response resets the backoff', () => {
    const { clock, server, client } = setUp();
    const store = client.acquireClusterLoad('c1', '');
    server.call.fail({ code: Code.UNAVAILABLE, details: 'connection refused' });
    assert.equal(client.stream()?.state, 'backoff');
    assert.match(client.stream()?.error?.details ?? '', /connection refused/);
    clock.advance(999);
    assert.equal(server.calls.length, 1);
    clock.advance(1);
    assert.equal(server.calls.length, 2);
    server.call.fail({ code: Code.UNAVAILABLE, details: 'again' });
    clock.advance(1999);
    assert.equal(server.calls.length, 2, 'the second wait is 2 s');
    clock.advance(1);
    assert.equal(server.calls.length, 3);
    calls(store, 4);
    server.call.respond({ sendAllClusters: true, intervalMs: 1000 });
    server.call.fail({ code: Code.UNAVAILABLE, details: 'max connection age' });
    clock.advance(1000);
    assert.equal(server.calls.length, 4, 'after a response, the first wait is 1 s again');
    assert.equal(server.call.requests.length, 1, 'only the node until the new call gets a response');
    server.call.respond({ sendAllClusters: true, intervalMs: 1000 });
    clock.advance(1000);
    assert.equal(server.call.reports[0]?.clusterStats[0]?.upstreamLocalityStats[0]?.totalIssuedRequests, 4n);
  });

  test('releasing the last cluster sends one more report with its load, then stops the stream and its transport', () => {
    const { clock, server, client } = setUp();
    const c1 = client.acquireClusterLoad('c1', '');
    const c2 = client.acquireClusterLoad('c2', '');
    server.call.respond({ sendAllClusters: true, intervalMs: 1000 });
    calls(c1, 2);
    client.releaseClusterLoad(c1);
    calls(c2, 1);
    client.releaseClusterLoad(c2);
    assert.equal(client.stream()?.state, 'reporting', 'still up for the last report');
    clock.advance(1000);
    assert.deepEqual(names(server.call.reports[0]!.clusterStats), ['c1', 'c2']);
    assert.equal(server.call.closedByClient, true);
    assert.equal(server.transportsClosed, 1);
    assert.equal(client.stream()?.state, 'stopped');
    clock.advance(10_000);
    assert.equal(server.calls.length, 1);
    // Used again: a new stream.
    client.acquireClusterLoad('c3', '');
    assert.equal(server.calls.length, 2);
  });

  test('a stream that never got a response stops at once when its last cluster is released', () => {
    const { server, client } = setUp();
    const c1 = client.acquireClusterLoad('c1', '');
    client.releaseClusterLoad(c1);
    assert.equal(server.call.closedByClient, true);
    assert.equal(client.stream()?.state, 'stopped');
  });

  test('drops are reported by category, circuit-breaking drops only in the total', () => {
    const { clock, server, client } = setUp();
    const store = client.acquireClusterLoad('c1', '');
    server.call.respond({ sendAllClusters: true, intervalMs: 1000 });
    store.recordDrop('lb');
    store.recordDrop('lb');
    store.recordDrop('throttle');
    store.recordUncategorizedDrop();
    clock.advance(1000);
    const stats = server.call.reports[0]!.clusterStats[0]!;
    assert.equal(stats.totalDroppedRequests, 4n);
    assert.deepEqual(
      stats.droppedRequests.map((d) => [d.category, d.droppedCount]),
      [
        ['lb', 2n],
        ['throttle', 1n],
      ],
    );
    assert.deepEqual(stats.upstreamLocalityStats, []);
  });
});
