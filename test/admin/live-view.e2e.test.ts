// The live view of real grpc-js channels: the adapter's channel registry lists a channel whose root policy is
// lbtree's, with its target; its JSON shows the tree with every backend's subchannel and picks; stopping a
// backend shows in the next picture; closing the channel takes it off the list. Real servers on loopback.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { PolicyView } from '../../src/admin/channel-snapshot.js';
import { type AdminServer, type ChannelSnapshot, startAdminServer } from '../../src/admin/index.js';
import { type Backend, newClient, startBackends, whoami } from '../../src/cli/loopback-backends.js';
import { liveChannels, register } from '../../src/grpc-js/index.js';
import { until } from '../support/until.js';

const PRIORITY_OVER_ROUND_ROBIN = [
  { priority_experimental: { children: { p0: { config: [{ round_robin: {} }] } }, priorities: ['p0'] } },
];

/** Every subchannel in the picture, by address. */
function subchannels(node: PolicyView | null | undefined): Map<string, { state: string; picks?: number }> {
  const out = new Map<string, { state: string; picks?: number }>();
  const walk = (n: PolicyView) => {
    for (const s of n.subchannels ?? []) out.set(s.address, s);
    for (const c of n.children ?? []) walk(c.node);
  };
  if (node) walk(node);
  return out;
}

/** Fetches the snapshot until `done` holds for it (15 s deadline, naming what was seen last). */
async function pollSnapshot(url: string, done: (s: ChannelSnapshot) => boolean): Promise<ChannelSnapshot> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const snap = (await json<ChannelSnapshot>(url)).body;
    if (done(snap)) return snap;
    if (Date.now() > deadline) throw new Error(`timed out; last picture: ${JSON.stringify(snap.tree)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function json<T>(url: string): Promise<{ status: number; body: T }> {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as T };
}

describe('the live view of a real grpc-js channel', () => {
  let backends: Backend[];
  let admin: AdminServer;
  before(async () => {
    register();
    backends = await startBackends(['a', 'b']);
    admin = await startAdminServer({ port: 0, updateIntervalMs: 50 });
  });
  after(async () => {
    for (const b of backends) b.stop();
    await admin.close();
  });

  test('listed with its target; its tree shows both backends READY with their picks; a stopped backend leaves READY; a closed channel leaves the list', async () => {
    const [a, b] = backends as [Backend, Backend];
    const target = `endpoints:p0=${a.address};p0=${b.address}`;
    // The registry lists A66's canonical form of the target (scheme://authority/path).
    const listed = `endpoints:///p0=${a.address};p0=${b.address}`;
    const client = newClient(target, PRIORITY_OVER_ROUND_ROBIN);
    let id = '';
    try {
      for (let i = 0; i < 20; i++) await whoami(client, { deadlineMs: 10_000 });
      const registered = liveChannels.list().find((c) => c.target === listed);
      assert.ok(
        registered,
        `the registry lists ${listed}: ${JSON.stringify(liveChannels.list().map((c) => c.target))}`,
      );
      id = registered.id;

      const list = await json<{ channels: { id: string; target: string; policy: string; state: string }[] }>(
        `${admin.url}channels.json`,
      );
      assert.deepEqual(
        list.body.channels.find((c) => c.id === registered.id),
        {
          id: registered.id,
          target: listed,
          createdAt: new Date(registered.createdAt).toISOString(),
          policy: 'priority_experimental',
          state: 'READY',
        },
      );
      const snap = (await json<ChannelSnapshot>(`${admin.url}channels/${registered.id}.json`)).body;
      assert.equal(snap.tree?.facts?.priorityInUse, 'p0');
      const seen = subchannels(snap.tree);
      assert.equal(seen.get(a.address)?.state, 'READY');
      assert.equal(seen.get(b.address)?.state, 'READY');
      // round_robin over two READY backends: 20 calls, 10 picks each, counted by the adapter.
      assert.equal((seen.get(a.address)?.picks ?? 0) + (seen.get(b.address)?.picks ?? 0), 20);
      assert.equal(seen.get(a.address)?.picks, a.served);
      assert.equal(seen.get(b.address)?.picks, b.served);

      b.stop();
      // The connection to b is gone: its subchannel reconnects and fails (connection refused).
      const last = await pollSnapshot(`${admin.url}channels/${registered.id}.json`, (s) => {
        const state = subchannels(s.tree).get(b.address)?.state;
        return state === 'TRANSIENT_FAILURE';
      });
      assert.equal(subchannels(last.tree).get(a.address)?.state, 'READY');
      assert.equal(last.tree?.state, 'READY');
    } finally {
      client.close();
    }
    await until(
      'the closed channel to leave the registry',
      () => !liveChannels.list().some((c) => c.target === listed),
    );
    const gone = await json<{ error: string }>(`${admin.url}channels/${id}.json`);
    assert.equal(gone.status, 404);
    assert.match(gone.body.error, new RegExp(`no channel with id "${id}"`));
  });
});
