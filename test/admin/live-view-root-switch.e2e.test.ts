// A channel is one entry for its life (issue 24 §2/§3): a real grpc-js channel whose resolver's service config
// names another root policy. grpc-js builds the new root beside the old one, which serves until the new one
// leaves CONNECTING (its ChildLoadBalancerHandler). Before, during and after the switch the registry and the
// live view list the channel once, under one id; during it the page shows the new tree as pending; the flight
// recording goes on in one file, with the switch as events and none of the pending root's CONNECTING pickers
// (grpc-js does not use them). An unknown id is still a clear 404. Real servers on loopback; the new root is
// held in CONNECTING by a server that accepts TCP connections and never answers; every wait is for a condition.
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { experimental } from '@grpc/grpc-js';
import { type AdminServer, type ChannelSnapshot, startAdminServer } from '../../src/admin/index.js';
import {
  type Backend,
  BackendClient,
  type BackendClientType,
  startBackends,
  whoami,
} from '../../src/cli/loopback-backends.js';
import {
  FLIGHT_RECORDER_OPTION,
  FlightRecorder,
  liveChannels,
  readRecording,
  register,
} from '../../src/grpc-js/index.js';
import type { RecordedEvent } from '../../src/recorder/index.js';

const SCHEME = 'lbtree-switching';

/** What the test resolver reports: addresses and the service config's loadBalancingConfig. */
let result: { addresses: string[]; lbConfig: unknown[] } = { addresses: [], lbConfig: [] };
let listener: experimental.ResolverListener | undefined;

function report(): void {
  const endpoints = result.addresses.map((a) => {
    const [host, port] = a.split(':') as [string, string];
    return { addresses: [{ host, port: Number(port) }] };
  });
  const serviceConfig = { loadBalancingConfig: result.lbConfig, methodConfig: [] };
  listener?.(
    experimental.statusOrFromValue(endpoints),
    {},
    experimental.statusOrFromValue(serviceConfig) as Parameters<experimental.ResolverListener>[2],
    '',
  );
}

/** A resolver whose result (and service config) the test changes: `resolve()` reports the current one. */
class SwitchingResolver implements experimental.Resolver {
  constructor(_target: experimental.GrpcUri, l: experimental.ResolverListener) {
    listener = l;
  }
  updateResolution(): void {
    process.nextTick(report);
  }
  destroy(): void {}
  static getDefaultAuthority(): string {
    return 'localhost';
  }
}

function resolve(addresses: string[], lbConfig: unknown[]): void {
  result = { addresses, lbConfig };
  report();
}

async function snapshot(admin: AdminServer, id: string): Promise<ChannelSnapshot> {
  const response = await fetch(`${admin.url}channels/${id}.json`);
  assert.equal(response.status, 200, `channel ${id} is served`);
  return (await response.json()) as ChannelSnapshot;
}

async function snapshotUntil(
  admin: AdminServer,
  id: string,
  what: string,
  done: (s: ChannelSnapshot) => boolean,
): Promise<ChannelSnapshot> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const s = await snapshot(admin, id);
    if (done(s)) return s;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify({ ...s, metrics: undefined })}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The channel list, as the registry and the live view's JSON both have it: ids of entries with `recorder`. */
async function listedIds(admin: AdminServer, recorder: FlightRecorder): Promise<string[]> {
  const inRegistry = liveChannels
    .list()
    .filter((c) => c.recorder === recorder)
    .map((c) => c.id);
  const json = (await (await fetch(`${admin.url}channels.json`)).json()) as { channels: { id: string }[] };
  assert.deepEqual(
    json.channels.map((c) => c.id),
    liveChannels.list().map((c) => c.id),
    'the live view lists what the registry has',
  );
  return inRegistry;
}

