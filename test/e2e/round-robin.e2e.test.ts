import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ServiceError } from '@grpc/grpc-js';
import { register } from '../../src/grpc-js/index.js';
import { type Backend, type BackendClientType, newClient, startBackends, whoami } from './backends.js';

const RR = [{ lbtree_round_robin: {} }];

function tally(names: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const n of names) out[n] = (out[n] ?? 0) + 1;
  return out;
}

describe('round_robin on a real grpc-js channel (A61 petiole over real subchannels)', () => {
  let backends: Backend[];
  const clients: BackendClientType[] = [];
  before(async () => {
    register();
    backends = await startBackends(['a', 'b', 'c']);
  });
  after(() => {
    for (const c of clients) c.close();
    for (const b of backends) b.stop();
  });
  const client = (target: string) => {
    const c = newClient(target, RR);
    clients.push(c);
    return c;
  };

  test('300 unary RPCs split evenly over 3 servers (each within ±10%)', async () => {
    const c = client(`endpoints:${backends.map((b) => b.address).join(';')}`);
    const names: string[] = [];
    for (let i = 0; i < 300; i++) names.push(await whoami(c, { waitForReady: true }));
    const counts = tally(names);
    assert.deepEqual(Object.keys(counts).sort(), ['a', 'b', 'c']);
    for (const n of Object.values(counts))
      assert.ok(n >= 90 && n <= 110, `uneven split ${JSON.stringify(counts)}`);
  });

  test('a server killed mid-load: no wait-for-ready RPC fails, traffic continues on the others', async () => {
    const extra = await startBackends(['x', 'y', 'z']);
    try {
      const c = client(`endpoints:${extra.map((b) => b.address).join(';')}`);
      const names: string[] = [];
      const failures: ServiceError[] = [];
      let servedBeforeKill = -1;
      let killedAt = -1;
      const run = async (n: number) => {
        for (let i = 0; i < n; i++) {
          await whoami(c, { waitForReady: true }).then(
            (name) => names.push(name),
            (e: ServiceError) => failures.push(e),
          );
          // Kill x while the other loops still have RPCs in flight.
          if (names.length === 60 && killedAt < 0) {
            killedAt = names.length;
            extra[0]!.stop();
            servedBeforeKill = extra[0]!.served;
          }
        }
      };
      await Promise.all([run(120), run(120), run(120)]);
      assert.deepEqual(failures, []);
      assert.equal(extra[0]!.served, servedBeforeKill, 'nothing reached the killed server afterwards');
      const after = tally(names.slice(killedAt + 10));
      assert.ok(
        (after.y ?? 0) > 100 && (after.z ?? 0) > 100,
        `traffic moved to y and z: ${JSON.stringify(after)}`,
      );
    } finally {
      for (const b of extra) b.stop();
    }
  });

  test('all servers down: fail fast with UNAVAILABLE carrying the connection error; back up: RPCs succeed', async () => {
    const [down] = await startBackends(['d']);
    const c = client(`endpoints:${down!.address}`);
    assert.equal(await whoami(c, { waitForReady: true }), 'd');
    down!.stop();
    // Wait until the channel has noticed and failed a pass (sticky TF), then a plain RPC fails at once.
    let error: ServiceError | undefined;
    const deadline = Date.now() + 5000;
    while (!error && Date.now() < deadline) {
      const started = Date.now();
      try {
        await whoami(c, { deadlineMs: 1000 });
      } catch (e) {
        const se = e as ServiceError;
        if (se.code === 14 && Date.now() - started < 500) error = se;
      }
    }
    assert.ok(error, 'no fast UNAVAILABLE within 5 s');
    assert.match(
      error.details,
      /failed to connect to all addresses; last error: .*(ECONNREFUSED|ECONNRESET)/,
    );
    await down!.start();
    assert.equal(await whoami(c, { waitForReady: true, deadlineMs: 8000 }), 'd');
    down!.stop();
  });
});
