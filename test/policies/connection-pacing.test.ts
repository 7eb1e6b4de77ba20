// Issue 25 §5: a channel's connection requests are spread over event-loop turns, the first 100 of a turn made at
// once and the rest in later turns (the simulator's connection turns take `connectionTurnMs` of virtual time here). The waves
// this spreads: a new list's first pass (A61: each endpoint's pick_first asks for a connection), and A62's sticky
// TRANSIENT_FAILURE, where pick_first asks for a connection whenever a subchannel goes IDLE after its backoff, so
// endpoints that failed together all ask in the turn their backoffs end. A request a turn later is still
// pick_first requesting a connection for an IDLE subchannel.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Simulation } from '../../src/sim/index.js';

const RR = [{ round_robin: {} }];

/** `n` distinct addresses. */
function addresses(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `10.0.${i >> 8}.${i & 255}:80`);
}

/** The addresses (in list order) whose subchannel is CONNECTING. */
function connecting(sim: Simulation, list: readonly string[]): string[] {
  return list.filter((k) => sim.subchannel(k).state === 'CONNECTING');
}

/**
 * A round_robin over `list`, every attempt hanging in CONNECTING, the first pass's requests all made; then every
 * endpoint fails in the same turn (A62 sticky TF), so all their backoffs (1 s here) end in one turn.
 */
function failedTogether(list: readonly string[]): Simulation {
  const sim = new Simulation({ connectionTurnMs: 1 });
  for (const k of list) sim.script(k, 'hang');
  sim.update(list, RR);
  sim.advance(10);
  assert.equal(connecting(sim, list).length, list.length);
  for (const k of list) sim.subchannel(k).setState('TRANSIENT_FAILURE');
  assert.equal(sim.state, 'TRANSIENT_FAILURE');
  assert.equal(connecting(sim, list).length, 0);
  return sim;
}

describe('connection requests are paced over turns (issue 25 §5)', () => {
  test('A61 first pass: 250 endpoints ask for 250 connections in one turn; 100 are made, then 100 and 50 in the next turns, in list order', () => {
    const list = addresses(250);
    const sim = new Simulation({ connectionTurnMs: 1 });
    for (const k of list) sim.script(k, 'hang');
    sim.update(list, RR);
    assert.deepEqual(connecting(sim, list), list.slice(0, 100));
    assert.equal(sim.connectionPacer.waiting, 150);
    sim.advance(1);
    assert.deepEqual(connecting(sim, list), list.slice(0, 200));
    sim.advance(1);
    assert.deepEqual(connecting(sim, list), list);
    assert.equal(sim.connectionPacer.waiting, 0);
    // Each endpoint was asked exactly once.
    assert.deepEqual(new Set(list.map((k) => sim.subchannel(k).connectionRequests)), new Set([1]));
  });

  test('A62 sticky TF: 250 backoffs ending in one turn make 100 requests in it, then 100 and 50, in order', () => {
    const list = addresses(250);
    const sim = failedTogether(list);
    sim.advance(1_000);
    assert.deepEqual(connecting(sim, list), list.slice(0, 100));
    // The others are IDLE, their requests waiting: the channel stays in TRANSIENT_FAILURE meanwhile (A62).
    assert.equal(sim.subchannel(list[100]!).state, 'IDLE');
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    sim.advance(1);
    assert.deepEqual(connecting(sim, list), list.slice(0, 200));
    sim.advance(1);
    assert.deepEqual(connecting(sim, list), list);
    assert.deepEqual(new Set(list.map((k) => sim.subchannel(k).connectionRequests)), new Set([2]));
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
  });

  for (const [n, atOnce] of [
    [100, 100],
    [101, 100],
  ] as const) {
    test(`both sides of the budget: ${n} requests in one turn, ${atOnce} made at once (first pass and A62 wave)`, () => {
      const list = addresses(n);
      const first = new Simulation({ connectionTurnMs: 1 });
      for (const k of list) first.script(k, 'hang');
      first.update(list, RR);
      assert.deepEqual(connecting(first, list), list.slice(0, atOnce));
      first.advance(1);
      assert.deepEqual(connecting(first, list), list);

      const sim = failedTogether(list);
      sim.advance(1_000);
      assert.deepEqual(connecting(sim, list), list.slice(0, atOnce));
      sim.advance(1);
      assert.deepEqual(connecting(sim, list), list);
    });
  }

  test('a waiting request whose endpoint was removed meanwhile is never made; the others still are', () => {
    const list = addresses(250);
    const sim = failedTogether(list);
    sim.advance(1_000);
    assert.equal(sim.connectionPacer.waiting, 150);
    // A new list without the last 100 endpoints: their pick_first goes, with its subchannel.
    sim.update(list.slice(0, 150), RR);
    sim.advance(1);
    assert.deepEqual(connecting(sim, list), list.slice(0, 150));
    for (const k of list.slice(150)) {
      assert.equal(sim.subchannel(k).released, true);
      assert.equal(sim.subchannel(k).connectionRequests, 1, `${k}: asked only in the first pass`);
    }
    sim.advance(1);
    assert.equal(sim.connectionPacer.waiting, 0);
    assert.deepEqual(connecting(sim, list), list.slice(0, 150));
  });

  test('a connection that comes up while its request waits is taken (A62: READY ends sticky TF); no request is made for it', () => {
    const list = addresses(150);
    const sim = failedTogether(list);
    sim.advance(1_000);
    const late = list[149]!;
    assert.equal(sim.subchannel(late).state, 'IDLE');
    // Another channel's attempt on the shared subchannel connects it before this channel's request runs.
    sim.subchannel(late).setState('READY');
    assert.equal(sim.state, 'READY');
    sim.advance(1);
    assert.equal(sim.subchannel(late).connectionRequests, 1, 'asked only in the first pass');
    assert.deepEqual(connecting(sim, list), list.slice(0, 149));
  });
});
