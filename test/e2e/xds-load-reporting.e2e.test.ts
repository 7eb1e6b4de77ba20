// LRS end to end (A27 "LRS", A64 / A85): real grpc-js backends, lbtree's control plane in-process asking every
// client for its load each second (send_all_clusters), and the same scenario run first by @grpc/grpc-js-xds
// (its own resolver and xds_cluster_impl) and then by lbtree's `xds:` resolver in this process. Each library's
// reports, summed over several intervals, equal the calls the test made per locality (successes, errors, drops
// by category); calls held by a backend show in progress and go back to 0; lbtree's reports carry the backends'
// ORCA named metrics as the Cluster's lrs_report_endpoint_metrics says (A85). grpc-js-xds runs first: each
// library registers its own `xds` resolver, and a channel keeps the resolver it was created with.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import type { BackendClientType } from '../../src/cli/loopback-backends.js';
import type { ClusterLoadTotals, ReceivedLoadReport, ResourceJson } from '../../src/control-plane/index.js';
import { BackendClient, cp, grpc, until, whoami, XdsScenarios } from '../support/xds-harness.js';

const SERVICE = 'lrs-svc';
const CLUSTER = 'c1';
const ZONE_A = '{region=r1,zone=a,sub_zone=}';
const ZONE_B = '{region=r1,zone=b,sub_zone=}';
/** grpc-js-xds's per-channel bootstrap option. */
const BOOTSTRAP_OPTION = 'grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config';
const GRPC_JS_XDS_NODE = 'lrs-grpc-js-xds';
const LBTREE_NODE = 'lrs-lbtree';

/** The calls of one library as the test saw them. */
class Observed {
  readonly ok: Record<string, number> = { a1: 0, b1: 0 };
  readonly failed: Record<string, number> = { a1: 0, b1: 0 };
  dropped = 0;
  readonly unexpected: string[] = [];

  /** `n` calls, 10 at a time; each outcome is counted where it happened. */
  async calls(client: BackendClientType, n: number): Promise<void> {
    for (let done = 0; done < n; done += 10) {
      const batch = Array.from({ length: Math.min(10, n - done) }, () =>
        whoami(client, { waitForReady: true, deadlineMs: 10_000 }).then(
          (name) => {
            this.ok[name] = (this.ok[name] ?? 0) + 1;
          },
          (e: { details: string; code: number }) => {
            const failing = /^(\w+) is failing/.exec(e.details);
            if (failing) this.failed[failing[1]!] = (this.failed[failing[1]!] ?? 0) + 1;
            else if (/drop/i.test(e.details) && /\blb\b/.test(e.details)) this.dropped++;
            else this.unexpected.push(`${e.code} ${e.details}`);
          },
        ),
      );
      await Promise.all(batch);
    }
  }

  /** What the LRS reports should add up to. */
  expected(): Record<string, Omit<ClusterLoadTotals['localities'][string], 'metrics'>> {
    const locality = (b: string) => ({
      issued: this.ok[b]! + this.failed[b]!,
      succeeded: this.ok[b]!,
      errored: this.failed[b]!,
      inProgress: 0,
    });
    return { [ZONE_A]: locality('a1'), [ZONE_B]: locality('b1') };
  }
}

function reportsOf(plane: InstanceType<typeof cp.ControlPlane>, node: string): ReceivedLoadReport[] {
  return plane.loadReports.filter((r) => r.nodeId === node);
}

/** The cluster's totals of `node`'s reports, without the metrics (compared separately). */
function countsOf(reports: readonly ReceivedLoadReport[]) {
  const totals = cp.sumLoadReports(reports)[CLUSTER];
  if (totals === undefined) return undefined;
  const localities = Object.fromEntries(
    Object.entries(totals.localities).map(([name, { metrics: _, ...counts }]) => [name, counts]),
  );
  return { drops: totals.drops, totalDrops: totals.totalDrops, localities };
}

