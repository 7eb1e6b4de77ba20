// The flight recorder's call classes (docs/recording-format.md, `calls` events' `callClasses`): per interval,
// an xDS channel's picks by route, cluster, path and the values of the headers its routes match on (A28) or
// hash by (A42), bounded by maxCallClasses per interval; what a replay routes and hashes again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type CallsEvent,
  FlightRecorder,
  type RecordedRoute,
  RecordingError,
  readRecording,
} from '../../src/recorder/index.js';
import { VirtualClock } from '../../src/sim/index.js';

const ROUTES: RecordedRoute[] = [
  {
    match: 'prefix "/", headers x-tier, grpc-tag, trace-bin',
    matcher: {
      path: { kind: 'prefix', value: '/', caseSensitive: true },
      headers: [
        { name: 'x-tier', invert: false, kind: 'exact', value: 'gold', ignoreCase: false },
        { name: 'grpc-tag', invert: false, kind: 'present', present: true },
        { name: 'trace-bin', invert: false, kind: 'present', present: true },
      ],
    },
    cluster: 'gold',
  },
  {
    match: 'prefix "/"',
    matcher: { path: { kind: 'prefix', value: '/', caseSensitive: true }, headers: [] },
    cluster: 'main',
    hashPolicies: [
      { type: 'header', headerName: 'X-User', terminal: false },
      { type: 'header', headerName: 'session-bin' },
      { type: 'filter_state', key: 'io.grpc.channel_id' },
    ],
  },
];

function recorderWithRoutes(options: { maxCallClasses?: number } = {}) {
  const clock = new VirtualClock();
  const recorder = new FlightRecorder({ clock, ...options });
  recorder.update({ config: {}, endpoints: [], xdsClusters: [], xdsRoutes: ROUTES });
  return { clock, recorder };
}

/** A pick as the picker adapter counts it: under its route, then under its class. */
function pick(
  recorder: FlightRecorder,
  route: string,
  child: string,
  path: string,
  headers: Record<string, string> = {},
) {
  recorder.routePicked(route, child);
  recorder.callClassPicked(
    route,
    child,
    path,
    recorder.callClassHeaders.map((n) => headers[n]),
  );
}

const callsEvents = (recorder: FlightRecorder) =>
  readRecording(recorder.export()).events.filter((e): e is CallsEvent => e.type === 'calls');

test('the headers a class records: those the routes match on (A28: not -bin, not grpc-) and hash by (A42: not -bin), lower-cased', () => {
  const { recorder } = recorderWithRoutes();
  assert.deepEqual(recorder.callClassHeaders, ['x-tier', 'x-user']);
  // A later update's routes replace them.
  recorder.update({ config: {}, endpoints: [], xdsRoutes: [{ match: 'prefix "/"', cluster: 'main' }] });
  assert.deepEqual(recorder.callClassHeaders, []);
});

test('picks are counted per interval by route, cluster, path and header values; an absent header is left out; the file reads back the same', () => {
  const { clock, recorder } = recorderWithRoutes();
  for (let i = 0; i < 3; i++) pick(recorder, '0', 'cluster:gold', '/svc.A/Get', { 'x-tier': 'gold' });
  for (let i = 0; i < 2; i++) pick(recorder, '1', 'cluster:main', '/svc.A/Get', { 'x-user': 'alice' });
  pick(recorder, '1', 'cluster:main', '/svc.A/Get', { 'x-user': 'bob', 'x-tier': 'silver' });
  pick(recorder, '1', 'cluster:main', '/svc.A/Get', { 'x-user': 'alice' });
  pick(recorder, '1', 'cluster:main', '/svc.B/Put');
  clock.advance(1000);
  pick(recorder, '1', 'cluster:main', '/svc.A/Get', { 'x-user': 'alice' });
  const [first, second] = callsEvents(recorder);
  assert.deepEqual(first!.routes, [
    { route: 0, child: 'cluster:gold', picks: 3 },
    { route: 1, child: 'cluster:main', picks: 5 },
  ]);
  assert.deepEqual(first!.callClasses, [
    { route: 0, child: 'cluster:gold', path: '/svc.A/Get', headers: { 'x-tier': 'gold' }, picks: 3 },
    {
      route: 1,
      child: 'cluster:main',
      path: '/svc.A/Get',
      headers: { 'x-tier': 'silver', 'x-user': 'bob' },
      picks: 1,
    },
    { route: 1, child: 'cluster:main', path: '/svc.A/Get', headers: { 'x-user': 'alice' }, picks: 3 },
    { route: 1, child: 'cluster:main', path: '/svc.B/Put', headers: {}, picks: 1 },
  ]);
  // The next interval counts its own classes from zero.
  assert.deepEqual(second!.callClasses, [
    { route: 1, child: 'cluster:main', path: '/svc.A/Get', headers: { 'x-user': 'alice' }, picks: 1 },
  ]);
  const recording = readRecording(recorder.export());
  assert.equal(recording.header.maxCallClasses, 64);
  assert.deepEqual(
    (recording.events.find((e) => e.type === 'update') as { xdsRoutes?: unknown }).xdsRoutes,
    ROUTES,
  );
});

