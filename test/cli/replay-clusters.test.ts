// `lbtree simulate --replay` beyond one cluster: recordings of xDS channels written through FlightRecorder on
// the simulator's clock, read back from their file text, replayed. The replay runs the channel's own root
// (xds_cluster_manager with one cds child per routed cluster) over the recorded clusters; each call carries the
// cluster the channel's config selector chose for it (A28 routes, weighted_clusters: the tree's input, counted
// per interval, route and cluster), and what each cluster's tree does with it is the simulated tree's own.
// Aggregate (A75) and LOGICAL_DNS (A37, A61) clusters run through cds as on a channel.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { replayRecording } from '../../src/cli/simulate/replay.js';
import { shareGaps } from '../../src/cli/simulate/replay-report.js';
import { routeSchedule } from '../../src/cli/simulate/replay-routes.js';
import {
  FlightRecorder,
  type RecordedCluster,
  type RecordedRoute,
  RecordingError,
  readRecording,
} from '../../src/recorder/index.js';
import { VirtualClock } from '../../src/sim/index.js';

const [A1, A2, B1, B2] = ['10.0.0.1:80', '10.0.0.2:80', '10.1.0.1:80', '10.1.0.2:80'];
const HEALTHY = 'HEALTHY' as const;

function edsCluster(name: string, priorities: string[][], zone = name): RecordedCluster {
  return {
    name,
    kind: 'eds',
    lbPolicy: [{ xds_wrr_locality_experimental: { childPolicy: [{ round_robin: {} }] } }],
    maxRequests: 1024,
    overrideHostStatus: ['UNKNOWN', 'HEALTHY'],
    assignment: {
      priorities: priorities.map((addresses, p) => [
        {
          locality: { region: 'r', zone: `${zone}${p}`, subZone: '' },
          weight: 1,
          endpoints: addresses.map((a) => ({ addresses: [a], weight: 1, healthStatus: HEALTHY })),
        },
      ]),
      drops: [],
    },
  };
}

/** The root config an xds: channel's resolver gives: one cds child per cluster the routes name (A31). */
function rootConfig(...clusters: string[]) {
  return {
    xds_cluster_manager_experimental: {
      children: Object.fromEntries(
        clusters.map((c) => [`cluster:${c}`, { childPolicy: [{ cds_experimental: { cluster: c } }] }]),
      ),
    },
  };
}

/**
 * One interval's calls, each picked and ended at once, spread over the second: `calls` per address (or
 * `failed`, picks the picker failed); `routes` counts the same calls per route index and cluster, as the
 * channel's picker adapter does from the pick information.
 */
function second(
  recorder: FlightRecorder,
  clock: VirtualClock,
  calls: Record<string, number>,
  routes: [route: number, cluster: string, picks: number][] = [],
) {
  const list = Object.entries(calls).flatMap(([a, n]) => Array.from({ length: n }, () => a));
  const routeList = routes.flatMap(([r, c, n]) =>
    Array.from({ length: n }, () => [String(r), `cluster:${c}`] as const),
  );
  const start = clock.now();
  list.forEach((a, i) => {
    clock.advance(Math.max(0, start + Math.floor((i * 1000) / list.length) - clock.now()));
    const route = routeList[i];
    if (route !== undefined) recorder.routePicked(route[0], route[1]);
    if (a === 'failed') {
      recorder.pickFailed(false);
      return;
    }
    const counter = recorder.endpoint(a);
    recorder.picked(counter);
    recorder.callEnded(counter, true);
  });
  clock.advance(start + 1000 - clock.now());
}

function ready(recorder: FlightRecorder, clock: VirtualClock, addresses: string[]) {
  for (const a of addresses) recorder.subchannelState(a, 'CONNECTING');
  clock.advance(2);
  for (const a of addresses) recorder.subchannelState(a, 'READY');
  recorder.picker('READY', { code: 0, details: '' });
  clock.advance(998);
}

const shareOf = (
  report: ReturnType<typeof replayRecording>,
  side: 'recorded' | 'simulated',
  s: number,
  names: string[],
) => {
  const picks = report[side].steps[s]!.picks;
  const total = [...picks.values()].reduce((a, b) => a + b, 0);
  return (100 * names.reduce((a, n) => a + (picks.get(n) ?? 0), 0)) / total;
};

