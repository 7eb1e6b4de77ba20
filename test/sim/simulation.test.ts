import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ENDPOINT_WEIGHT,
  HASH_KEY,
  HIERARCHICAL_PATH,
  LOCALITY,
  LOCALITY_WEIGHT,
} from '../../src/core/index.js';
import { Simulation, toEndpoint, VirtualClock } from '../../src/sim/index.js';

describe('VirtualClock', () => {
  test('runs timers in time order, ties in creation order, and only when advanced', () => {
    const clock = new VirtualClock();
    const order: string[] = [];
    clock.setTimer(20, () => order.push('b@20'));
    clock.setTimer(10, () => order.push('a@10'));
    clock.setTimer(20, () => order.push('c@20'));
    const cancel = clock.setTimer(15, () => order.push('never'));
    cancel();
    clock.advance(19);
    assert.deepEqual(order, ['a@10']);
    assert.equal(clock.now(), 19);
    clock.advance(1);
    assert.deepEqual(order, ['a@10', 'b@20', 'c@20']);
  });

  test('a timer set by a running timer for the same instant runs in the same advance', () => {
    const clock = new VirtualClock();
    const seen: number[] = [];
    clock.setTimer(5, () => clock.setTimer(0, () => seen.push(clock.now())));
    clock.advance(5);
    assert.deepEqual(seen, [5]);
  });
});

describe('Simulation', () => {
  test('scripted outcomes: connect, fail then back off to IDLE, hang', () => {
    const sim = new Simulation({ backoffMs: 300 });
    sim.script('10.0.0.1:80', { failAfterMs: 20, details: 'refused' });
    sim.update(['10.0.0.1:80'], [{ pick_first: {} }]);
    const fake = sim.subchannel('10.0.0.1:80');
    assert.equal(fake.state, 'CONNECTING');
    sim.advance(20);
    assert.equal(fake.state, 'TRANSIENT_FAILURE');
    assert.equal(fake.status.details, 'refused');
    sim.options.backoffMs = 300;
    sim.advance(299);
    assert.equal(fake.state, 'TRANSIENT_FAILURE');
    sim.advance(1);
    // pick_first is past its first pass, so it asks again as soon as the subchannel is IDLE.
    assert.equal(fake.connectionRequests, 2);
  });

  test('an address with no script connects: READY 0 ms after each attempt, on a later turn of the clock', () => {
    const sim = new Simulation();
    sim.update(['10.0.0.1:80'], [{ pick_first: {} }]);
    const fake = sim.subchannel('10.0.0.1:80');
    assert.equal(fake.state, 'READY');
    assert.equal(sim.now, 0, 'no virtual time passed');
    assert.deepEqual(
      sim.history.map((h) => [h.at, h.state]),
      [
        [0, 'CONNECTING'],
        [0, 'READY'],
      ],
      'the policy saw the attempt CONNECTING first: READY came on a later turn, not inside the attempt',
    );
    const pick = sim.pick();
    assert.equal(pick.type === 'complete' && pick.address, '10.0.0.1:80');
    // Every attempt connects: the next connection after a lost one too.
    fake.setState('TRANSIENT_FAILURE');
    assert.equal(sim.state, 'IDLE', 'pick_first dropped the lost connection');
    assert.equal(sim.pick().type, 'queue', 'a pick asks pick_first to connect again');
    assert.equal(sim.subchannelsCreated, 2);
    assert.equal(sim.subchannel('10.0.0.1:80').state, 'READY');
    assert.equal(sim.state, 'READY');
    assert.equal(sim.now, 0);
  });

  test("an address scripted 'hang' stays CONNECTING until the test moves it", () => {
    const sim = new Simulation();
    sim.script('10.0.0.1:80', 'hang');
    sim.update(['10.0.0.1:80'], [{ pick_first: {} }]);
    sim.advance(60_000);
    assert.equal(sim.subchannel('10.0.0.1:80').state, 'CONNECTING');
    assert.equal(sim.pick().type, 'queue');
    sim.subchannel('10.0.0.1:80').setState('READY');
    assert.equal(sim.state, 'READY');
  });

  test('records every reported state with its virtual time', () => {
    const sim = new Simulation();
    sim.script('10.0.0.1:80', { connectAfterMs: 40 });
    sim.update(['10.0.0.1:80'], [{ pick_first: {} }]);
    sim.advance(100);
    assert.deepEqual(
      sim.history.map((h) => [h.at, h.state]),
      [
        [0, 'CONNECTING'],
        [40, 'READY'],
      ],
    );
    assert.equal(sim.now, 100);
  });

  test('a rejected config keeps the running policy serving', () => {
    const sim = new Simulation();
    sim.script('10.0.0.1:80', { connectAfterMs: 1 });
    sim.update(['10.0.0.1:80'], [{ pick_first: {} }]);
    sim.advance(1);
    assert.equal(sim.update(['10.0.0.2:80'], [{ no_such_policy: {} }]), false);
    assert.match(sim.lastConfigError?.message ?? '', /no registered LB policy/);
    assert.equal(sim.state, 'READY');
    const pick = sim.pick();
    assert.equal(pick.type === 'complete' && pick.address, '10.0.0.1:80');
  });

  test('plain endpoints map onto the typed per-endpoint attributes', () => {
    const e = toEndpoint({
      addresses: ['10.0.0.1:80', '[::1]:80'],
      attributes: { path: ['p0', 'l1'], weight: 3, locality: 'us-east1/a', localityWeight: 7, hashKey: 'k' },
    });
    assert.equal(e.addresses.length, 2);
    assert.deepEqual(e.attributes.get(HIERARCHICAL_PATH), ['p0', 'l1']);
    assert.equal(e.attributes.get(ENDPOINT_WEIGHT), 3);
    assert.equal(e.attributes.get(LOCALITY), 'us-east1/a');
    assert.equal(e.attributes.get(LOCALITY_WEIGHT), 7);
    assert.equal(e.attributes.get(HASH_KEY), 'k');
  });

  test('the same seed replays the same run', () => {
    const run = () => {
      const sim = new Simulation({ seed: 9 });
      for (const k of ['1.1.1.1:1', '2.2.2.2:1', '3.3.3.3:1']) sim.script(k, { connectAfterMs: 1 });
      sim.update(['1.1.1.1:1', '2.2.2.2:1', '3.3.3.3:1'], [{ round_robin: {} }]);
      sim.advance(1);
      return Array.from({ length: 5 }, () => {
        const p = sim.pick();
        return p.type === 'complete' ? p.address : p.type;
      });
    };
    assert.deepEqual(run(), run());
  });
});

