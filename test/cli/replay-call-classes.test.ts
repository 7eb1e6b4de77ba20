// `lbtree simulate --replay` of an xDS channel's calls by class: the recording keeps the routes (their matches
// and hash policies) and each interval's calls by route, cluster, path and routed-on headers; the replay routes
// each call again through lbtree's config selector over the recorded routes (A28: headers, case-insensitive
// paths, runtime_fraction) and hashes it by the route's hash policies (A42: header, filter_state
// io.grpc.channel_id), so a ring_hash tree places it where the channel's did. Recordings are written through
// FlightRecorder on the simulator's clock and read back from their file text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { replayRecording } from '../../src/cli/simulate/replay.js';
import { replayTextReport, shareGaps } from '../../src/cli/simulate/replay-report.js';
import { xxh64 } from '../../src/hash/index.js';
import {
  FlightRecorder,
  type RecordedCluster,
  type RecordedHashPolicy,
  type RecordedRoute,
  type RecordedRouteMatch,
  readRecording,
} from '../../src/recorder/index.js';
import { VirtualClock } from '../../src/sim/index.js';

const [A1, A2, A3, B1] = ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80', '10.1.0.1:80'];
const ROUND_ROBIN = [{ xds_wrr_locality_experimental: { childPolicy: [{ round_robin: {} }] } }];
/** One ring entry per endpoint (min = max = 3 for three endpoints of equal weight): the ring is their order. */
const RING_OF_THREE = [{ ring_hash_experimental: { minRingSize: 3, maxRingSize: 3 } }];

function cluster(name: string, addresses: string[], lbPolicy: unknown = ROUND_ROBIN): RecordedCluster {
  return {
    name,
    kind: 'eds',
    lbPolicy,
    maxRequests: 1024,
    overrideHostStatus: ['UNKNOWN', 'HEALTHY'],
    assignment: {
      priorities: [
        [
          {
            locality: { region: 'r', zone: name, subZone: '' },
            weight: 1,
            endpoints: addresses.map((a) => ({
              addresses: [a],
              weight: 1,
              healthStatus: 'HEALTHY' as const,
            })),
          },
        ],
      ],
      drops: [],
    },
  };
}

function rootConfig(...clusters: string[]) {
  return {
    xds_cluster_manager_experimental: {
      children: Object.fromEntries(
        clusters.map((c) => [`cluster:${c}`, { childPolicy: [{ cds_experimental: { cluster: c } }] }]),
      ),
    },
  };
}

const prefix = (value: string, extra: Partial<RecordedRouteMatch> = {}): RecordedRouteMatch => ({
  path: { kind: 'prefix', value, caseSensitive: true },
  headers: [],
  ...extra,
});

const route = (
  matcher: RecordedRouteMatch,
  clusterName: string,
  hashPolicies?: RecordedHashPolicy[],
): RecordedRoute => ({
  match: 'described for people',
  matcher,
  cluster: clusterName,
  ...(hashPolicies ? { hashPolicies } : {}),
});

/** Calls of one class in a second: `n` picks of `address` under route `route` to `cluster`. */
interface ClassCalls {
  readonly address: string;
  readonly route: number;
  readonly cluster: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly n: number;
}

/** One second of calls, the classes interleaved, each picked and ended as the channel's adapter counts it. */
function second(recorder: FlightRecorder, clock: VirtualClock, classes: ClassCalls[]) {
  const list: ClassCalls[] = [];
  const left = classes.map((c) => c.n);
  while (left.some((n) => n > 0))
    classes.forEach((c, i) => {
      if (left[i]! > 0) {
        left[i]!--;
        list.push(c);
      }
    });
  const start = clock.now();
  list.forEach((c, i) => {
    clock.advance(Math.max(0, start + Math.floor((i * 1000) / list.length) - clock.now()));
    const key = String(c.route);
    const child = `cluster:${c.cluster}`;
    recorder.routePicked(key, child);
    recorder.callClassPicked(
      key,
      child,
      c.path,
      recorder.callClassHeaders.map((n) => c.headers?.[n]),
    );
    const counter = recorder.endpoint(c.address);
    recorder.picked(counter);
    recorder.callEnded(counter, true);
  });
  clock.advance(start + 1000 - clock.now());
}

