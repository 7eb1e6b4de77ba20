// Issue 24 §3, replay of route matching and request hashing, end to end: a real xds: channel (lbtree's resolver
// and policies on grpc-js, lbtree's control plane over ADS, real grpc-js backends on loopback) whose first route
// matches a header (A28: x-tier exactly "gold") to a round_robin cluster, and whose second sends the other calls
// to a ring_hash cluster hashed by the x-user header (A42). The channel records while the ring's busiest backend
// stops (ring_hash walks its users on to the next endpoints); the export is read back and replayed: each call's
// recorded path and headers go through lbtree's config selector over the recorded routes, every gold call matches
// the header route again and stays in its cluster, the ring places each user by the hash of its header as the
// channel did, so each second's share per cluster and per endpoint is within 5 points of the recorded one, and
// the root states come in the same order.
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

const h = new LbtreeXdsHarness('lbtree-flight-recorder-routes-e2e');
before(() => h.start(['r1', 'r2', 'r3', 'g1']));
after(() => h.close());

/** Listener → routes (header route first, then the hashed one) → a ring_hash and a round_robin cluster. */
function resources(ring: string[], gold: string[]) {
  const locality = (zone: string, endpoints: string[]) => [{ zone, priority: 0, endpoints }];
  return [
    cp.listener('routed', { rds: 'routed-routes' }),
    {
      '@type': cp.ROUTE_CONFIGURATION_TYPE_URL,
      name: 'routed-routes',
      virtualHosts: [
        {
          name: 'routed',
          domains: ['*'],
          routes: [
            {
              match: { prefix: '', headers: [{ name: 'x-tier', stringMatch: { exact: 'gold' } }] },
              route: { cluster: 'gold' },
            },
            {
              match: { prefix: '' },
              route: { cluster: 'ring', hashPolicy: [{ header: { headerName: 'x-user' } }] },
            },
          ],
        },
      ],
    },
    cp.cluster({ name: 'ring', lbPolicy: 'RING_HASH', ringHash: { minimumRingSize: 1024 } }),
    cp.clusterLoadAssignment('ring', locality('ring', ring)),
    cp.cluster({ name: 'gold' }),
    cp.clusterLoadAssignment('gold', locality('gold', gold)),
  ];
}