describe('Simulation: hand-made changes run their work before returning (issue 10 §3)', () => {
  const A = '10.0.0.1:80';
  const B = '10.0.0.2:80';
  const RR = [{ round_robin: {} }];

  test('setState: sim.state is current when it returns, yet the policy heard of it on a later clock turn', () => {
    const sim = new Simulation({ trace: true });
    sim.script(A, 'hang');
    sim.update([A], RR);
    assert.equal(sim.state, 'CONNECTING');
    sim.subchannel(A).setState('READY');
    assert.equal(sim.state, 'READY', 'no advance or flush needed');
    assert.equal(sim.pick().type, 'complete');
    sim.subchannel(A).setState('TRANSIENT_FAILURE');
    assert.notEqual(sim.state, 'READY');
  });

  test('setState made while a policy runs is still delivered on a later turn, not inside that call', () => {
    const sim = new Simulation();
    sim.script(A, 'hang');
    sim.update([A], RR);
    const fake = sim.subchannel(A);
    // A watcher of our own that changes the subchannel from inside a delivery: the change it makes must not
    // reach it re-entrantly, and must still arrive before the outer setState returns.
    const handle = fake.newHandle();
    const heard: string[] = [];
    let delivering = false;
    handle.watchConnectivity((state) => {
      heard.push(delivering ? `${state} (inside)` : state);
      if (state !== 'READY') return;
      delivering = true;
      fake.setState('IDLE');
      delivering = false;
    });
    fake.setState('READY');
    // round_robin asks its IDLE child to reconnect at once: CONNECTING follows.
    assert.deepEqual(heard, ['READY', 'IDLE', 'CONNECTING']);
    assert.equal(sim.state, 'CONNECTING');
    handle.release();
  });

  test('setHealth: an unhealthy READY endpoint leaves the picker before it returns (A61 health)', () => {
    const sim = new Simulation();
    sim.script(A, { connectAfterMs: 1 });
    sim.script(B, { connectAfterMs: 1 });
    sim.update([A, B], RR);
    sim.advance(1);
    sim.subchannel(A).setHealth('TRANSIENT_FAILURE');
    const picked = new Set<string>();
    for (let i = 0; i < 10; i++) {
      const p = sim.pick();
      if (p.type === 'complete') picked.add(p.address);
    }
    assert.deepEqual([...picked], [B]);
  });

  test('historyLimit keeps the latest entries in order and counts the dropped ones', () => {
    const sim = new Simulation({ historyLimit: 3 });
    sim.script(A, 'hang');
    sim.update([A], RR);
    for (let i = 0; i < 5; i++) {
      sim.subchannel(A).setState('READY');
      sim.subchannel(A).setState('TRANSIENT_FAILURE');
      sim.advance(1000); // back off to IDLE; round_robin reconnects
    }
    assert.equal(sim.history.length, 3);
    const times = sim.history.map((h) => h.at);
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
    );
    assert.equal(sim.history.at(-1)!.state, sim.state);
    assert.ok(sim.historyDropped > 0);
    assert.throws(() => new Simulation({ historyLimit: 0 }), RangeError);
  });
});
