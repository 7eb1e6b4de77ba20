// `lbtree simulate --replay` on synthetic recordings: a recording written through FlightRecorder on the
// simulator's clock, read back from its file text, replayed. The channel it describes: an xDS cluster with two
// priorities (gRFC A56), priority 0's connections lost at 3 s, priority 1 taking over.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { replayRecording } from '../../src/cli/simulate/replay.js';
import { shareGaps } from '../../src/cli/simulate/replay-report.js';
import { FlightRecorder, type RecordedCluster, readRecording } from '../../src/recorder/index.js';
import { VirtualClock } from '../../src/sim/index.js';
import { nodeScript } from '../support/child-node.js';

const A1 = '10.0.0.1:80';
const A2 = '10.0.0.2:80';
const B1 = '10.1.0.1:80';

const ROUND_ROBIN_CLUSTER: RecordedCluster = {
  name: 'svc',
  kind: 'eds',
  lbPolicy: [{ xds_wrr_locality_experimental: { childPolicy: [{ round_robin: {} }] } }],
  maxRequests: 1024,
  overrideHostStatus: ['UNKNOWN', 'HEALTHY'],
  assignment: {
    priorities: [
      [
        {
          locality: { region: 'r', zone: 'a', subZone: '' },
          weight: 1,
          endpoints: [A1, A2].map((a) => ({ addresses: [a], weight: 1, healthStatus: 'HEALTHY' as const })),
        },
      ],
      [
        {
          locality: { region: 'r', zone: 'b', subZone: '' },
          weight: 1,
          endpoints: [{ addresses: [B1], weight: 1, healthStatus: 'HEALTHY' as const }],
        },
      ],
    ],
    drops: [],
  },
};

const ROOT_CONFIG = {
  xds_cluster_manager_experimental: {
    children: { 'cluster:svc': { childPolicy: [{ cds_experimental: { cluster: 'svc' } }] } },
  },
};

/** One interval's calls, each picked and ended at once: `calls` per address, of which `errors` failed. */
function callsFor(
  recorder: FlightRecorder,
  clock: VirtualClock,
  calls: Record<string, number>,
  errors: Record<string, number> = {},
) {
  // Spread over the interval as a channel's calls would be.
  const total = Object.values(calls).reduce((a, b) => a + b, 0);
  const list = Object.entries(calls).flatMap(([a, n]) =>
    Array.from({ length: n }, (_, i) => ({ a, fail: i < (errors[a] ?? 0) })),
  );
  const start = clock.now();
  list.forEach((c, i) => {
    clock.advance(Math.max(0, start + Math.floor((i * 1000) / total) - clock.now()));
    const counter = recorder.endpoint(c.a);
    recorder.picked(counter);
    recorder.callEnded(counter, !c.fail);
  });
  clock.advance(start + 1000 - clock.now());
}

/** The failover recording: p0 (a1, a2) serves 0–3 s, its connections drop at 3 s, p1 (b1) serves 3–6 s. */
function failoverRecording(): string {
  const clock = new VirtualClock();
  const recorder = new FlightRecorder({ clock, label: 'xds:///svc' });
  recorder.picker('CONNECTING', { code: 0, details: '' });
  recorder.update({ config: ROOT_CONFIG, endpoints: [], xdsClusters: [ROUND_ROBIN_CLUSTER] });
  for (const a of [A1, A2]) recorder.subchannelState(a, 'CONNECTING');
  clock.advance(2);
  for (const a of [A1, A2]) recorder.subchannelState(a, 'READY');
  recorder.picker('READY', { code: 0, details: '' });
  clock.advance(998);
  for (let s = 1; s < 3; s++) callsFor(recorder, clock, { [A1]: 50, [A2]: 50 });
  // 3 s: priority 0's backends go away; its connections fail, priority 1 connects.
  for (const a of [A1, A2]) recorder.subchannelState(a, 'IDLE');
  clock.advance(1);
  for (const a of [A1, A2]) recorder.subchannelState(a, 'CONNECTING');
  clock.advance(4);
  for (const a of [A1, A2]) recorder.subchannelState(a, 'TRANSIENT_FAILURE', 'connection refused');
  // The root: priority 0 lost, priority 1 connecting, then serving.
  recorder.picker('CONNECTING', { code: 0, details: '' });
  recorder.subchannelState(B1, 'CONNECTING');
  clock.advance(3);
  recorder.subchannelState(B1, 'READY');
  recorder.picker('READY', { code: 0, details: '' });
  clock.advance(992);
  for (let s = 4; s < 7; s++) callsFor(recorder, clock, { [B1]: 100 });
  return recorder.export();
}

