import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ServiceError } from '@grpc/grpc-js';
import {
  type Backend,
  type BackendClientType,
  newClient,
  startBackends,
  whoami,
} from '../../src/cli/loopback-backends.js';
import { register } from '../../src/grpc-js/index.js';

const RING = [{ ring_hash_experimental: { requestHashHeader: 'x-user' } }];
const USERS = Array.from({ length: 40 }, (_, i) => `user-${i}`);

function sameRouting(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  return a.size === b.size && [...a].every(([user, name]) => b.get(user) === name);
}

describe('ring_hash affinity on a real grpc-js channel (A42, A76 request_hash_header)', () => {
  const clients: BackendClientType[] = [];
  let backends: Backend[];
  before(async () => {
    register();
    backends = await startBackends(['r1', 'r2', 'r3', 'r4']);
  });
  after(() => {
    for (const c of clients) c.close();
    for (const b of backends) b.stop();
  });

  async function route(c: BackendClientType, failures: ServiceError[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const user of USERS) {
      await whoami(c, { waitForReady: true, deadlineMs: 8000, headers: { 'x-user': user } }).then(
        (name) => out.set(user, name),
        (e: ServiceError) => failures.push(e),
      );
    }
    return out;
  }

  test('the same header value always lands on the same backend; a dead backend’s keys move, the rest stay', async () => {
    const c = newClient(`endpoints:${backends.map((b) => b.address).join(';')}`, RING);
    clients.push(c);
    const failures: ServiceError[] = [];
    // Every backend gets connected on demand by the picks themselves (A42 lazy connections).
    const home = await route(c, failures);
    for (let i = 0; i < 100; i++) {
      const user = USERS[i % 5]!;
      assert.equal(await whoami(c, { waitForReady: true, headers: { 'x-user': user } }), home.get(user));
    }
    assert.ok(new Set(home.values()).size >= 3, `keys spread over the ring: ${[...new Set(home.values())]}`);

    const victim = backends.find((b) => [...home.values()].includes(b.name))!;
    await victim.drain();
    const moved = await route(c, failures);
    for (const user of USERS) {
      if (home.get(user) === victim.name)
        assert.notEqual(moved.get(user), victim.name, `${user} moved off ${victim.name}`);
      else assert.equal(moved.get(user), home.get(user), `${user} stayed on ${home.get(user)}`);
    }

    await victim.start();
    // The channel reconnects to the restarted backend on its own backoff schedule; until then its keys keep
    // falling over to the next ring entry. Wait for the CONDITION: one complete pass, started after the
    // backend is back, in which every key is routed to its original backend (a pass in which only some keys
    // reached it proves nothing about the keys checked before it came back).
    const deadline = Date.now() + 30_000;
    let back = await route(c, failures);
    while (!sameRouting(back, home) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      back = await route(c, failures);
    }
    assert.deepEqual(back, home, 'every key is back on its original backend');
    assert.deepEqual(failures, []);
  });
});