test('A28 weighted_clusters 70/30: each call replayed in its recorded cluster; each cluster’s tree spreads its share over its endpoints', () => {
  const clock = new VirtualClock();
  const recorder = new FlightRecorder({ clock, label: 'xds:///split' });
  const routes: RecordedRoute[] = [
    {
      match: 'prefix "/"',
      weightedClusters: [
        { name: 'a', weight: 70 },
        { name: 'b', weight: 30 },
      ],
    },
  ];
  recorder.picker('CONNECTING', { code: 0, details: '' });
  recorder.update({
    config: rootConfig('a', 'b'),
    endpoints: [],
    xdsClusters: [edsCluster('a', [[A1, A2]]), edsCluster('b', [[B1]])],
    xdsRoutes: routes,
  });
  ready(recorder, clock, [A1, A2, B1]);
  for (let s = 1; s <= 4; s++)
    second(recorder, clock, { [A1]: 350, [A2]: 350, [B1]: 300 }, [
      [0, 'a', 700],
      [0, 'b', 300],
    ]);
  const recording = readRecording(recorder.export());
  assert.deepEqual(recording.events.find((e) => e.type === 'update')?.xdsRoutes, routes);
  assert.deepEqual(
    recording.events.filter((e) => e.type === 'calls').map((e) => e.routes),
    [1, 2, 3, 4].map(() => [
      { route: 0, child: 'cluster:a', picks: 700 },
      { route: 0, child: 'cluster:b', picks: 300 },
    ]),
  );
  const report = replayRecording(recording);
  assert.equal(report.cluster, undefined, 'every routed cluster is replayed');
  assert.deepEqual(Object.keys(report.clusterPolicies ?? {}).sort(), ['a', 'b']);
  for (let s = 1; s <= 4; s++) {
    assert.equal(shareOf(report, 'recorded', s, [A1, A2]), 70);
    assert.equal(shareOf(report, 'simulated', s, [A1, A2]), 70, `second ${s}`);
    // Cluster a's round_robin spreads its 700 over a1 and a2.
    assert.equal(report.simulated.steps[s]!.picks.get(A1), 350);
  }
  const byCluster = shareGaps(report).filter((g) => g.dimension === 'cluster');
  assert.equal(byCluster.length, 4);
  for (const g of byCluster) assert.ok(g.points <= 5, JSON.stringify(g));
  assert.deepEqual(report.simulatedStates, report.recordedStates);
});

test('a cluster without endpoints: its recorded calls fail in the replayed tree too (its cds reports the cluster unusable), the other cluster serves', () => {
  const clock = new VirtualClock();
  const recorder = new FlightRecorder({ clock });
  const empty: RecordedCluster = { ...edsCluster('b', []), resolutionNote: 'no endpoints yet' };
  delete (empty as { assignment?: unknown }).assignment;
  recorder.update({
    config: rootConfig('a', 'b'),
    endpoints: [],
    xdsClusters: [edsCluster('a', [[A1]]), empty],
    xdsRoutes: [
      {
        match: 'prefix "/"',
        weightedClusters: [
          { name: 'a', weight: 1 },
          { name: 'b', weight: 1 },
        ],
      },
    ],
  });
  ready(recorder, clock, [A1]);
  second(recorder, clock, { [A1]: 50, failed: 50 }, [
    [0, 'a', 50],
    [0, 'b', 50],
  ]);
  const report = replayRecording(readRecording(recorder.export()));
  const step = report.simulated.steps[1]!;
  assert.equal(step.picks.get(A1), 50);
  assert.equal(step.failed, 50);
  assert.equal(report.recorded.steps[1]!.failed, 50);
});

test('routes by path (A28): each call goes to the cluster of the route it was counted under', () => {
  const clock = new VirtualClock();
  const recorder = new FlightRecorder({ clock });
  recorder.update({
    config: rootConfig('a', 'b'),
    endpoints: [],
    xdsClusters: [edsCluster('a', [[A1, A2]]), edsCluster('b', [[B1, B2]])],
    xdsRoutes: [
      { match: 'prefix "/svc.A/"', cluster: 'a' },
      { match: 'path "/svc.B/Get"', cluster: 'b' },
    ],
  });
  ready(recorder, clock, [A1, A2, B1, B2]);
  second(recorder, clock, { [A1]: 40, [A2]: 40, [B1]: 10, [B2]: 10 }, [
    [0, 'a', 80],
    [1, 'b', 20],
  ]);
  second(recorder, clock, { [A1]: 5, [A2]: 5, [B1]: 45, [B2]: 45 }, [
    [0, 'a', 10],
    [1, 'b', 90],
  ]);
  const report = replayRecording(readRecording(recorder.export()));
  assert.equal(shareOf(report, 'simulated', 1, [A1, A2]), 80);
  assert.equal(shareOf(report, 'simulated', 2, [B1, B2]), 90);
  for (const g of shareGaps(report)) assert.ok(g.points <= 1, JSON.stringify(g));
});

