// Issue 24 §3 end to end: a real xds: channel (lbtree's resolver and policies on grpc-js, lbtree's control
// plane over ADS, real grpc-js backends on loopback) records through an outlier ejection (A50: a backend failing
// every call) and a priority failover (A56: priority 0's backends stopped); the export is read back and replayed
// in the simulator, and the simulated tree must do what the channel did: the same root states in the same
// order, and every second's share per priority, locality and endpoint within 5 points of the recorded one.
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

const h = new LbtreeXdsHarness('lbtree-flight-recorder-e2e');
before(() => h.start(['a1', 'a2', 'a3', 'b1', 'b2']));
after(() => h.close());

/**
 * A50 failure-percentage ejection, checked every second; at most one of priority 0's three backends. A low
 * threshold: the interval in which a backend starts failing every call ejects it unless it started in that
 * interval's last 5 % — the decision is then the same for the channel and the replay, not a coin toss near
 * the threshold.
 */
const OUTLIER_DETECTION = {
  interval: '1s',
  baseEjectionTime: '120s',
  maxEjectionPercent: 34,
  enforcingSuccessRate: 0,
  failurePercentageThreshold: 5,
  enforcingFailurePercentage: 100,
  failurePercentageMinimumHosts: 3,
  failurePercentageRequestVolume: 2,
};

test('a recorded channel through an outlier ejection and a priority failover replays with the same states and shares within 5 points each second', async () => {
  const [a1, a2, a3, b1, b2] = ['a1', 'a2', 'a3', 'b1', 'b2'].map((n) => h.backend(n));
  h.publish(
    'recorded',
    cp.xdsService({
      name: 'recorded',
      clusters: [
        {
          name: 'recorded',
          outlierDetection: OUTLIER_DETECTION,
          localities: [
            { zone: 'a', priority: 0, endpoints: [a1!.address, a2!.address, a3!.address] },
            { zone: 'b', priority: 1, endpoints: [b1!.address, b2!.address] },
          ],
        },
      ],
    }),
  );
  // The recorder's defaults: 1 s intervals, which every state change, picker and timer of the tree also closes,
  // so the replay knows which calls came before each of them.
  const recorder = new FlightRecorder({ label: 'xds:///recorded' });
  const client = new BackendClient('xds:///recorded', grpc.credentials.createInsecure(), {
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 500,
    [FLIGHT_RECORDER_OPTION]: recorder,
  });
  const load = startLoad(client, { concurrency: 8 });
  const latest = () => JSON.stringify(load.report.latest.slice(-20));
  try {
    await until(
      'every priority 0 backend to serve',
      () => [a1, a2, a3].every((b) => b!.served >= 100),
      30_000,
      latest,
    );
    // A50: a2 fails every call; outlier detection ejects it: 300 calls in a row go to a1 and a3.
    a2!.failEvery = 1;
    let a2Calls = -1;
    let others = 0;
    await until(
      'a2 to be ejected (300 calls in a row elsewhere)',
      () => {
        const calls = a2!.served + a2!.failed;
        if (calls !== a2Calls) [a2Calls, others] = [calls, a1!.served + a3!.served];
        return a1!.served + a3!.served - others >= 300 && a2!.failed > 0;
      },
      30_000,
    );
    // A56: priority 0's backends go away; priority 1 takes over.
    for (const b of [a1, a2, a3]) b!.stop();
    // The load also runs for 2.5 s of priority 1 (a span of recorded time, not a wait for behaviour), so that
    // at least four seconds are compared however fast the machine runs the phases before.
    const failoverAt = Date.now();
    await until(
      'priority 1 to serve, with 2.5 s of load after the failover',
      () => b1!.served >= 300 && b2!.served >= 300 && Date.now() - failoverAt >= 2500,
      30_000,
      latest,
    );
  } finally {
    await load.stop();
    client.close();
  }

  // On a failure the message names a copy of the recording: `lbtree simulate --replay FILE` shows it again.
  const replayed = replayExport(recorder, 'single');
  const { recording, report, text } = replayed;
  assert.equal(report.cluster, 'recorded');
  assert.equal(recording.header.droppedEvents, 0);
  // The recording saw the ejected backend's errors, and the failover.
  const calls = recording.events.filter((e) => e.type === 'calls');
  assert.ok(
    calls.some((c) => c.endpoints.some((e) => e.address === a2!.address && e.errors > 0)),
    text,
  );
  assert.ok(
    calls.some((c) => c.endpoints.some((e) => e.address === b1!.address && e.calls > 0)),
    text,
  );
  assert.deepEqual(report.simulatedStates, report.recordedStates, `states in the same order\n${text}`);
  const compared = shareGaps(report);
  assert.ok(compared.length >= 3 * 4, `at least four seconds compared\n${text}`);
  // Within 5 points, or one call in a second where one call is more than 5 points (round_robin's start differs).
  const wide = compared.filter((g) => g.points > Math.max(5, 100 / Math.min(...g.calls) + 1e-9));
  assert.deepEqual(wide, [], `shares within 5 points (or one call) each second\n${text}`);
  // The simulated tree ejected a2 itself: in the last seconds before the failover it sent a2 nothing.
  const simulatedA2 = report.simulated.steps.map((s) => s.picks.get(a2!.address) ?? 0);
  assert.ok(simulatedA2.some((n) => n > 0) && simulatedA2.at(-1) === 0, text);
  replayed.discard();
});