test('replay: the recorded failover happens in the simulated tree at the recorded time (A56), shares within a point each second', () => {
  const report = replayRecording(readRecording(failoverRecording()));
  assert.equal(report.cluster, 'svc');
  const at = (s: number) => report.simulated.steps[s]!;
  const sum = (step: { picks: ReadonlyMap<string, number> }, names: string[]) =>
    names.reduce((a, n) => a + (step.picks.get(n) ?? 0), 0);
  // Seconds 1–2: priority 0 only, evenly; 3: nothing was recorded (the calls of 3–4 s ended after 4 s).
  assert.equal(sum(at(1), [A1]), 50);
  assert.equal(sum(at(2), [A2]), 50);
  assert.equal(sum(at(1), [B1]), 0);
  // From 4 s: priority 1 only.
  for (const s of [4, 5, 6]) assert.equal(sum(at(s), [B1]), 100, `second ${s}`);
  assert.equal(at(6).state, 'READY');
  for (const gap of shareGaps(report)) assert.ok(gap.points <= 1, JSON.stringify(gap));
  assert.deepEqual(report.recordedStates, ['CONNECTING', 'READY', 'CONNECTING', 'READY']);
  assert.deepEqual(report.simulatedStates, report.recordedStates);
});

test('replay --config: the same inputs under ring_hash still fail over, with the ring spreading priority 0', () => {
  const report = replayRecording(readRecording(failoverRecording()), {
    config: [{ ring_hash_experimental: { minRingSize: 1024, maxRingSize: 1024 } }],
  });
  // The channel's root runs as recorded; the cluster's endpoint-picking policy is the one given.
  assert.match(JSON.stringify(report.config), /"cds_experimental":\{"cluster":"svc"\}/);
  assert.match(JSON.stringify(report.clusterPolicies), /^\{"svc":\[\{"ring_hash_experimental"/);
  const step = report.simulated.steps[1]!;
  const a1 = step.picks.get(A1) ?? 0;
  const a2 = step.picks.get(A2) ?? 0;
  // A42: ring_hash connects an endpoint on its first pick, which queues (the recorded connection is used); the
  // call is picked again with the picker the connection brings, as a channel picks it again.
  assert.equal(a1 + a2, 100);
  assert.ok(step.queued <= 2);
  assert.ok(a1 > 20 && a2 > 20, `both endpoints on the ring: ${a1} / ${a2}`);
  assert.equal(report.simulated.steps[5]!.picks.get(B1), 100);
});

/**
 * A recording of a1 and a2 READY for a second under A50 failure-percentage ejection with these
 * `threshold` and `requestVolume` (checked every second, at most one of the two ejected).
 */
function ejectingRecording(threshold: number, requestVolume: number) {
  const clock = new VirtualClock();
  const recorder = new FlightRecorder({ clock, intervalMs: 1000 });
  const cluster: RecordedCluster = {
    ...ROUND_ROBIN_CLUSTER,
    outlierDetection: {
      interval: '1s',
      baseEjectionTime: '30s',
      maxEjectionPercent: 50,
      failurePercentageEjection: { threshold, enforcementPercentage: 100, minimumHosts: 2, requestVolume },
    },
  };
  recorder.update({ config: ROOT_CONFIG, endpoints: [], xdsClusters: [cluster] });
  for (const a of [A1, A2]) recorder.subchannelState(a, 'READY');
  clock.advance(1000);
  return { clock, recorder };
}

test('replay: a backend failing every call is ejected by the simulated outlier detection (A50), not by the script', () => {
  const { clock, recorder } = ejectingRecording(50, 10);
  callsFor(recorder, clock, { [A1]: 50, [A2]: 50 }, { [A2]: 50 });
  // After the ejection the channel sent a2 nothing.
  callsFor(recorder, clock, { [A1]: 100 });
  callsFor(recorder, clock, { [A1]: 100 });
  const report = replayRecording(readRecording(recorder.export()));
  const second = (s: number) => report.simulated.steps[s]!;
  assert.equal(second(1).picks.get(A2), 50, 'a2 served until the interval ended');
  assert.equal(second(1).errors, 50, 'every call of a2 failed, as recorded');
  assert.equal(second(2).picks.get(A2) ?? 0, 0, 'ejected at 2 s by the simulated outlier_detection');
  assert.equal(second(3).picks.get(A1), 100);
});

test('replay: a plain (non-xDS) recording replays its root config; a recorded resolver error is replayed as one', () => {
  const clock = new VirtualClock();
  const recorder = new FlightRecorder({ clock });
  recorder.update({ config: { round_robin: {} }, endpoints: [{ addresses: [A1] }, { addresses: [A2] }] });
  for (const a of [A1, A2]) recorder.subchannelState(a, 'READY');
  clock.advance(1000);
  callsFor(recorder, clock, { [A1]: 30, [A2]: 30 });
  recorder.subchannelState(A2, 'TRANSIENT_FAILURE', 'refused');
  callsFor(recorder, clock, { [A1]: 60 });
  const report = replayRecording(readRecording(recorder.export()));
  assert.equal(report.cluster, undefined);
  assert.equal(report.simulated.steps[1]!.picks.get(A2), 30);
  assert.equal(report.simulated.steps[2]!.picks.get(A1), 60);
  assert.deepEqual(
    shareGaps(report).filter((g) => g.points > 0),
    [],
  );
});

test('lbtree simulate --replay prints recorded beside simulated, --html charts both; --config replays under ring_hash; a truncated or newer file is refused by line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lbtree-replay-'));
  const file = join(dir, 'failover.lbrec');
  const text = failoverRecording();
  writeFileSync(file, text);
  const ring = join(dir, 'ring.yaml');
  writeFileSync(ring, '- ring_hash_experimental: { minRingSize: 1024, maxRingSize: 1024 }\n');
  const run = (...args: string[]) =>
    spawnSync(process.execPath, nodeScript('src/cli/main.ts', 'simulate', ...args), {
      encoding: 'utf8',
      timeout: 60_000,
    });
  const plain = run('--replay', file);
  assert.equal(plain.status, 0, plain.stderr);
  assert.match(plain.stdout, /xDS cluster: svc/);
  assert.match(plain.stdout, /^ {6}4s {2}recorded {2}READY .*priority 1=100%/m);
  assert.match(plain.stdout, /^ {10}simulated READY .*priority 1=100%/m);
  assert.match(
    plain.stdout,
    /recorded: {2}CONNECTING → READY → CONNECTING → READY\n {2}simulated: CONNECTING → READY → CONNECTING → READY\n {2}the same order/,
  );
  const page = join(dir, 'replay.html');
  const charted = run('--replay', file, '--html', page);
  assert.equal(charted.status, 0, charted.stderr);
  const html = readFileSync(page, 'utf8');
  assert.match(
    html,
    /<h1>Recorded<\/h1>.*aria-label="channel state".*<h1>Simulated<\/h1>.*aria-label="share by priority"/s,
  );
  assert.doesNotMatch(html, /<script|src="http/);
  const other = run('--replay', file, '--config', ring);
  assert.equal(other.status, 0, other.stderr);
  assert.match(other.stdout, /under .*ring\.yaml/);
  assert.match(other.stdout, /cluster svc: endpoint-picking policy \[\{"ring_hash_experimental"/);
  // Cut after the header and three events: no end line.
  const truncated = join(dir, 'truncated.lbrec');
  writeFileSync(truncated, `${text.split('\n').slice(0, 4).join('\n')}\n`);
  const cut = run('--replay', truncated);
  assert.equal(cut.status, 1);
  assert.equal(
    cut.stderr,
    `lbtree simulate: ${truncated}: line 5: the file has no end line after its 3 events: it is truncated\n`,
  );
  const newer = join(dir, 'newer.lbrec');
  writeFileSync(newer, text.replace('"version":1', '"version":7'));
  const refused = run('--replay', newer);
  assert.equal(refused.status, 1);
  assert.match(
    refused.stderr,
    /line 1: version: the file is format version 7; this lbtree reads version 2 and older/,
  );
  const mixed = run('--replay', file, '--scenario', 'x.yaml');
  assert.notEqual(mixed.status, 0);
  assert.match(mixed.stderr, /simulate --replay takes no --scenario/);
});

test('replay --config: a config the registry rejects is refused with its JSON path, before anything runs', () => {
  const recording = readRecording(failoverRecording());
  assert.throws(
    () => replayRecording(recording, { config: [{ ring_hash_experimental: { minRingSize: 0 } }] }),
    (e: Error) =>
      e.name === 'Error' &&
      /^the tree rejected the given config: .*ring_hash_experimental\.minRingSize/.test(e.message),
  );
  assert.throws(
    () => replayRecording(recording, { cluster: 'other' }),
    /^Error: the recording has no cluster "other" \(clusters: svc\)$/,
  );
});

test('replay: an endpoint replayed with fewer calls than recorded fails round(rate × calls) of them, so an A50 ejection falls in the same interval', () => {
  // A50: ejected when more than 30 % of at least 4 calls failed.
  const { clock, recorder } = ejectingRecording(30, 4);
  // The channel sent a2 5 of 8 calls, 2 of them failed (40 %): ejected. The replay's round_robin sends it 4.
  callsFor(recorder, clock, { [A1]: 3, [A2]: 5 }, { [A2]: 2 });
  callsFor(recorder, clock, { [A1]: 8 });
  const report = replayRecording(readRecording(recorder.export()));
  const second = (s: number) => report.simulated.steps[s]!;
  assert.equal(second(1).picks.get(A2), 4);
  // round(0.4 × 4) = 2 of 4 (50 % > 30 %); floor would fail 1 of 4 (25 %) and keep a2 a second longer.
  assert.equal(second(1).errors, 2);
  assert.equal(second(2).picks.get(A2) ?? 0, 0, 'ejected at 2 s, as recorded');
});