test('routeSchedule spreads an interval’s calls over its routes and clusters in proportion, interleaved', () => {
  const a = { route: 0, child: 'cluster:a', picks: 7 };
  const b = { route: 2, child: 'cluster:b', picks: 3 };
  const schedule = routeSchedule([a, b], 10);
  assert.equal(schedule.filter((r) => r === a).length, 7);
  assert.equal(schedule.filter((r) => r === b).length, 3);
  // Interleaved, not 7 then 3: each half of the interval has b's calls.
  assert.ok(schedule.slice(0, 5).includes(b) && schedule.slice(5).includes(b));
  assert.deepEqual(routeSchedule(undefined, 2), [undefined, undefined]);
});

test('A75 aggregate cluster: priority over its leaf clusters; the secondary takes over when the primary fails, as recorded', () => {
  const clock = new VirtualClock();
  const recorder = new FlightRecorder({ clock });
  const aggregate: RecordedCluster = {
    name: 'agg',
    kind: 'aggregate',
    lbPolicy: [{ round_robin: {} }],
    maxRequests: 1024,
    overrideHostStatus: ['UNKNOWN', 'HEALTHY'],
    leafClusters: ['primary', 'secondary'],
  };
  recorder.picker('CONNECTING', { code: 0, details: '' });
  recorder.update({
    config: rootConfig('agg'),
    endpoints: [],
    xdsClusters: [aggregate, edsCluster('primary', [[A1, A2]]), edsCluster('secondary', [[B1]])],
    xdsRoutes: [{ match: 'prefix "/"', cluster: 'agg' }],
  });
  ready(recorder, clock, [A1, A2]);
  second(recorder, clock, { [A1]: 50, [A2]: 50 }, [[0, 'agg', 100]]);
  second(recorder, clock, { [A1]: 50, [A2]: 50 }, [[0, 'agg', 100]]);
  // 3 s: the primary's connections fail; the secondary connects and serves.
  for (const a of [A1, A2]) recorder.subchannelState(a, 'TRANSIENT_FAILURE', 'connection refused');
  recorder.picker('CONNECTING', { code: 0, details: '' });
  recorder.subchannelState(B1, 'CONNECTING');
  clock.advance(3);
  recorder.subchannelState(B1, 'READY');
  recorder.picker('READY', { code: 0, details: '' });
  clock.advance(997);
  for (let s = 4; s <= 5; s++) second(recorder, clock, { [B1]: 100 }, [[0, 'agg', 100]]);
  const report = replayRecording(readRecording(recorder.export()));
  assert.equal(report.cluster, 'agg');
  assert.equal(shareOf(report, 'simulated', 1, [A1, A2]), 100);
  assert.equal(shareOf(report, 'simulated', 4, [B1]), 100);
  assert.equal(shareOf(report, 'simulated', 5, [B1]), 100);
  for (const g of shareGaps(report)) assert.ok(g.points <= 1, JSON.stringify(g));
  // By cluster: the leaves.
  assert.deepEqual([...new Set(report.endpoints.map((e) => e.cluster))], ['primary', 'secondary']);
  assert.deepEqual(report.simulatedStates, report.recordedStates);
});