function start(recorder: FlightRecorder, clock: VirtualClock, addresses: string[]) {
  recorder.picker('CONNECTING', { code: 0, details: '' });
  for (const a of addresses) recorder.subchannelState(a, 'CONNECTING');
  clock.advance(2);
  for (const a of addresses) recorder.subchannelState(a, 'READY');
  recorder.picker('READY', { code: 0, details: '' });
  clock.advance(998);
}

function recording(
  routes: RecordedRoute[],
  clusters: RecordedCluster[],
  seconds: ClassCalls[][],
  options: { maxCallClasses?: number; channelId?: string } = {},
) {
  const clock = new VirtualClock();
  const recorder = new FlightRecorder({
    clock,
    ...(options.maxCallClasses !== undefined ? { maxCallClasses: options.maxCallClasses } : {}),
  });
  recorder.update({
    config: rootConfig(...clusters.map((c) => c.name)),
    endpoints: [],
    xdsClusters: clusters,
    xdsRoutes: routes,
    ...(options.channelId !== undefined ? { xdsChannelId: options.channelId } : {}),
  });
  start(
    recorder,
    clock,
    clusters.flatMap((c) =>
      c.assignment!.priorities.flat().flatMap((l) => l.endpoints.map((e) => e.addresses[0]!)),
    ),
  );
  for (const s of seconds) second(recorder, clock, s);
  return readRecording(recorder.export());
}

/** The endpoint a ring of one entry per endpoint gives hash `h` (A42: the first entry at or after it). */
function ringEndpoint(h: bigint, addresses: string[]): string {
  const entries = addresses.map((a) => ({ a, at: xxh64(`${a}_0`) })).sort((x, y) => (x.at < y.at ? -1 : 1));
  return (entries.find((e) => e.at >= h) ?? entries[0]!).a;
}

const picksAt = (report: ReturnType<typeof replayRecording>, side: 'recorded' | 'simulated', s: number) =>
  Object.fromEntries([...report[side].steps[s]!.picks].filter(([, n]) => n > 0));

/**
 * Step `s` of the simulated tree placed its calls as `expected` says. A ring_hash endpoint connects on its first
 * pick (A42), which queues until it is READY; the call is then picked again, in the same step.
 */
function assertPlaced(
  report: ReturnType<typeof replayRecording>,
  s: number,
  expected: Record<string, number>,
  message = `second ${s}`,
) {
  assert.deepEqual(picksAt(report, 'simulated', s), expected, message);
  assert.ok(report.simulated.steps[s]!.queued <= Object.keys(expected).length, message);
}

const GOLD_ROUTES = (ignoreCase: boolean) => [
  route(
    prefix('/', {
      headers: [{ name: 'x-tier', invert: false, kind: 'exact', value: 'gold', ignoreCase }],
    }),
    'gold',
  ),
  route(prefix('/'), 'main'),
];

test('A28 header matcher: each recorded class is matched again to its recorded route, and its calls go to that cluster', () => {
  const rec = recording(
    GOLD_ROUTES(false),
    [cluster('gold', [B1]), cluster('main', [A1, A2])],
    [1, 2, 3].map(() => [
      { address: B1, route: 0, cluster: 'gold', path: '/svc/Get', headers: { 'x-tier': 'gold' }, n: 30 },
      { address: A1, route: 1, cluster: 'main', path: '/svc/Get', headers: { 'x-tier': 'silver' }, n: 35 },
      { address: A2, route: 1, cluster: 'main', path: '/svc/Get', n: 35 },
    ]),
  );
  const report = replayRecording(rec);
  assert.deepEqual(report.routing, { classified: 300, sameRoute: 300, unclassified: 0 });
  for (const s of [1, 2, 3])
    assert.deepEqual(picksAt(report, 'simulated', s), { [B1]: 30, [A1]: 35, [A2]: 35 });
  for (const g of shareGaps(report)) assert.ok(g.points <= 1, JSON.stringify(g));
  assert.match(
    replayTextReport(report),
    /300 with their recorded path and headers: 300 matched their recorded route/,
  );
});

