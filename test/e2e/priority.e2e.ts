import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ServiceError } from '@grpc/grpc-js';
import { PRIORITY_FAILOVER_TREE } from '../../src/cli/demo/scenarios/priority-failover.js';
import {
  type Backend,
  type BackendClientType,
  Blackhole,
  newClient,
  startBackends,
  whoami,
} from '../../src/cli/loopback-backends.js';
import { register } from '../../src/grpc-js/index.js';

const target = (p0: readonly { address: string }[], p1: readonly { address: string }[]) =>
  `endpoints:${[...p0.map((b) => `p0/zone=${b.address}`), ...p1.map((b) => `p1/zone=${b.address}`)].join(';')}`;

async function collect(c: BackendClientType, n: number, failures: ServiceError[]): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < n; i++) {
    await whoami(c, { waitForReady: true, deadlineMs: 8000 }).then(
      (name) => names.push(name),
      (e: ServiceError) => failures.push(e),
    );
  }
  return names;
}

/** Sends RPCs until one lands on a backend named in `names` (or the deadline passes). */
async function until(c: BackendClientType, names: string[], deadlineMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < deadlineMs) {
    if (names.includes(await whoami(c, { waitForReady: true, deadlineMs: 5000 })))
      return Date.now() - started;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no RPC reached ${names.join('/')} within ${deadlineMs} ms`);
}

describe('priority failover on a real grpc-js channel (A56 "Failover")', () => {
  const clients: BackendClientType[] = [];
  let p0: Backend[];
  let p1: Backend[];
  before(async () => {
    register();
    p0 = await startBackends(['p0-a', 'p0-b']);
    p1 = await startBackends(['p1-a', 'p1-b']);
  });
  after(() => {
    for (const c of clients) c.close();
    for (const b of [...p0, ...p1]) b.stop();
  });

  test('traffic stays on priority 0, moves to priority 1 when it goes away, and returns when it is back', async () => {
    const c = newClient(target(p0, p1), PRIORITY_FAILOVER_TREE);
    clients.push(c);
    const failures: ServiceError[] = [];
    const first = await collect(c, 40, failures);
    assert.deepEqual([...new Set(first)].sort(), ['p0-a', 'p0-b'], 'priority 0 serves while it is healthy');

    // Priority 0 is killed between two RPCs: every wait-for-ready RPC after it succeeds, and moves to
    // priority 1 as soon as priority 0 reports TRANSIENT_FAILURE (no failover timer needed).
    for (const b of p0) b.stop();
    const during = await collect(c, 200, failures);
    assert.deepEqual(failures, [], 'no wait-for-ready RPC failed');
    const tail = during.slice(-50);
    assert.ok(
      tail.every((n) => n.startsWith('p1-')),
      `after the failover all traffic is on priority 1: ${[...new Set(tail)]}`,
    );

    // Priority 0 comes back: once its connections are up again, traffic returns to it.
    await Promise.all(p0.map((b) => b.start()));
    const waited = await until(c, ['p0-a', 'p0-b'], 8000);
    const back = await collect(c, 20, failures);
    assert.ok(
      back.every((n) => n.startsWith('p0-')),
      `traffic is back on priority 0 (after ${waited} ms)`,
    );
    assert.deepEqual(failures, []);
  });

  test('priority 0 hangs (accepts TCP, never answers): traffic moves to priority 1 after the failover timeout', async (t) => {
    const holes = await Promise.all([new Blackhole().start(), new Blackhole().start()]);
    try {
      const c = newClient(target(holes, p1), PRIORITY_FAILOVER_TREE, {
        'grpc.priority_failover_timeout_ms': 400,
      });
      clients.push(c);
      const started = Date.now();
      const name = await whoami(c, { waitForReady: true, deadlineMs: 5000 });
      const elapsed = Date.now() - started;
      assert.ok(name.startsWith('p1-'), `served by ${name}`);
      assert.ok(elapsed >= 350, `failed over after ${elapsed} ms, before the 400 ms timeout`);
      assert.ok(elapsed < 3000, `failed over after ${elapsed} ms`);
      t.diagnostic(`first RPC served by priority 1 after ${elapsed} ms (failover timeout 400 ms)`);
    } finally {
      for (const h of holes) h.stop();
    }
  });
});