test('LOGICAL_DNS cluster (A37, A61): the recorded DNS results, one endpoint with every address; a new resolution moves the calls', () => {
  const clock = new VirtualClock();
  const recorder = new FlightRecorder({ clock });
  const dns = (addresses: string[]): RecordedCluster => ({
    name: 'dns',
    kind: 'logical_dns',
    dns: { hostname: 'backend.example', port: 80 },
    lbPolicy: [{ pick_first: {} }],
    maxRequests: 1024,
    overrideHostStatus: ['UNKNOWN', 'HEALTHY'],
    assignment: {
      priorities: [
        [
          {
            locality: { region: '', zone: '', subZone: '' },
            weight: 1,
            endpoints: [{ addresses, weight: 1, healthStatus: 'UNKNOWN' }],
          },
        ],
      ],
      drops: [],
    },
  });
  recorder.picker('CONNECTING', { code: 0, details: '' });
  recorder.update({
    config: rootConfig('dns'),
    endpoints: [],
    xdsClusters: [dns([A1, A2])],
    xdsRoutes: [{ match: 'prefix "/"', cluster: 'dns' }],
  });
  ready(recorder, clock, [A1]);
  second(recorder, clock, { [A1]: 100 }, [[0, 'dns', 100]]);
  // 2 s: DNS answers with another address; the channel moves there.
  recorder.update({
    config: rootConfig('dns'),
    endpoints: [],
    xdsClusters: [dns([B1])],
    xdsRoutes: [{ match: 'prefix "/"', cluster: 'dns' }],
  });
  ready(recorder, clock, [B1]);
  second(recorder, clock, { [B1]: 100 }, [[0, 'dns', 100]]);
  const text = recorder.export();
  assert.match(text, /"dns":\{"hostname":"backend.example","port":80\}/);
  const report = replayRecording(readRecording(text));
  assert.equal(report.cluster, 'dns');
  assert.equal(shareOf(report, 'simulated', 1, [A1]), 100, 'pick_first: the first resolved address');
  assert.equal(shareOf(report, 'simulated', 3, [B1]), 100);
  for (const g of shareGaps(report)) assert.ok(g.points <= 1, JSON.stringify(g));
});

test('a version 1 file without routes: one cluster replays as before; two need --xds-cluster, which replays that cluster’s calls only', () => {
  const clock = new VirtualClock();
  const recorder = new FlightRecorder({ clock });
  recorder.update({
    config: rootConfig('a', 'b'),
    endpoints: [],
    xdsClusters: [edsCluster('a', [[A1, A2]]), edsCluster('b', [[B1]])],
  });
  ready(recorder, clock, [A1, A2, B1]);
  second(recorder, clock, { [A1]: 30, [A2]: 30, [B1]: 40 });
  const recording = readRecording(recorder.export());
  assert.equal(recording.header.version, 1);
  assert.throws(
    () => replayRecording(recording),
    /^Error: the channel used 2 clusters \(a, b\) and the recording has no routes: choose one with --xds-cluster NAME$/,
  );
  const report = replayRecording(recording, { cluster: 'b' });
  assert.equal(report.cluster, 'b');
  assert.deepEqual(report.config, [{ cds_experimental: { cluster: 'b' } }]);
  assert.deepEqual(
    report.endpoints.map((e) => e.name),
    [B1],
  );
  assert.equal(report.simulated.steps[1]!.picks.get(B1), 40);
  assert.equal(report.recorded.steps[1]!.picks.get(A1), undefined, 'cluster a’s calls are not replayed');
});

test('a recording’s routes are checked by line and field; a truncated or newer-version file is refused', () => {
  const clock = new VirtualClock();
  const recorder = new FlightRecorder({ clock });
  recorder.update({
    config: rootConfig('a'),
    endpoints: [],
    xdsClusters: [edsCluster('a', [[A1]])],
    xdsRoutes: [{ match: 'prefix "/"', cluster: 'a' }],
  });
  recorder.subchannelState(A1, 'READY');
  second(recorder, clock, { [A1]: 2 }, [[0, 'a', 2]]);
  const text = recorder.export();
  const refused = (bad: string, message: RegExp) =>
    assert.throws(
      () => readRecording(bad),
      (e: Error) => e instanceof RecordingError && message.test(e.message),
    );
  refused(
    text.replace('"cluster":"a"}]', '"cluster":"a","nonForwarding":"redirect"}]'),
    /line 2: xdsRoutes\[0\]: expected one of cluster, weightedClusters or nonForwarding, got 2/,
  );
  refused(
    text.replace('"cluster":"a"}]', '"weightedClusters":[{"name":"a","weight":0}]}]'),
    /line 2: xdsRoutes\[0\]\.weightedClusters\[0\]\.weight: expected a weight > 0/,
  );
  refused(
    text.replace('"routes":[{"route":0,"child":"cluster:a","picks":2}]', '"routes":[{"route":0,"picks":2}]'),
    /routes\[0\]\.child: expected a string, got undefined/,
  );
  const lines = text.trimEnd().split('\n');
  refused(
    `${lines.slice(0, -1).join('\n')}\n`,
    new RegExp(
      `line ${lines.length}: the file has no end line after its ${lines.length - 2} events: it is truncated`,
    ),
  );
  refused(
    text.replace('"version":1', '"version":3'),
    /line 1: version: the file is format version 3; this lbtree reads version 2 and older/,
  );
});