test('A28 header matcher, both sides of ignore_case: "GOLD" matches an ignore_case matcher, not a case-sensitive one (the call keeps its recorded route)', () => {
  const seconds = [1, 2].map(() => [
    { address: B1, route: 0, cluster: 'gold', path: '/svc/Get', headers: { 'x-tier': 'GOLD' }, n: 20 },
    { address: A1, route: 1, cluster: 'main', path: '/svc/Get', n: 80 },
  ]);
  const clusters = [cluster('gold', [B1]), cluster('main', [A1])];
  const insensitive = replayRecording(recording(GOLD_ROUTES(true), clusters, seconds));
  assert.deepEqual(insensitive.routing, { classified: 200, sameRoute: 200, unclassified: 0 });
  const sensitive = replayRecording(recording(GOLD_ROUTES(false), clusters, seconds));
  assert.deepEqual(sensitive.routing, { classified: 200, sameRoute: 160, unclassified: 0 });
  // What the channel's selector chose is the tree's input: the calls still go to gold, as recorded.
  assert.deepEqual(picksAt(sensitive, 'simulated', 1), { [B1]: 20, [A1]: 80 });
  assert.match(replayTextReport(sensitive), /160 matched their recorded route, 40 another/);
});

test('A28 case_sensitive false: a path prefix matches in any case; case_sensitive true does not', () => {
  const routes = (caseSensitive: boolean) => [
    route({ path: { kind: 'prefix', value: '/SVC.a/', caseSensitive }, headers: [] }, 'a'),
    route(prefix('/'), 'b'),
  ];
  const seconds = [[{ address: A1, route: 0, cluster: 'a', path: '/svc.A/Get', n: 10 }]];
  const clusters = [cluster('a', [A1]), cluster('b', [B1])];
  assert.equal(replayRecording(recording(routes(false), clusters, seconds)).routing?.sameRoute, 10);
  assert.equal(replayRecording(recording(routes(true), clusters, seconds)).routing?.sameRoute, 0);
});

test('A28 runtime_fraction: the selector draws again (about half of 50 % match their route; 0 % and 100 % exactly), the recorded clusters stay', () => {
  const routes = (ppm: number) => [
    route(prefix('/', { runtimeFractionPerMillion: ppm }), 'a'),
    route(prefix('/'), 'b'),
  ];
  const clusters = [cluster('a', [A1]), cluster('b', [B1])];
  const seconds = [1, 2].map(() => [
    { address: A1, route: 0, cluster: 'a', path: '/x/Y', n: 500 },
    { address: B1, route: 1, cluster: 'b', path: '/x/Y', n: 500 },
  ]);
  const half = replayRecording(recording(routes(500_000), clusters, seconds));
  assert.equal(half.routing?.classified, 2000);
  const same = half.routing!.sameRoute;
  assert.ok(same > 900 && same < 1100, `about half: ${same}`);
  for (const s of [1, 2]) assert.deepEqual(picksAt(half, 'simulated', s), { [A1]: 500, [B1]: 500 });
  // Every call matches route 0 at 100 %, none at 0 %: the recorded route-1 calls, the route-0 ones.
  assert.equal(replayRecording(recording(routes(1_000_000), clusters, seconds)).routing?.sameRoute, 1000);
  assert.equal(replayRecording(recording(routes(0), clusters, seconds)).routing?.sameRoute, 1000);
});

const USER_HASH: RecordedHashPolicy[] = [{ type: 'header', headerName: 'x-user' }];

test('A42 header hash policy on a ring_hash cluster: each user’s calls land on the ring entry of XXH64(user), as the channel’s did', () => {
  const users = ['alice', 'bob', 'carol', 'dave'];
  const ring = [A1, A2, A3];
  const expected = new Map(users.map((u) => [u, ringEndpoint(xxh64(u), ring)]));
  const rec = recording(
    [route(prefix('/'), 'main', USER_HASH)],
    [cluster('main', ring, RING_OF_THREE)],
    // Second s: only users[s-1] calls (10 calls).
    users.map((u) => [
      {
        address: expected.get(u)!,
        route: 0,
        cluster: 'main',
        path: '/svc/Get',
        headers: { 'x-user': u },
        n: 10,
      },
    ]),
  );
  const report = replayRecording(rec);
  assert.deepEqual(report.routing, { classified: 40, sameRoute: 40, unclassified: 0 });
  // The ring spreads the users: they do not all share one endpoint (else this test proves little).
  assert.ok(new Set(expected.values()).size > 1, JSON.stringify([...expected]));
  users.forEach((u, i) => {
    assertPlaced(report, i + 1, { [expected.get(u)!]: 10 }, u);
  });
  for (const g of shareGaps(report)) assert.equal(g.points, 0, JSON.stringify(g));
  // The same calls recorded by route only (no classes): random hashes, spread over the ring.
  const unclassified = replayRecording(
    recording(
      [route(prefix('/'), 'main', USER_HASH)],
      [cluster('main', ring, RING_OF_THREE)],
      [[{ address: A1, route: 0, cluster: 'main', path: '/svc/Get', headers: { 'x-user': 'alice' }, n: 60 }]],
      { maxCallClasses: 0 },
    ),
  );
  assert.deepEqual(unclassified.routing, { classified: 0, sameRoute: 0, unclassified: 60 });
  assert.ok(Object.keys(picksAt(unclassified, 'simulated', 1)).length > 1);
  assert.match(replayTextReport(unclassified), /60 recorded by route only .*: a random request hash/);
});