describe('LRS load reports of lbtree and @grpc/grpc-js-xds to lbtree control-plane (A27, A64, A85)', () => {
  const scenarios = new (class extends XdsScenarios {
    start(names: string[]) {
      return this.startPlane(names);
    }
    channel(options: Record<string, string> = {}): BackendClientType {
      return this.track(new BackendClient(`xds:///${SERVICE}`, grpc.credentials.createInsecure(), options));
    }
  })();
  const plane = scenarios.plane;
  const observed = { grpcJsXds: new Observed(), lbtree: new Observed() };

  function resources(): ResourceJson[] {
    return [
      cp.listener(SERVICE, { rds: `${SERVICE}-routes` }),
      cp.routeConfiguration(`${SERVICE}-routes`, [{ domains: ['*'], routes: [{ cluster: CLUSTER }] }]),
      cp.cluster({
        name: CLUSTER,
        fields: {
          lrsServer: { self: {} },
          lrsReportEndpointMetrics: ['named_metrics.*', 'cpu_utilization'],
        },
      }),
      cp.clusterLoadAssignment(
        CLUSTER,
        [
          { region: 'r1', zone: 'a', endpoints: [scenarios.backend('a1').address] },
          { region: 'r1', zone: 'b', endpoints: [scenarios.backend('b1').address] },
        ],
        { dropOverloads: [{ category: 'lb', perMillion: 200_000 }] },
      ),
    ];
  }

  /** Runs `rounds` rounds of calls, each followed by a report of `node` that includes it. */
  async function roundsOfCalls(
    client: BackendClientType,
    seen: Observed,
    node: string,
    rounds: number,
  ): Promise<void> {
    for (let round = 0; round < rounds; round++) {
      await seen.calls(client, 40);
      const expected = seen.expected();
      await plane.waitForLoad(
        (reports) =>
          JSON.stringify(countsOf(reports.filter((r) => r.nodeId === node))) ===
          JSON.stringify({
            drops: seen.dropped > 0 ? { lb: seen.dropped } : {},
            totalDrops: seen.dropped,
            localities: expected,
          }),
        15_000,
        (reports) =>
          `${node} reported ${JSON.stringify(countsOf(reports.filter((r) => r.nodeId === node)))}; ` +
          `the test saw ${JSON.stringify({ dropped: seen.dropped, localities: expected })}`,
      );
    }
    assert.deepEqual(seen.unexpected, []);
  }

  before(async () => {
    await scenarios.start(['a1', 'b1']);
    plane.setLoadReporting({ clusters: 'all', intervalMs: 1000 });
    scenarios.backend('b1').failEvery = 4;
    scenarios.backend('a1').backendMetrics = { cpuUtilization: 0.5, namedMetrics: { queue: 2 } };
    scenarios.backend('b1').backendMetrics = { namedMetrics: { queue: 4 } };
    scenarios.publish(SERVICE, resources());
  });
  after(() => scenarios.close());

  test('@grpc/grpc-js-xds: its reports over several intervals equal the calls it made, per locality and drop category', async () => {
    createRequire(import.meta.url)('@grpc/grpc-js-xds').register();
    const client = scenarios.channel({
      [BOOTSTRAP_OPTION]: JSON.stringify(plane.bootstrap({ nodeId: GRPC_JS_XDS_NODE })),
    });
    await roundsOfCalls(client, observed.grpcJsXds, GRPC_JS_XDS_NODE, 3);
    const reports = reportsOf(plane, GRPC_JS_XDS_NODE);
    assert.ok(reports.length >= 3, `${reports.length} reports`);
    assert.equal(reports[0]?.userAgent, 'gRPC Node Pure JS');
    client.close();
  });

  test('lbtree: its reports over several intervals equal the calls it made, per locality and drop category', async () => {
    const { register } = await import('../../src/grpc-js/index.js');
    register({ xds: { bootstrap: plane.bootstrap({ nodeId: LBTREE_NODE }) } });
    const client = scenarios.channel();
    await roundsOfCalls(client, observed.lbtree, LBTREE_NODE, 3);
    const reports = reportsOf(plane, LBTREE_NODE);
    assert.ok(reports.length >= 3, `${reports.length} reports`);
    assert.equal(reports[0]?.userAgent, 'lbtree');
    // Each report's interval is the client's measure of the 1 s it was asked for (timers are late, never early).
    for (const report of reports.slice(1)) {
      const interval = report.clusters[0]!.intervalMs;
      assert.ok(interval >= 990 && interval < 5000, `interval ${interval} ms`);
    }
  });

  test('with send_all_clusters the two libraries report the same shape: one cluster, its two localities, drops by the one category', () => {
    for (const [node, seen] of [
      [GRPC_JS_XDS_NODE, observed.grpcJsXds],
      [LBTREE_NODE, observed.lbtree],
    ] as const) {
      const counts = countsOf(reportsOf(plane, node))!;
      assert.deepEqual(Object.keys(counts.localities).sort(), [ZONE_A, ZONE_B], node);
      assert.deepEqual(Object.keys(counts.drops), ['lb'], node);
      const issued = Object.values(counts.localities).reduce((sum, l) => sum + l.issued, 0);
      assert.equal(issued + counts.totalDrops, 120, `${node}: every call issued or dropped once`);
      assert.ok(seen.failed.b1! > 0 && seen.dropped > 0, `${node}: errors and drops happened`);
      for (const report of reportsOf(plane, node)) {
        assert.deepEqual(
          report.clusters.map((c) => [c.cluster, c.edsServiceName]),
          [[CLUSTER, '']],
          node,
        );
      }
    }
  });

  test("A85: lbtree reports the backends' ORCA named metrics as named_metrics.<key>, and cpu_utilization, per locality", () => {
    const totals = cp.sumLoadReports(reportsOf(plane, LBTREE_NODE))[CLUSTER]!;
    const seen = observed.lbtree;
    assert.deepEqual(totals.localities[ZONE_A]?.metrics, {
      'named_metrics.queue': { requests: seen.ok.a1, total: 2 * seen.ok.a1! },
      cpu_utilization: { requests: seen.ok.a1, total: 0.5 * seen.ok.a1! },
    });
    // b1's failed calls carry no trailer; its report has no cpu_utilization, which is still propagated (as 0).
    assert.deepEqual(totals.localities[ZONE_B]?.metrics, {
      'named_metrics.queue': { requests: seen.ok.b1, total: 4 * seen.ok.b1! },
      cpu_utilization: { requests: seen.ok.b1, total: 0 },
    });
  });

  test('lbtree: calls held by a backend are in progress in the reports, and back to 0 once answered', async () => {
    const client = scenarios.channel();
    const a1 = scenarios.backend('a1');
    const b1 = scenarios.backend('b1');
    a1.hold();
    b1.hold();
    // Each call is held by its backend or dropped (20 %): wait until every one of the 10 is one or the other.
    let finished = 0;
    const held = Array.from({ length: 10 }, () =>
      whoami(client, { waitForReady: true, deadlineMs: 20_000 })
        .catch(() => 'failed or dropped')
        .finally(() => finished++),
    );
    await until(
      'every call to be held by a backend or dropped',
      () => a1.waiting + b1.waiting + finished === 10,
    );
    const running = () => a1.waiting + b1.waiting;
    const inProgress = (reports: readonly ReceivedLoadReport[]) => {
      const last = reports.filter((r) => r.nodeId === LBTREE_NODE).at(-1);
      return last?.clusters[0]?.localities.reduce((sum, l) => sum + l.inProgress, 0);
    };
    await plane.waitForLoad(
      (reports) => inProgress(reports) === running(),
      15_000,
      (r) => `in progress ${inProgress(r)}, held ${running()}`,
    );
    a1.release();
    b1.release();
    await Promise.all(held);
    await plane.waitForLoad(
      (reports) => inProgress(reports) === 0,
      15_000,
      (r) => `in progress ${inProgress(r)}`,
    );
  });
});
