// The flight recorder's ring, intervals and file format (docs/recording-format.md), and the reader's refusals.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  FlightRecorder,
  RECORDING_VERSION,
  RecordingError,
  readRecording,
} from '../../src/recorder/index.js';
import { VirtualClock } from '../../src/sim/index.js';

const OK = { code: 0, details: '' };

test('the ring keeps the latest maxEvents events; the last update and per-address states it dropped are kept aside', () => {
  const clock = new VirtualClock();
  const recorder = new FlightRecorder({ clock, maxEvents: 3 });
  recorder.update({ config: { round_robin: {} }, endpoints: [{ addresses: ['10.0.0.1:80'] }] });
  clock.advance(1);
  recorder.subchannelState('10.0.0.1:80', 'CONNECTING');
  clock.advance(1);
  recorder.subchannelState('10.0.0.1:80', 'READY');
  assert.equal(recorder.size, 3);
  assert.equal(recorder.droppedEvents, 0);
  // A fourth event drops the update: 3 in the ring, 1 dropped.
  clock.advance(1);
  recorder.picker('READY', OK);
  assert.equal(recorder.size, 3);
  assert.equal(recorder.droppedEvents, 1);
  for (let i = 0; i < 10; i++) {
    clock.advance(1);
    recorder.picker(i % 2 ? 'READY' : 'CONNECTING', OK);
  }
  assert.equal(recorder.size, 3, 'never more than maxEvents in the ring');
  assert.equal(recorder.droppedEvents, 11);
  const recording = readRecording(recorder.export());
  assert.equal(recording.header.droppedEvents, 11);
  assert.equal(recording.header.maxEvents, 3);
  // The export starts from the kept-aside update and the address's last dropped state, then the ring.
  assert.deepEqual(
    recording.events.map((e) => `${e.type}@${e.at}`),
    ['update@0', 'subchannel@2', 'picker@10', 'picker@11', 'picker@12', 'picker@13'],
  );
});

test('maxEvents 1 keeps one event; 0, fractions and a zero interval are refused with the option named', () => {
  const recorder = new FlightRecorder({ maxEvents: 1 });
  recorder.picker('IDLE', OK);
  recorder.picker('CONNECTING', OK);
  assert.equal(recorder.size, 1);
  assert.throws(() => new FlightRecorder({ maxEvents: 0 }), /maxEvents: expected a positive integer, got 0/);
  assert.throws(() => new FlightRecorder({ maxEvents: 1.5 }), /maxEvents/);
  assert.throws(
    () => new FlightRecorder({ intervalMs: 0 }),
    /intervalMs: expected a positive integer, got 0/,
  );
});

test('calls are counted per endpoint and interval: picks, ended calls, errors, ORCA reports and their mean utilization', () => {
  const clock = new VirtualClock();
  const recorder = new FlightRecorder({ clock, intervalMs: 1000 });
  const a = recorder.endpoint('10.0.0.1:80');
  const b = recorder.endpoint('10.0.0.2:80');
  assert.equal(recorder.endpoint('10.0.0.1:80'), a, 'one counter object per address');
  recorder.picked(a);
  recorder.picked(a);
  recorder.picked(a);
  recorder.callEnded(a, true, 0.2);
  recorder.callEnded(a, false, 0.4);
  recorder.callEnded(b, true);
  recorder.pickFailed(false);
  clock.advance(999);
  recorder.callEnded(b, false);
  // 1000 ms: the interval's timer closes it and opens the next; one with nothing counted closes the last.
  clock.advance(1);
  recorder.pickFailed(true);
  clock.advance(2500);
  const recording = readRecording(recorder.export());
  const calls = recording.events.filter((e) => e.type === 'calls');
  assert.equal(calls.length, 2);
  assert.deepEqual(calls[0], {
    type: 'calls',
    at: 0,
    durationMs: 1000,
    endpoints: [
      {
        address: '10.0.0.1:80',
        picks: 3,
        calls: 2,
        errors: 1,
        orcaReports: 2,
        cpuUtilization: 0.30000000000000004,
      },
      { address: '10.0.0.2:80', picks: 0, calls: 2, errors: 1, orcaReports: 0, cpuUtilization: 0 },
    ],
    failedPicks: 1,
    droppedPicks: 0,
  });
  assert.deepEqual(calls[1], {
    type: 'calls',
    at: 1000,
    durationMs: 1000,
    endpoints: [],
    failedPicks: 0,
    droppedPicks: 1,
  });
  assert.equal(recording.endAt, 3500);
});

test('format round trip: what export writes, readRecording reads back as the same events', () => {
  const clock = new VirtualClock();
  const recorder = new FlightRecorder({ clock, label: 'xds:///svc' });
  recorder.update({
    config: { round_robin: {} },
    endpoints: [{ addresses: ['10.0.0.1:80', '[::1]:80'], attributes: { weight: 3, locality: 'z' } }],
    settings: { 'grpc.priority_failover_timeout_ms': 5000 },
  });
  recorder.subchannelState('10.0.0.1:80', 'TRANSIENT_FAILURE', 'connection refused');
  recorder.subchannelHealth('10.0.0.1:80', false);
  recorder.picker('TRANSIENT_FAILURE', { code: 14, details: 'no ready endpoint' });
  recorder.callEnded(recorder.endpoint('10.0.0.1:80'), true);
  clock.advance(10);
  const text = recorder.export();
  const lines = text.trimEnd().split('\n');
  const header = JSON.parse(lines[0]!);
  assert.equal(header.format, 'lbtree-recording');
  assert.equal(header.version, 1, 'a file without a switch event is written as version 1');
  assert.equal(header.label, 'xds:///svc');
  assert.deepEqual(JSON.parse(lines.at(-1)!), { type: 'end', at: 10, events: 5 });
  const read = readRecording(text);
  assert.deepEqual(read, recorder.snapshot());
  assert.equal(read.events.length, 5);
});