test('--config ring_hash on a round_robin recording: the recorded users’ hashes place each user on one endpoint', () => {
  const ring = [A1, A2, A3];
  const rec = recording(
    [route(prefix('/'), 'main', USER_HASH)],
    [cluster('main', ring)],
    [1, 2, 3].map(() => [
      // round_robin spread both users over the three endpoints.
      { address: A1, route: 0, cluster: 'main', path: '/svc/Get', headers: { 'x-user': 'alice' }, n: 30 },
      { address: A2, route: 0, cluster: 'main', path: '/svc/Get', headers: { 'x-user': 'alice' }, n: 30 },
      { address: A3, route: 0, cluster: 'main', path: '/svc/Get', headers: { 'x-user': 'bob' }, n: 30 },
    ]),
  );
  const report = replayRecording(rec, { config: RING_OF_THREE });
  const alice = ringEndpoint(xxh64('alice'), ring);
  const bob = ringEndpoint(xxh64('bob'), ring);
  for (const s of [1, 2, 3]) {
    const want: Record<string, number> = { [alice]: 60 };
    want[bob] = (want[bob] ?? 0) + 30;
    assertPlaced(report, s, want);
  }
});

test('A42 filter_state io.grpc.channel_id: every call hashes to the recorded channel id', () => {
  const ring = [A1, A2, A3];
  for (const id of [xxh64(`${A1}_0`), xxh64(`${A2}_0`) + 1n, 2n ** 64n - 1n]) {
    const report = replayRecording(
      recording(
        [route(prefix('/'), 'main', [{ type: 'filter_state', key: 'io.grpc.channel_id' }])],
        [cluster('main', ring, RING_OF_THREE)],
        [[{ address: A1, route: 0, cluster: 'main', path: '/svc/Get', n: 20 }]],
        { channelId: id.toString() },
      ),
    );
    assertPlaced(report, 1, { [ringEndpoint(id, ring)]: 20 }, `channel id ${id}`);
  }
});

test('a recorded route whose regex does not compile is refused by the replay, naming the route', () => {
  const rec = recording(
    [route({ path: { kind: 'safe_regex', regex: '/svc/(' }, headers: [] }, 'main')],
    [cluster('main', [A1])],
    [],
  );
  assert.throws(() => replayRecording(rec), /xdsRoutes\[0\]\.matcher\.path\.regex: .*RE2/);
});

test('--xds-cluster NAME: the calls the routes sent to that one cluster keep their classes, so their hashes', () => {
  const ring = [A1, A2, A3];
  const alice = ringEndpoint(xxh64('alice'), ring);
  const rec = recording(
    [...GOLD_ROUTES(false).slice(0, 1), route(prefix('/'), 'main', USER_HASH)],
    [cluster('gold', [B1]), cluster('main', ring, RING_OF_THREE)],
    [
      [
        { address: B1, route: 0, cluster: 'gold', path: '/svc/Get', headers: { 'x-tier': 'gold' }, n: 10 },
        {
          address: alice,
          route: 1,
          cluster: 'main',
          path: '/svc/Get',
          headers: { 'x-user': 'alice' },
          n: 20,
        },
      ],
    ],
  );
  const report = replayRecording(rec, { cluster: 'main' });
  assert.deepEqual(report.routing, { classified: 20, sameRoute: 20, unclassified: 0 });
  assertPlaced(report, 1, { [alice]: 20 });
});
