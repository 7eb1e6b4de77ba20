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
import { tally } from '../support/sim-picks.js';

const RR = [{ lbtree_round_robin: {} }];

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

  /** Three loops of wait-for-ready RPCs over x, y, z; `disrupt` is called on x after 60 RPCs. */
  async function loadWithDisruption(disrupt: (x: Backend) => void | Promise<void>) {
    const extra = await startBackends(['x', 'y', 'z']);
    const c = client(`endpoints:${extra.map((b) => b.address).join(';')}`);
    const names: string[] = [];
    const failures: ServiceError[] = [];
    let servedAtDisruption = -1;
    let disruptedAt = -1;
    let issuedAfter = 0;
    const run = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const after = disruptedAt >= 0;
        await whoami(c, { waitForReady: true }).then(
          (name) => names.push(name),
          (e: ServiceError) => failures.push(e),
        );
        if (after) issuedAfter++;
        // Disrupt x while the other loops still have RPCs in flight.
        if (names.length === 60 && disruptedAt < 0) {
          disruptedAt = names.length;
          servedAtDisruption = extra[0]!.served;
          await disrupt(extra[0]!);
        }
      }
    };
    try {
      await Promise.all([run(120), run(120), run(120)]);
    } finally {
      for (const b of extra) b.stop();
    }
    const afterwards = tally(names.slice(disruptedAt + 10));
    assert.ok(issuedAfter > 200);
    assert.ok(
      (afterwards.y ?? 0) > 100 && (afterwards.z ?? 0) > 100,
      `traffic moved: ${JSON.stringify(afterwards)}`,
    );
    return { failures, servedAfter: extra[0]!.served - servedAtDisruption };
  }

  test('a server that goes away mid-load (GOAWAY): no wait-for-ready RPC fails, traffic moves', async () => {
    const { failures, servedAfter } = await loadWithDisruption((x) => x.drain());
    assert.deepEqual(failures, []);
    assert.ok(
      servedAfter <= 3,
      `x served ${servedAfter} RPCs after it started draining (only those in flight)`,
    );
  });

  test('a server killed mid-load: only RPCs already in flight on it can fail; the rest move on', async () => {
    const { failures, servedAfter } = await loadWithDisruption((x) => x.stop());
    // At most one RPC per loop can have been on the wire to x when its connections were cut.
    assert.ok(failures.length <= 3, `${failures.length} failures`);
    for (const f of failures) assert.equal(f.code, 14, f.message);
    assert.equal(servedAfter, 0);
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
