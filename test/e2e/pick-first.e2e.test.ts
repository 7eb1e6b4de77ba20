import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { experimental } from '@grpc/grpc-js';
import {
  type Backend,
  type BackendClientType,
  Blackhole,
  hasIPv6Loopback,
  newClient,
  startBackends,
  whoami,
} from '../../src/cli/loopback-backends.js';
import { register } from '../../src/grpc-js/index.js';

describe('Happy Eyeballs on a real grpc-js channel (A61 "Happy Eyeballs in pick_first")', () => {
  const clients: BackendClientType[] = [];
  const cleanups: (() => void)[] = [];
  before(() => register());
  after(() => {
    for (const c of clients) c.close();
    for (const f of cleanups) f();
  });

  async function firstRpcThroughGoodAddress(blackholeHost: string, goodHost: string) {
    const blackhole = await new Blackhole(blackholeHost).start();
    const [good] = await startBackends(['good'], goodHost);
    cleanups.push(
      () => blackhole.stop(),
      () => good!.stop(),
    );
    const c = newClient(`endpoints:${blackhole.address},${good!.address}`, [{ lbtree_pick_first: {} }]);
    clients.push(c);
    const started = Date.now();
    const name = await whoami(c, { waitForReady: true, deadlineMs: 5000 });
    const elapsed = Date.now() - started;
    assert.equal(name, 'good');
    // Expect about 250 ms (the Connection Attempt Delay) plus connection time; only a loose bound here.
    assert.ok(elapsed < 2000, `first RPC took ${elapsed} ms`);
    return elapsed;
  }

  test('[unresponsive IPv4, good IPv4]: the first RPC completes through the good address', async (t) => {
    const elapsed = await firstRpcThroughGoodAddress('127.0.0.1', '127.0.0.1');
    t.diagnostic(`first RPC after ${elapsed} ms`);
  });

  test('[unresponsive IPv4, good IPv6 [::1]]: the first RPC completes through the good address', async (t) => {
    if (!(await hasIPv6Loopback())) {
      t.skip('no IPv6 loopback on this machine');
      return;
    }
    const elapsed = await firstRpcThroughGoodAddress('127.0.0.1', '::1');
    t.diagnostic(`first RPC after ${elapsed} ms`);
  });
});

describe('lbtree inside grpc-js (register, configs, lifecycle)', () => {
  let backends: Backend[];
  before(async () => {
    backends = await startBackends(['a']);
  });
  after(() => {
    for (const b of backends) b.stop();
  });

  test('register() is harmless to call twice and names what it registered', () => {
    const first = register();
    const second = register();
    assert.deepEqual(first, second);
    assert.ok(first.includes('lbtree_round_robin') && first.includes('lbtree_pick_first'));
    assert.ok(!first.includes('round_robin'), 'grpc-js built-ins are replaced only on request');
    assert.ok(register({ replaceBuiltins: true }).includes('round_robin'));
  });

  test('a bad lbtree config in the service config: createFromJson throws naming the field, grpc-js moves on', async () => {
    register();
    assert.throws(
      () => experimental.parseLoadBalancingConfig({ lbtree_pick_first: { shuffleAddressList: 'yes' } }),
      /\$\.lbtree_pick_first\.shuffleAddressList: expected a boolean/,
    );
    const c = newClient(`endpoints:${backends[0]!.address}`, [
      { lbtree_pick_first: { shuffleAddressList: 'yes' } },
      { lbtree_round_robin: {} },
    ]);
    try {
      assert.equal(await whoami(c), 'a');
    } finally {
      c.close();
    }
  });
});