test('at most maxCallClasses classes per interval: the 3rd of 3 is kept, the 4th counts under its route only', () => {
  const { clock, recorder } = recorderWithRoutes({ maxCallClasses: 3 });
  for (const user of ['a', 'b', 'c', 'd', 'a', 'd'])
    pick(recorder, '1', 'cluster:main', '/svc/M', { 'x-user': user });
  clock.advance(1000);
  const [calls] = callsEvents(recorder);
  assert.deepEqual(calls!.routes, [{ route: 1, child: 'cluster:main', picks: 6 }]);
  assert.deepEqual(
    calls!.callClasses!.map((c) => [c.headers['x-user'], c.picks]),
    [
      ['a', 2],
      ['b', 1],
      ['c', 1],
    ],
  );
});

test('maxCallClasses 0 records routes only; a negative or fractional bound is refused, naming the option', () => {
  const { clock, recorder } = recorderWithRoutes({ maxCallClasses: 0 });
  pick(recorder, '1', 'cluster:main', '/svc/M', { 'x-user': 'a' });
  clock.advance(1000);
  const [calls] = callsEvents(recorder);
  assert.deepEqual(calls!.routes, [{ route: 1, child: 'cluster:main', picks: 1 }]);
  assert.equal(calls!.callClasses, undefined);
  for (const bad of [-1, 1.5])
    assert.throws(
      () => new FlightRecorder({ maxCallClasses: bad }),
      new RegExp(`^RangeError: FlightRecorder maxCallClasses: expected an integer >= 0, got ${bad}$`),
    );
});

test('a route key that is not an index counts no class (as it counts no route)', () => {
  const { clock, recorder } = recorderWithRoutes();
  pick(recorder, 'x', 'cluster:main', '/svc/M');
  pick(recorder, '1', 'cluster:main', '/svc/M');
  clock.advance(1000);
  const [calls] = callsEvents(recorder);
  assert.deepEqual(calls!.callClasses, [
    { route: 1, child: 'cluster:main', path: '/svc/M', headers: {}, picks: 1 },
  ]);
});

test('the reader names a bad class, route match, hash policy or channel id by line and path', () => {
  const { clock, recorder } = recorderWithRoutes();
  recorder.update({
    config: {},
    endpoints: [],
    xdsClusters: [],
    xdsRoutes: ROUTES,
    xdsChannelId: '18446744073709551615',
  });
  pick(recorder, '1', 'cluster:main', '/svc/M', { 'x-user': 'a' });
  clock.advance(1000);
  const text = recorder.export();
  assert.equal(
    (readRecording(text).events[1] as { xdsChannelId?: string }).xdsChannelId,
    '18446744073709551615',
  );
  const refused = (bad: string, message: RegExp) =>
    assert.throws(
      () => readRecording(bad),
      (e: Error) => e instanceof RecordingError && message.test(e.message),
      message.source,
    );
  assert.ok(text.includes('"headers":{"x-user":"a"}'));
  refused(
    text.replace('"headers":{"x-user":"a"}', '"headers":{"x-user":1}'),
    /line 4: callClasses\[0\]\.headers\.x-user: expected a string, got 1/,
  );
  refused(
    text.replace('"path":"/svc/M",', ''),
    /line 4: callClasses\[0\]\.path: expected a string, got undefined/,
  );
  refused(
    text.replace('"kind":"present","present":true', '"kind":"present","present":"yes"'),
    /line 2: xdsRoutes\[0\]\.matcher\.headers\[1\]\.present: expected true or false, got "yes"/,
  );
  refused(
    text.replace('"kind":"exact"', '"kind":"equals"'),
    /line 2: xdsRoutes\[0\]\.matcher\.headers\[0\]\.kind: expected "exact", "prefix", "suffix", "contains", "safe_regex", "range", "present", got "equals"/,
  );
  refused(
    text.replace('"type":"filter_state"', '"type":"query"'),
    /line 2: xdsRoutes\[1\]\.hashPolicies\[2\]\.type: expected "header", .* got "query"/,
  );
  refused(
    text.replace('"xdsChannelId":"18446744073709551615"', '"xdsChannelId":1.5'),
    /line 3: xdsChannelId: expected an integer as a decimal string, got 1.5/,
  );
});

test('a class keeps a path and header values of up to 256 characters; a longer one counts under its route only', () => {
  const { clock, recorder } = recorderWithRoutes();
  pick(recorder, '1', 'cluster:main', '/svc/M', { 'x-user': 'u'.repeat(256) });
  pick(recorder, '1', 'cluster:main', '/svc/M', { 'x-user': 'u'.repeat(257) });
  pick(recorder, '1', 'cluster:main', `/${'p'.repeat(255)}`);
  pick(recorder, '1', 'cluster:main', `/${'p'.repeat(256)}`);
  clock.advance(1000);
  const [calls] = callsEvents(recorder);
  assert.deepEqual(calls!.routes, [{ route: 1, child: 'cluster:main', picks: 4 }]);
  assert.deepEqual(
    calls!.callClasses!.map((c) => [c.path.length, c.headers['x-user']?.length]),
    [
      [256, undefined],
      [6, 256],
    ],
  );
});