test('a recorded channel routing by header (A28) to a round_robin cluster and hashing by header (A42) on a ring_hash cluster replays through the config selector: shares per cluster and endpoint within 5 points each second, states in order', async () => {
  const [r1, r2, r3, g1] = ['r1', 'r2', 'r3', 'g1'].map((n) => h.backend(n)!);
  const ringBackends = [r1!, r2!, r3!];
  h.publish(
    'routed',
    resources(
      ringBackends.map((b) => b.address),
      [g1!.address],
    ),
  );
  const recorder = new FlightRecorder({ label: 'xds:///routed' });
  const client = new BackendClient('xds:///routed', grpc.credentials.createInsecure(), {
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 500,
    [FLIGHT_RECORDER_OPTION]: recorder,
  });
  // One call in five is gold; the others belong to 24 users, 24 classes of the ring's route.
  const load = startLoad(client, {
    concurrency: 16,
    headers: (i): Record<string, string> =>
      i % 5 === 0 ? { 'x-tier': 'gold' } : { 'x-user': `user-${i % 24}` },
  });
  const latest = () => JSON.stringify(load.report.latest.slice(-20));
  let stopped: (typeof ringBackends)[number] | undefined;
  try {
    await until(
      'gold and the ring to serve',
      () => g1!.served >= 100 && load.report.served >= 600,
      30_000,
      latest,
    );
    // 2 s more, then the ring's busiest backend stops: its users move on along the ring. Each phase lasts a
    // span of recorded time (not a wait for behaviour), so at least four seconds are compared.
    const since = Date.now();
    await until('2 s of load', () => Date.now() - since >= 2000, 30_000);
    stopped = ringBackends.reduce((a, b) => (b.served > a.served ? b : a));
    stopped.stop();
    const stoppedAt = Date.now();
    const servedBefore = load.report.served;
    await until(
      'the ring to serve the stopped backend’s users elsewhere, with 2.5 s of load after the stop',
      () => load.report.served - servedBefore >= 600 && Date.now() - stoppedAt >= 2500,
      30_000,
      latest,
    );
  } finally {
    await load.stop();
    client.close();
  }

  // On a failure the message names a copy of the recording: `lbtree simulate --replay FILE` shows it again.
  const replayed = replayExport(recorder, 'routes');
  const { recording, report, text } = replayed;
  assert.equal(recording.header.droppedEvents, 0);
  // What was recorded: both routes with their matches and the ring's hash policy, and the calls by class.
  const update = [...recording.events]
    .reverse()
    .find((e) => e.type === 'update' && e.xdsRoutes !== undefined);
  const routes = update?.type === 'update' ? update.xdsRoutes : undefined;
  assert.deepEqual(routes?.[0]?.matcher?.headers, [
    { name: 'x-tier', invert: false, kind: 'exact', value: 'gold', ignoreCase: false },
  ]);
  assert.deepEqual(routes?.[1]?.hashPolicies, [{ type: 'header', headerName: 'x-user', terminal: false }]);
  assert.match(update?.type === 'update' ? (update.xdsChannelId ?? '') : '', /^\d+$/, 'the channel id (A42)');
  const calls = recording.events.filter((e) => e.type === 'calls');
  const classes = calls.flatMap((c) => c.callClasses ?? []);
  const routed = calls.reduce((a, c) => a + (c.routes ?? []).reduce((b, r) => b + r.picks, 0), 0);
  assert.equal(
    classes.reduce((a, c) => a + c.picks, 0),
    routed,
    'every pick counted in its class (25 classes: under the bound of 64)',
  );
  assert.ok(
    classes.every((c) =>
      c.route === 0
        ? c.child === 'cluster:gold' && c.headers['x-tier'] === 'gold'
        : c.child === 'cluster:ring' && /^user-\d+$/.test(c.headers['x-user'] ?? ''),
    ),
    text,
  );
  // Replayed: every call matched its recorded route again (the gold ones by their header), none without a class.
  assert.deepEqual(report.routing, { classified: routed, sameRoute: routed, unclassified: 0 }, text);
  assert.deepEqual([...new Set(report.endpoints.map((e) => e.cluster))].sort(), ['gold', 'ring']);
  assert.deepEqual(report.simulatedStates, report.recordedStates, `states in the same order\n${text}`);
  const compared = shareGaps(report);
  assert.ok(
    compared.filter((g) => g.dimension === 'endpoint' && Math.min(...g.calls) >= 20).length >= 4,
    `at least four seconds compared\n${text}`,
  );
  // Within 5 points in every second of at least 20 calls (where one call is 5 points). A trailing second of a few
  // calls is not compared: the recording spreads its last interval's counts over it pro rata, while the ring puts
  // each replayed user's calls on one endpoint, so there the two differ by a user's calls (2 of 6 seen once in 26).
  const wide = compared.filter((g) => Math.min(...g.calls) >= 20 && g.points > 5);
  assert.deepEqual(wide, [], `shares within 5 points (or one call) each second\n${text}`);
  // After the stop, the simulated ring sent the stopped backend nothing either, and its users went elsewhere.
  const simulatedStopped = report.simulated.steps.map((s) => s.picks.get(stopped!.address) ?? 0);
  assert.ok(simulatedStopped.some((n) => n > 0) && simulatedStopped.at(-1) === 0, text);
  const largest = Math.max(...compared.map((g) => g.points));
  console.log(
    `largest per-second share gap: ${largest.toFixed(2)} points over ${compared.length} comparisons`,
  );
  replayed.discard();
});
