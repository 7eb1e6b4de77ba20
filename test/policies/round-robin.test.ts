import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, unavailable } from '../../src/core/index.js';
import { RoundRobinPicker } from '../../src/policies/index.js';
import { Simulation } from '../../src/sim/index.js';
import { connectAll, picks } from '../support/sim-picks.js';

const RR = [{ round_robin: {} }];
const A = '10.0.0.1:80';
const B = '10.0.0.2:80';
const C = '10.0.0.3:80';

/** A sim whose given backends all connect after 1 ms, updated with them and advanced until connected. */
function readySim(keys: string[], options: ConstructorParameters<typeof Simulation>[0] = {}): Simulation {
  return connectAll(new Simulation(options), keys, RR);
}

describe('round_robin children (A61 "Petiole policies", "Endpoint list updates")', () => {
  test('creates one pick_first child per endpoint and connects every one at once', () => {
    const sim = new Simulation();
    for (const k of [A, B, C]) sim.script(k, 'hang'); // attempts stay CONNECTING
    sim.update([A, B, { addresses: [C, '[2001:db8::3]:80'] }], RR);
    assert.deepEqual(
      [A, B, C].map((k) => sim.subchannel(k).connectionRequests),
      [1, 1, 1],
    );
    assert.equal(sim.state, 'CONNECTING');
  });

  test('an endpoint with several addresses runs Happy Eyeballs inside its child', () => {
    const sim = new Simulation();
    sim.script(C, 'hang');
    sim.script('[2001:db8::3]:80', { connectAfterMs: 10 });
    sim.update([{ addresses: [C, '[2001:db8::3]:80'] }], RR);
    assert.equal(sim.subchannel('[2001:db8::3]:80').connectionRequests, 0);
    sim.advance(250);
    assert.equal(sim.subchannel('[2001:db8::3]:80').connectionRequests, 1);
    sim.advance(10);
    assert.equal(sim.state, 'READY');
    assert.deepEqual(picks(sim, 2), ['[2001:db8::3]:80', '[2001:db8::3]:80']);
  });

  test('[A,B] then [B,A] is the same endpoint: nothing is created, nothing released', () => {
    const sim = readySim([]);
    sim.script(A, { connectAfterMs: 1 });
    sim.update([{ addresses: [A, B] }], RR);
    sim.advance(1);
    const created = sim.subchannelsCreated;
    sim.update([{ addresses: [B, A] }], RR);
    assert.equal(sim.subchannelsCreated, created);
    assert.equal(sim.subchannel(A).released, false);
    assert.equal(sim.state, 'READY');
  });

  test('[A,B] again is the same endpoint; [A,C], sharing only A, is another: its child is new', () => {
    const sim = readySim([]);
    sim.script(A, { connectAfterMs: 1 });
    sim.update([{ addresses: [A, B] }], RR);
    sim.advance(1);
    const created = sim.subchannelsCreated;
    sim.update([{ addresses: [A, B] }], RR);
    assert.equal(sim.subchannelsCreated, created, 'the same addresses in the same order: the same child');
    assert.equal(sim.state, 'READY');
    sim.update([{ addresses: [A, C] }], RR);
    assert.ok(
      sim.subchannelsCreated > created,
      'another address set: a child of its own, with its own subchannels',
    );
  });

  test('an unchanged list reuses every child; a removed endpoint is destroyed; a new one is created', () => {
    const sim = readySim([A, B]);
    const created = sim.subchannelsCreated;
    sim.update([A, B], RR);
    assert.equal(sim.subchannelsCreated, created);
    sim.script(C, { connectAfterMs: 1 });
    sim.update([B, C], RR);
    assert.equal(sim.subchannel(A).released, true);
    assert.equal(sim.subchannel(B).released, false);
    assert.equal(sim.subchannel(C).connectionRequests, 1);
    sim.advance(1);
    assert.deepEqual(new Set(picks(sim, 4)), new Set([B, C]));
  });

  test('one endpoint, then two, then the other one alone: each list reuses the children it shares with the last', () => {
    // A list of one keeps its child without a Map; the second endpoint moves both into one.
    const sim = readySim([A]);
    sim.script(B, { connectAfterMs: 1 });
    sim.update([A, A], RR);
    assert.equal(sim.subchannelsCreated, 1, 'a duplicate of the only endpoint is the same child');
    sim.update([B, A], RR);
    assert.equal(sim.subchannelsCreated, 2);
    assert.equal(sim.subchannel(A).released, false, 'A kept its child');
    sim.advance(1);
    assert.deepEqual(new Set(picks(sim, 4)), new Set([A, B]));
    sim.update([B], RR);
    assert.equal(sim.subchannel(A).released, true);
    assert.equal(sim.subchannel(B).released, false);
    assert.deepEqual(picks(sim, 2), [B, B]);
    sim.update([A], RR);
    assert.equal(sim.subchannel(B).released, true, 'the list went back to one child: B is removed');
    assert.equal(sim.subchannelsCreated, 3, 'A is a new child now');
  });

  test('duplicate endpoints collapse into one child', () => {
    const sim = readySim([A, B, A, { addresses: [B] }] as never);
    assert.equal(sim.subchannelsCreated, 2);
    const counts = new Map<string, number>();
    for (const p of picks(sim, 100)) counts.set(p, (counts.get(p) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(counts), { [A]: 50, [B]: 50 });
  });

  test('a child that goes IDLE (connection dropped) is asked to reconnect at once', () => {
    const sim = readySim([A, B]);
    sim.subchannel(A).setState('IDLE');
    sim.flush();
    // pick_first released the old subchannel and started a new pass on a fresh one.
    assert.equal(sim.subchannel(A).connectionRequests, 1);
    assert.equal(sim.subchannel(A).released, false);
    sim.advance(1);
    assert.deepEqual(new Set(picks(sim, 4)), new Set([A, B]));
  });
});

describe('round_robin state and picker (A61 "Petiole policies", A62 sticky TF)', () => {
  test('picks rotate evenly over READY children, starting at a random child', () => {
    const starts = new Set<string>();
    for (let seed = 1; seed <= 30; seed++) {
      const sim = readySim([A, B, C], { seed });
      const seq = picks(sim, 300);
      starts.add(seq[0]!);
      for (const k of [A, B, C]) assert.equal(seq.filter((x) => x === k).length, 100);
      // Strict rotation: each pick differs from the previous one and repeats every 3.
      for (let i = 3; i < seq.length; i++) assert.equal(seq[i], seq[i - 3]);
    }
    assert.equal(starts.size, 3);
  });

  test('one READY child: its own picker goes up as it is (rotating over one picks it every time); a second brings the rotation back', () => {
    const sim = new Simulation();
    sim.script(A, { connectAfterMs: 1 });
    sim.script(B, { connectAfterMs: 5 });
    sim.update([A, B], RR);
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    assert.ok(!(sim.picker instanceof RoundRobinPicker), "the child's picker, not a rotation over one");
    assert.equal(sim.picker.constantResult?.type, 'complete');
    assert.deepEqual(picks(sim, 3), [A, A, A]);
    sim.advance(4);
    assert.ok(sim.picker instanceof RoundRobinPicker);
    const seq = picks(sim, 4);
    assert.deepEqual(seq.slice(2), seq.slice(0, 2));
    assert.deepEqual([...seq.slice(0, 2)].sort(), [A, B]);
  });

  test('the READY set going from one child to several and back, in any order, always picks exactly the READY ones', () => {
    const sim = readySim([A, B, C]);
    const drop = (key: string) => {
      sim.script(key, 'hang'); // its reconnection never completes: it stays out of the READY set
      sim.subchannel(key).setState('IDLE');
      sim.flush();
    };
    const back = (key: string) => sim.subchannel(key).setState('READY'); // the hanging attempt connects
    const readyPicks = () => new Set(picks(sim, 6));
    drop(A);
    drop(B);
    assert.deepEqual(readyPicks(), new Set([C]), 'one left of three');
    drop(C);
    assert.notEqual(sim.state, 'READY');
    back(B);
    assert.deepEqual(readyPicks(), new Set([B]), 'one READY again, after none');
    drop(B);
    assert.notEqual(sim.state, 'READY', 'and that one gone again');
    back(A);
    assert.deepEqual(readyPicks(), new Set([A]), 'another one alone');
    back(B);
    assert.deepEqual(readyPicks(), new Set([A, B]), 'a second one joins it');
    drop(A);
    assert.deepEqual(readyPicks(), new Set([B]), 'the first one leaves');
    back(C);
    back(A);
    assert.deepEqual(readyPicks(), new Set([A, B, C]));
  });

  test('READY if any child is READY; CONNECTING while others connect', () => {
    const sim = new Simulation();
    sim.script(A, { connectAfterMs: 5 });
    sim.script(B, 'hang');
    sim.update([A, B], RR);
    assert.equal(sim.state, 'CONNECTING');
    assert.deepEqual(sim.pick(), { type: 'queue' });
    sim.advance(5);
    assert.equal(sim.state, 'READY');
    assert.deepEqual(picks(sim, 3), [A, A, A], 'only READY children are picked');
  });

  test("TF once every child failed, with a child's real connection error; sticky until a child is READY", () => {
    const sim = new Simulation({ backoffMs: 1000 });
    sim.script(A, { failAfterMs: 10, details: 'connect ECONNREFUSED 10.0.0.1:80' });
    sim.script(B, { failAfterMs: 20, details: 'connect ECONNREFUSED 10.0.0.2:80' });
    sim.update([A, B], RR);
    sim.advance(10);
    assert.equal(sim.state, 'CONNECTING', 'B is still connecting');
    sim.advance(10);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    const pick = sim.pick();
    assert.equal(pick.type, 'fail');
    assert.match(
      pick.type === 'fail' ? pick.status.details : '',
      /^failed to connect to all addresses; last error: UNAVAILABLE: connect ECONNREFUSED 10\.0\.0\.2:80$/,
    );
    // Children retry after backoff (they stay TF themselves); round_robin stays TF throughout.
    sim.advance(2000);
    assert.ok(sim.subchannel(A).connectionRequests >= 2);
    assert.ok(sim.history.every((h, i) => i < 2 || h.state === 'TRANSIENT_FAILURE'));
    sim.script(B, { connectAfterMs: 1 });
    sim.advance(1000);
    assert.equal(sim.state, 'READY');
    assert.deepEqual(picks(sim, 2), [B, B]);
  });

  test('a new endpoint added while in TF does not leave TF until it is READY', () => {
    const sim = new Simulation();
    sim.script(A, { failAfterMs: 10 });
    sim.update([A], RR);
    sim.advance(10);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    sim.script(B, { connectAfterMs: 50 });
    sim.update([A, B], RR);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    sim.advance(50);
    assert.equal(sim.state, 'READY');
  });

  test('re-resolution: once per failed child pass, once per dropped connection, once per READY child turned unhealthy', () => {
    const sim = readySim([A, B]);
    assert.equal(sim.reresolutionRequests, 0);
    sim.subchannel(A).setState('IDLE'); // connection dropped
    sim.flush();
    assert.equal(sim.reresolutionRequests, 1);
    sim.subchannel(B).setHealth('TRANSIENT_FAILURE'); // health watch: READY → TF
    sim.flush();
    assert.equal(sim.reresolutionRequests, 2);
    sim.script(C, { failAfterMs: 5 });
    sim.update([A, B, C], RR);
    sim.advance(5); // C's only address failed: its pass is over
    assert.equal(sim.reresolutionRequests, 3);
  });

  test('an unhealthy READY child is left out of the picker (A61 generic health reporting)', () => {
    const sim = readySim([A, B]);
    sim.subchannel(A).setHealth('TRANSIENT_FAILURE', unavailable('NOT_SERVING'));
    sim.flush();
    assert.equal(sim.state, 'READY');
    assert.deepEqual(picks(sim, 4), [B, B, B, B]);
    assert.equal(sim.subchannel(A).released, false, 'the connection is kept');
    sim.subchannel(A).setHealth('READY');
    sim.flush();
    assert.deepEqual(new Set(picks(sim, 4)), new Set([A, B]));
  });

  test('an empty list: TF, re-resolution, not accepted', () => {
    const sim = readySim([A]);
    assert.equal(sim.update([], RR), false);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    assert.match(sim.status.details, /empty endpoint list/);
    assert.equal(sim.reresolutionRequests, 1);
    assert.equal(sim.subchannel(A).released, true);
  });

  test('a resolver error keeps serving the endpoints already in hand', () => {
    const sim = readySim([A]);
    assert.equal(sim.updateError(unavailable('xDS stream broke')), false);
    assert.equal(sim.state, 'READY');
  });

  test('config must be an object; the error names the path', () => {
    const sim = new Simulation();
    assert.equal(sim.update([A], [{ round_robin: 3 }]), false);
    assert.ok(sim.lastConfigError instanceof ConfigError);
    assert.equal(sim.lastConfigError.path, '$[0].round_robin');
  });

  test('destroy() releases every subchannel and leaves no timer behind', () => {
    const sim = readySim([A, B]);
    sim.destroy();
    assert.equal(sim.subchannel(A).released && sim.subchannel(B).released, true);
    assert.equal(sim.clock.pendingTimers, 0);
  });
});
