// Issue 24 §3, replay beyond one cluster, end to end: a real xds: channel (lbtree's resolver and policies on
// grpc-js, lbtree's control plane over ADS, real grpc-js backends on loopback) whose route splits its calls
// over two clusters by weight (A28 weighted_clusters, 70 / 30) records while one backend of the smaller cluster
// stops; the export is read back and replayed in the simulator with the route configuration and both clusters'
// trees: each second's share per cluster (and per priority, locality, endpoint) within 5 points of the
// recorded one, the same root states in the same order.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { shareGaps } from '../../src/cli/simulate/replay-report.js';
import { FlightRecorder } from '../../src/recorder/index.js';
import {
  BackendClient,
  cp,
  grpc,
  LbtreeXdsHarness,
  startLoad,
  until,
} from '../support/lbtree-xds-harness.js';
import { replayExport } from '../support/replayed-export.js';

const { FLIGHT_RECORDER_OPTION } = await import('../../src/grpc-js/index.js');

const h = new LbtreeXdsHarness('lbtree-flight-recorder-clusters-e2e');
before(() => h.start(['l1', 'l2', 'r1', 'r2']));
after(() => h.close());

test('a recorded channel splitting 70/30 over two clusters replays with the route and both trees: shares per cluster within 5 points each second, states in order', async () => {
  const [l1, l2, r1, r2] = ['l1', 'l2', 'r1', 'r2'].map((n) => h.backend(n));
  h.publish(
    'split',
    cp.xdsService({
      name: 'split',
      clusters: [
        {
          name: 'left',
          weight: 70,
          localities: [{ zone: 'l', priority: 0, endpoints: [l1!.address, l2!.address] }],
        },
        {
          name: 'right',
          weight: 30,
          localities: [{ zone: 'r', priority: 0, endpoints: [r1!.address, r2!.address] }],
        },
      ],
    }),
  );
  const recorder = new FlightRecorder({ label: 'xds:///split' });
  const client = new BackendClient('xds:///split', grpc.credentials.createInsecure(), {
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 500,
    [FLIGHT_RECORDER_OPTION]: recorder,
  });
  const load = startLoad(client, { concurrency: 16 });
  const latest = () => JSON.stringify(load.report.latest.slice(-20));
  try {
    await until(
      'every backend to serve',
      () => [l1, l2, r1, r2].every((b) => b!.served >= 100),
      30_000,
      latest,
    );
    // The load runs 2 s more on both of right's backends, then r1 stops: right's calls all go to r2. Each
    // phase lasts a span of recorded time (not a wait for behaviour), so at least four seconds are compared.
    const since = Date.now();
    await until('2 s of load', () => Date.now() - since >= 2000, 30_000);
    r1!.stop();
    const stoppedAt = Date.now();
    const r2Before = r2!.served;
    await until(
      'r2 to take right’s calls, with 2.5 s of load after r1 stopped',
      () => r2!.served - r2Before >= 300 && Date.now() - stoppedAt >= 2500,
      30_000,
      latest,
    );
  } finally {
    await load.stop();
    client.close();
  }

  // On a failure the message names a copy of the recording: `lbtree simulate --replay FILE` shows it again.
  const replayed = replayExport(recorder, 'clusters');
  const { recording, report, text } = replayed;
  assert.equal(recording.header.droppedEvents, 0);
  // What was recorded: the route with both clusters and their weights, every call counted under it.
  const update = recording.events.find((e) => e.type === 'update' && e.xdsRoutes !== undefined);
  assert.deepEqual(
    update?.type === 'update' ? update.xdsRoutes : undefined,
    [
      {
        match: 'prefix ""',
        matcher: { path: { kind: 'prefix', value: '', caseSensitive: true }, headers: [] },
        weightedClusters: [
          { name: 'left', weight: 70 },
          { name: 'right', weight: 30 },
        ],
      },
    ],
    text,
  );
  const calls = recording.events.filter((e) => e.type === 'calls');
  const picks = calls.reduce((a, c) => a + c.endpoints.reduce((b, e) => b + e.picks, 0), 0);
  const routed = calls.reduce((a, c) => a + (c.routes ?? []).reduce((b, r) => b + r.picks, 0), 0);
  assert.equal(routed, picks, 'every pick counted under its route');
  assert.deepEqual([...new Set(report.endpoints.map((e) => e.cluster))].sort(), ['left', 'right']);
  assert.deepEqual(report.simulatedStates, report.recordedStates, `states in the same order\n${text}`);
  const compared = shareGaps(report);
  const byCluster = compared.filter((g) => g.dimension === 'cluster');
  assert.ok(byCluster.length >= 4, `at least four seconds compared\n${text}`);
  // Within 5 points, or one call in a second where one call is more than 5 points (the first and last seconds).
  const wide = compared.filter((g) => g.points > Math.max(5, 100 / Math.min(...g.calls) + 1e-9));
  assert.deepEqual(wide, [], `shares within 5 points (or one call) each second\n${text}`);
  // After r1 stopped, the simulated tree sent it nothing either.
  const simulatedR1 = report.simulated.steps.map((s) => s.picks.get(r1!.address) ?? 0);
  assert.ok(simulatedR1.some((n) => n > 0) && simulatedR1.at(-1) === 0, text);
  replayed.discard();
});