describe('a grpc-js channel switching its root policy', () => {
  let backends: Backend[];
  let hanging: Server;
  const held: Socket[] = [];
  let admin: AdminServer;
  let client: BackendClientType | undefined;
  before(async () => {
    register();
    experimental.registerResolver(SCHEME, SwitchingResolver);
    backends = await startBackends(['s1', 's2']);
    hanging = createServer((socket) => held.push(socket));
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    admin = await startAdminServer({ port: 0 });
  });
  after(async () => {
    client?.close();
    for (const b of backends) b.stop();
    for (const s of held) s.destroy();
    hanging.close();
    await admin.close();
  });

  test('one entry before, during and after; the pending tree shown during; one recording with the switch in it', async () => {
    const [s1, s2] = backends as [Backend, Backend];
    const hangingAddress = `127.0.0.1:${(hanging.address() as { port: number }).port}`;
    result = { addresses: [s1.address, s2.address], lbConfig: [{ lbtree_round_robin: {} }] };
    const recorder = new FlightRecorder({ label: 'switching' });
    client = new BackendClient(
      `${SCHEME}:///svc`,
      (await import('@grpc/grpc-js')).credentials.createInsecure(),
      {
        [FLIGHT_RECORDER_OPTION]: recorder,
      },
    );
    const served = new Set<string>();
    for (let i = 0; i < 20 && served.size < 2; i++)
      served.add(await whoami(client, { waitForReady: true, deadlineMs: 10_000 }));
    assert.deepEqual([...served].sort(), ['s1', 's2'], 'round_robin serves both');

    // Before: one entry.
    const before = await listedIds(admin, recorder);
    assert.equal(before.length, 1);
    const id = before[0]!;
    const serving = await snapshot(admin, id);
    assert.match(serving.policy ?? '', /round_robin/);
    assert.equal(serving.pending, null);

    // During: the new root (pick_first) connects to a server that never answers, so it stays CONNECTING and
    // grpc-js keeps the old root serving.
    resolve([hangingAddress], [{ lbtree_pick_first: {} }]);
    const during = await snapshotUntil(admin, id, 'the pick_first root pending', (s) => s.pending !== null);
    assert.match(during.policy ?? '', /round_robin/, 'the old root still serves');
    assert.equal(during.state, 'READY');
    assert.match(during.pending?.policy ?? '', /pick_first/);
    assert.equal(during.pending?.state, 'CONNECTING');
    assert.deepEqual(await listedIds(admin, recorder), [id], 'one entry during the switch');
    const servedDuring = new Set<string>();
    for (let i = 0; i < 20 && servedDuring.size < 2; i++)
      servedDuring.add(await whoami(client, { deadlineMs: 5000 }));
    assert.deepEqual([...servedDuring].sort(), ['s1', 's2'], 'round_robin still serves both');

    // After: the new root gets a server that answers, goes READY, and grpc-js switches to it.
    resolve([s2.address], [{ lbtree_pick_first: {} }]);
    const afterSwitch = await snapshotUntil(
      admin,
      id,
      'pick_first serving',
      (s) => s.pending === null && /pick_first/.test(s.policy ?? ''),
    );
    assert.equal(afterSwitch.state, 'READY');
    assert.deepEqual(await listedIds(admin, recorder), [id], 'one entry after the switch, the same id');
    for (let i = 0; i < 5; i++) assert.equal(await whoami(client, { deadlineMs: 5000 }), 's2');

    // An unknown id is still a clear 404 naming it and the live channels.
    const unknown = await fetch(`${admin.url}channels/9999.json`);
    assert.equal(unknown.status, 404);
    assert.deepEqual(await unknown.json(), {
      error: `lbtree admin: no channel with id "9999" (live channels: ${liveChannels
        .list()
        .map((c) => c.id)
        .join(', ')})`,
    });

    // One recording, downloaded from the live view: the events before and after the switch, in order.
    const download = await fetch(`${admin.url}channels/${id}/recording.lbrec`);
    assert.equal(download.status, 200);
    const recording = readRecording(await download.text());
    assert.equal(recording.header.version, 2, 'a file with a switch event is version 2');
    assert.equal(recording.header.label, 'switching');
    const events = recording.events;
    const index = (what: string, found: (e: RecordedEvent) => boolean, from = 0): number => {
      const at = events.findIndex((e, i) => i >= from && found(e));
      assert.ok(at >= 0, `${what} is recorded: ${JSON.stringify(events.map((e) => e.type))}`);
      return at;
    };
    const configOf = (e: RecordedEvent) =>
      e.type === 'update' ? Object.keys(e.config as object)[0] : undefined;
    const firstUpdate = index('the round_robin update', (e) => configOf(e) === 'lbtree_round_robin');
    const callsBefore = index('calls before the switch', (e) => e.type === 'calls', firstUpdate);
    const started = index(
      'the switch started',
      (e) => e.type === 'switch' && e.phase === 'started',
      callsBefore,
    );
    assert.deepEqual(events[started], {
      type: 'switch',
      at: events[started]!.at,
      from: 'lbtree_round_robin',
      to: 'lbtree_pick_first',
      phase: 'started',
    });
    const pendingUpdate = index('the pick_first update', (e) => configOf(e) === 'lbtree_pick_first', started);
    const done = index('the switch done', (e) => e.type === 'switch' && e.phase === 'done', pendingUpdate);
    assert.deepEqual(events[done], {
      type: 'switch',
      at: events[done]!.at,
      from: 'lbtree_round_robin',
      to: 'lbtree_pick_first',
      phase: 'done',
    });
    // (An interval still open at the export is in the file too, as its last event.)
    index(
      'calls to s2 after the switch',
      (e) => e.type === 'calls' && e.endpoints.some((x) => x.address === s2.address && x.picks > 0),
      done,
    );
    // grpc-js uses no CONNECTING picker of the pending root: none is recorded while the old root serves READY.
    assert.deepEqual(
      events.slice(started, done).filter((e) => e.type === 'picker' && e.state === 'CONNECTING'),
      [],
    );
    assert.equal(
      events.filter((e) => e.type === 'picker' && e.state === 'READY').length >= 2,
      true,
      'a READY picker of each root',
    );
  });
});