const header = (fields: Record<string, unknown> = {}) =>
  JSON.stringify({
    format: 'lbtree-recording',
    version: 1,
    startedAt: '2026-01-01T00:00:00.000Z',
    intervalMs: 1000,
    maxEvents: 10,
    droppedEvents: 0,
    label: '',
    ...fields,
  });

test('a newer format version is refused, naming both versions', () => {
  assert.equal(RECORDING_VERSION, 2);
  const text = `${header({ version: 3 })}\n{"type":"end","at":0,"events":0}\n`;
  assert.throws(
    () => readRecording(text, 'rec.jsonl'),
    (e: Error) =>
      e instanceof RecordingError &&
      e.message ===
        'rec.jsonl: line 1: version: the file is format version 3; this lbtree reads version 2 and older: upgrade lbtree to replay it',
  );
  // The versions it writes are read.
  for (const version of [1, 2]) {
    assert.equal(
      readRecording(`${header({ version })}\n{"type":"end","at":0,"events":0}\n`).events.length,
      0,
    );
  }
});

test('a root policy switch is a switch event, and makes the file version 2 (a version 1 reader would refuse it)', () => {
  const clock = new VirtualClock();
  const recorder = new FlightRecorder({ clock });
  recorder.update({ config: { lbtree_round_robin: {} }, endpoints: [{ addresses: ['10.0.0.1:80'] }] });
  clock.advance(5);
  recorder.rootSwitch('lbtree_round_robin', 'lbtree_pick_first', 'started');
  recorder.update({ config: { lbtree_pick_first: {} }, endpoints: [{ addresses: ['10.0.0.1:80'] }] });
  clock.advance(5);
  recorder.rootSwitch('lbtree_round_robin', 'lbtree_pick_first', 'done');
  const text = recorder.export();
  assert.equal(JSON.parse(text.split('\n')[0]!).version, 2);
  const read = readRecording(text);
  assert.deepEqual(
    read.events.map((e) => (e.type === 'switch' ? `${e.at} ${e.from} -> ${e.to} ${e.phase}` : e.type)),
    [
      'update',
      '5 lbtree_round_robin -> lbtree_pick_first started',
      'update',
      '10 lbtree_round_robin -> lbtree_pick_first done',
    ],
  );
  assert.throws(
    () =>
      readRecording(
        `${header({ version: 2 })}\n{"type":"switch","at":1,"from":"a","to":"b","phase":"halfway"}\n{"type":"end","at":1,"events":1}\n`,
      ),
    /line 2: phase: expected "started" or "done", got "halfway"/,
  );
});

test('a truncated file is refused: cut mid-line, or with whole lines missing at the end', () => {
  const clock = new VirtualClock();
  const recorder = new FlightRecorder({ clock });
  recorder.picker('CONNECTING', OK);
  recorder.picker('READY', OK);
  const text = recorder.export();
  // Cut in the middle of the third line.
  const cut = text.slice(0, text.indexOf('\n', text.indexOf('\n') + 1) + 10);
  assert.throws(
    () => readRecording(cut, 'f'),
    /^RecordingError: f: line 3: not JSON \(the file ends mid-line: truncated\?\)/,
  );
  // Whole lines, but no end line.
  const withoutEnd = text.trimEnd().split('\n').slice(0, -1).join('\n');
  assert.throws(
    () => readRecording(withoutEnd, 'f'),
    /^RecordingError: f: line 4: the file has no end line after its 2 events: it is truncated$/,
  );
  // An end line whose count says lines are missing.
  const missing = [
    header(),
    JSON.stringify({ type: 'picker', at: 0, state: 'READY', status: OK }),
    '{"type":"end","at":5,"events":2}',
  ].join('\n');
  assert.throws(
    () => readRecording(missing, 'f'),
    /line 3: events: the end line counts 2 events, the file has 1: lines are missing/,
  );
  assert.throws(() => readRecording('', 'f'), /f: line 1: the file is empty/);
});

test('bad fields are named by line and path', () => {
  const end = (n: number) => `{"type":"end","at":9,"events":${n}}`;
  const cases: [string, RegExp][] = [
    [
      `{"format":"other"}\n${end(0)}`,
      /line 1: format: expected "lbtree-recording", got "other": not an lbtree recording/,
    ],
    [
      `${header()}\n{"type":"subchannel","at":1,"address":"a","state":"UP"}\n${end(1)}`,
      /line 2: state: expected a connectivity state/,
    ],
    [
      `${header()}\n{"type":"calls","at":0,"durationMs":1,"endpoints":[{"address":"a","picks":0,"calls":-1,"errors":0,"orcaReports":0,"cpuUtilization":0}],"failedPicks":0,"droppedPicks":0}\n${end(1)}`,
      /line 2: endpoints\[0\]\.calls: expected a count/,
    ],
    [
      `${header()}\n{"type":"update","at":0,"config":{},"endpoints":[{"addresses":[]}]}\n${end(1)}`,
      /line 2: endpoints\[0\]\.addresses: expected at least one address/,
    ],
    [
      `${header()}\n{"type":"noise","at":0}\n${end(1)}`,
      /line 2: type: expected update, switch, subchannel, health, picker, calls, timer or end, got "noise"/,
    ],
    [`${header()}\n[1]\n${end(1)}`, /line 2: expected a JSON object, got \[1\]/],
  ];
  for (const [text, message] of cases) assert.throws(() => readRecording(text), message);
});
