// grpc-js calls exitIdle() on the root policy before every call. Each policy tells its parent whether its
// exitIdle() would wake anything (Helper.updateWakeable), so the walk stops where nothing below is IDLE, and
// still reaches everything exitIdle() must wake: pick_first IDLE after a disconnect (A62), an IDLE target under
// a READY weighted_target (A28), the current priority only (A56). The simulation's root skips exitIdle() while
// the root says no, as the grpc-js adapter does.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Simulation } from '../../src/sim/index.js';
import { puppet, puppetWorld } from './puppet-policy.js';

const A = '10.0.0.1:80';
const B = '10.0.0.2:80';
const PF = [{ pick_first: {} }];

function wt(targets: Record<string, unknown[]>): unknown[] {
  return [
    {
      weighted_target_experimental: {
        targets: Object.fromEntries(
          Object.entries(targets).map(([name, child]) => [name, { weight: 1, childPolicy: child }]),
        ),
      },
    },
  ];
}

function priority(names: string[]): unknown[] {
  return [
    {
      priority_experimental: {
        children: Object.fromEntries(names.map((n) => [n, { config: puppet(n) }])),
        priorities: names,
      },
    },
  ];
}

describe('exitIdle() reaches what it must wake, and only that', () => {
  test('pick_first (A62): READY has nothing to wake; IDLE after a disconnect does, and exitIdle() reconnects', () => {
    const sim = new Simulation();
    sim.script(A, { connectAfterMs: 1 });
    sim.update([A], PF);
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    assert.equal(sim.rootWakeable, false);
    sim.subchannel(A).setState('IDLE');
    sim.flush();
    assert.equal(sim.state, 'IDLE');
    assert.equal(sim.rootWakeable, true);
    sim.exitIdle();
    assert.equal(sim.state, 'CONNECTING');
    assert.equal(sim.rootWakeable, false);
    sim.advance(1);
    assert.equal(sim.state, 'READY');
  });

  test('weighted_target (A28): one READY and one IDLE target report READY, and exitIdle() still wakes the IDLE one', () => {
    const sim = new Simulation();
    sim.script(A, { connectAfterMs: 1 });
    sim.script(B, { connectAfterMs: 1 });
    sim.update(
      [
        { addresses: [A], attributes: { path: ['a'] } },
        { addresses: [B], attributes: { path: ['b'] } },
      ],
      wt({ a: PF, b: PF }),
    );
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    assert.equal(sim.rootWakeable, false, 'both targets READY: nothing to wake');
    sim.subchannel(B).setState('IDLE');
    sim.flush();
    assert.equal(sim.state, 'READY', 'target a is still READY');
    assert.equal(sim.rootWakeable, true, 'target b is IDLE');
    sim.advance(1000);
    assert.equal(sim.subchannel(B).released, true, 'nothing but exitIdle() or a pick wakes it');
    sim.exitIdle();
    assert.equal(sim.subchannel(B).released, false, 'exitIdle() started a new pass');
    sim.advance(1);
    assert.equal(sim.subchannel(B).state, 'READY');
    assert.equal(sim.rootWakeable, false);
  });

  test('weighted_target: only the targets that say they would wake something get exitIdle(); one that never says always does', () => {
    const w = puppetWorld();
    w.sim.update([], wt({ a: puppet('a'), b: puppet('b'), c: puppet('c') }));
    const [a, b, c] = ['a', 'b', 'c'].map((n) => w.get(n));
    a!.tellWakeable(false);
    a!.report('READY');
    b!.tellWakeable(false);
    b!.report('READY');
    // c never says: taken as wakeable.
    w.sim.exitIdle();
    assert.deepEqual([a!.exitIdleCalls, b!.exitIdleCalls, c!.exitIdleCalls], [0, 0, 1]);
    c!.tellWakeable(false);
    assert.equal(w.sim.rootWakeable, false);
    for (let i = 0; i < 100; i++) w.sim.exitIdle();
    assert.deepEqual([a!.exitIdleCalls, b!.exitIdleCalls, c!.exitIdleCalls], [0, 0, 1], 'no walk at all');
    b!.report('IDLE');
    b!.tellWakeable(true);
    assert.equal(w.sim.rootWakeable, true);
    assert.equal(w.sim.state, 'READY');
    w.sim.exitIdle();
    assert.deepEqual([a!.exitIdleCalls, b!.exitIdleCalls, c!.exitIdleCalls], [0, 1, 1]);
  });

  test('weighted_target: a removed (retained) target is not walked, whatever it says (A28)', () => {
    const w = puppetWorld();
    w.sim.update([], wt({ a: puppet('a'), b: puppet('b') }));
    w.get('a').tellWakeable(false);
    w.get('a').report('READY');
    w.get('b').tellWakeable(false);
    w.sim.update([], wt({ a: puppet('a') }));
    w.get('b').tellWakeable(true);
    assert.equal(w.sim.rootWakeable, false);
    w.sim.exitIdle();
    assert.equal(w.get('b').exitIdleCalls, 0);
    // Back in the config: counted again.
    w.sim.update([], wt({ a: puppet('a'), b: puppet('b') }));
    assert.equal(w.sim.rootWakeable, true);
    w.sim.exitIdle();
    assert.equal(w.get('b').exitIdleCalls, 1);
  });

  test('priority (A56): exitIdle() goes to the current child only, so only its word counts', () => {
    const w = puppetWorld();
    w.sim.update([], priority(['p0', 'p1']));
    const p0 = w.get('p0');
    assert.equal(w.byName.has('p1'), false, 'p1 is created lazily');
    p0.tellWakeable(false);
    p0.report('READY');
    assert.equal(w.sim.rootWakeable, false);
    for (let i = 0; i < 10; i++) w.sim.exitIdle();
    assert.equal(p0.exitIdleCalls, 0);
    p0.report('IDLE');
    p0.tellWakeable(true);
    assert.equal(w.sim.rootWakeable, true);
    w.sim.exitIdle();
    assert.equal(p0.exitIdleCalls, 1);
    // p0 fails: p1 is created and becomes current; p0 still says it would wake something, but it gets nothing.
    p0.report('TRANSIENT_FAILURE');
    const p1 = w.get('p1');
    assert.equal(w.sim.rootWakeable, true, 'p1 (current now) has not said yet');
    p1.tellWakeable(false);
    p1.report('READY');
    assert.equal(w.current(), 'p1');
    assert.equal(w.sim.rootWakeable, false, 'only the current child counts');
    w.sim.exitIdle();
    assert.deepEqual([p0.exitIdleCalls, p1.exitIdleCalls], [1, 0]);
    // p0 comes back READY and is current again: its word counts again.
    p0.report('READY');
    assert.equal(w.current(), 'p0');
    assert.equal(w.sim.rootWakeable, true);
    w.sim.exitIdle();
    assert.deepEqual([p0.exitIdleCalls, p1.exitIdleCalls], [2, 0]);
  });

  test('a policy replaced under the same name starts as wakeable, and the replaced one is no longer heard', () => {
    const w = puppetWorld();
    w.sim.update([], wt({ a: puppet('a') }));
    const old = w.get('a');
    old.tellWakeable(false);
    assert.equal(w.sim.rootWakeable, false);
    w.sim.update([], wt({ a: PF }));
    assert.equal(w.sim.rootWakeable, false, 'pick_first with no address reports TRANSIENT_FAILURE');
    old.tellWakeable(true);
    assert.equal(w.sim.rootWakeable, false, 'the replaced instance is not heard');
  });

  test('ring_hash (A42): its IDLE endpoints are woken by picks, not exitIdle(), so the walk never reaches it', () => {
    const sim = new Simulation();
    sim.update([A, B], [{ ring_hash_experimental: { minRingSize: 2, maxRingSize: 2 } }]);
    assert.equal(sim.state, 'IDLE');
    assert.equal(sim.rootWakeable, false);
    sim.exitIdle();
    assert.equal(sim.findSubchannel(A)?.connectionRequests ?? 0, 0);
    assert.equal(sim.findSubchannel(B)?.connectionRequests ?? 0, 0);
    sim.pick({ hash: 1n });
    sim.advance(1);
    const requested = [A, B].map((k) => sim.findSubchannel(k)?.connectionRequests ?? 0);
    assert.equal(requested[0]! + requested[1]!, 1, 'a pick connects one endpoint');
  });

  test('outlier_detection (A50) passes its child’s word up: pick_first IDLE after a disconnect is woken through it', () => {
    const sim = new Simulation();
    sim.script(A, { connectAfterMs: 1 });
    sim.update([A], [{ outlier_detection_experimental: { childPolicy: PF } }]);
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    assert.equal(sim.rootWakeable, false);
    sim.subchannel(A).setState('IDLE');
    sim.flush();
    assert.equal(sim.rootWakeable, true);
    sim.exitIdle();
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    assert.equal(sim.rootWakeable, false);
  });

  test('round_robin (A61) wakes an IDLE endpoint itself, so it has nothing left for exitIdle()', () => {
    const sim = new Simulation();
    sim.script(A, { connectAfterMs: 1 });
    sim.script(B, { connectAfterMs: 1 });
    sim.update([A, B], [{ round_robin: {} }]);
    sim.advance(1);
    assert.equal(sim.rootWakeable, false);
    sim.subchannel(A).setState('IDLE');
    sim.flush();
    assert.equal(sim.rootWakeable, false);
    sim.advance(1);
    assert.equal(sim.subchannel(A).state, 'READY');
  });
});
