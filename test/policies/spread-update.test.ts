// Issue 25 §5: a petiole's big endpoint list is placed over several event-loop turns (the simulator's turns take
// `spreadTurnMs` of virtual time here), the channel keeping its old picker until the update is complete. A61
// "Endpoint list updates" says what the complete update is; the channel must never see a picker of a
// half-applied list, so the final state is compared with the same update applied in one turn.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Simulation, type SimulationOptions } from '../../src/sim/index.js';
import { manyAddresses as addresses, picks, tally } from '../support/sim-picks.js';

const RR = [{ round_robin: {} }];
const LEAST_REQUEST = [{ least_request_experimental: {} }];
const WRR = [{ weighted_round_robin: { blackoutPeriod: '0s', weightUpdatePeriod: '1s' } }];
const WRR_LOCALITY = [{ xds_wrr_locality_experimental: { childPolicy: RR } }];
const A = '192.168.0.1:80';
const B = '192.168.0.2:80';

/** The addresses as endpoints of one locality (for xds_wrr_locality). */
function inLocality(locality: string, keys: readonly string[]) {
  return keys.map((k) => ({ addresses: [k], attributes: { locality, localityWeight: 1 } }));
}

/** A sim serving A and B with round_robin (READY), turns of 1 ms unless told otherwise. */
function servingAB(options: SimulationOptions = {}, config: unknown = RR): Simulation {
  const sim = new Simulation({ spreadTurnMs: 1, ...options });
  sim.update([A, B], config);
  sim.advance(0);
  assert.equal(sim.state, 'READY');
  return sim;
}

/**
 * What a channel sees of a tree: its state, the live view, the subchannels, and how many of the next `n` picks
 * go to each address (how many, not in which order: a picker starts at a random endpoint, and a one-turn update
 * builds more pickers on the way, so the two sims' random sequences differ).
 */
function observed(sim: Simulation, n: number) {
  return {
    state: sim.state,
    tree: sim.describe(),
    picks: n === 0 ? {} : tally(picks(sim, n)),
    created: sim.subchannelsCreated,
    released: [...sim.subchannels.values()].filter((s) => s.released).length,
  };
}

describe('a big endpoint list is placed over several turns (issue 25 §5)', () => {
  test('2,500 endpoints: 1,000 per turn, the old picker serving until the third turn completes the update', () => {
    const sim = servingAB();
    const historyBefore = sim.history.length;
    const list = addresses(2_500);
    assert.equal(sim.update(list, RR), true);
    // The update's own turn places none of them; the channel keeps the picker over A and B.
    assert.equal(sim.subchannelsCreated, 2);
    assert.equal(sim.updateTurns.spreading, true);
    sim.advance(1);
    // The first turn placed 1,000 endpoints (each one's pick_first created its subchannel); A and B still serve.
    assert.equal(sim.subchannelsCreated, 2 + 1_000);
    assert.deepEqual(tally(picks(sim, 4)), { [A]: 2, [B]: 2 });
    assert.equal(sim.subchannel(A).released, false);
    sim.advance(1);
    assert.equal(sim.subchannelsCreated, 2 + 2_000);
    assert.deepEqual(tally(picks(sim, 4)), { [A]: 2, [B]: 2 });
    assert.equal(sim.history.length, historyBefore);
    sim.advance(1);
    // Complete: A and B (not in the list) are gone, and the channel's first new picker came with the last turn
    // (more follow as the last 500 connect).
    assert.equal(sim.subchannelsCreated, 2 + 2_500);
    assert.equal(sim.updateTurns.spreading, false);
    assert.equal(sim.subchannel(A).released, true);
    assert.equal(sim.history[historyBefore]?.at, sim.now);
    assert.equal(sim.state, 'READY');
    assert.deepEqual(new Set(picks(sim, 2_500)), new Set(list));
  });

  test('the final state equals the same update applied in one turn', () => {
    const list = [...addresses(1_200), A, ...addresses(1_300, 5_000)]; // 2,501 endpoints
    const spread = servingAB();
    const once = servingAB({ spreadUpdates: false });
    spread.update(list, RR);
    once.update(list, RR);
    assert.equal(spread.updateTurns.spreading, true);
    assert.equal(once.updateTurns.spreading, false);
    spread.advance(3);
    once.advance(3);
    assert.equal(spread.updateTurns.spreading, false);
    assert.deepEqual(observed(spread, 2 * 2_501), observed(once, 2 * 2_501));
  });

  test('least_request spreads a big list the same way (A48 petiole)', () => {
    const list = addresses(1_500);
    const spread = servingAB({}, LEAST_REQUEST);
    const once = servingAB({ spreadUpdates: false }, LEAST_REQUEST);
    spread.update(list, LEAST_REQUEST);
    once.update(list, LEAST_REQUEST);
    assert.deepEqual(new Set([...picks(spread, 20), A, B]), new Set([A, B]));
    spread.advance(2);
    once.advance(2);
    assert.equal(spread.updateTurns.spreading, false);
    // Its picks are random (power of two choices): the tree and the subchannels are compared.
    assert.deepEqual(observed(spread, 0), observed(once, 0));
    assert.deepEqual(new Set(picks(spread, 3_000)).size > 1_000, true);
  });

  test('weighted_round_robin spreads a big list the same way (A58 petiole)', () => {
    const list = addresses(1_500);
    const spread = servingAB({}, WRR);
    const once = servingAB({ spreadUpdates: false }, WRR);
    spread.update(list, WRR);
    once.update(list, WRR);
    assert.deepEqual(tally(picks(spread, 4)), { [A]: 2, [B]: 2 });
    spread.advance(2);
    once.advance(2);
    assert.equal(spread.updateTurns.spreading, false);
    // Without load reports every endpoint has the mean weight: an even rotation, as in one turn.
    assert.deepEqual(observed(spread, 2 * 1_500), observed(once, 2 * 1_500));
  });

  test('a later small update supersedes the spread one at once: the rest of the big list is never placed', () => {
    const sim = servingAB();
    sim.update(addresses(2_500), RR);
    sim.advance(1);
    assert.equal(sim.subchannelsCreated, 2 + 1_000);
    const created = sim.subchannelsCreated;
    sim.update([B, addresses(1, 9_000)[0]!], RR);
    // Applied in its own turn; the 1,000 endpoints the big update had placed are released with A.
    assert.equal(sim.subchannelsCreated, created + 1);
    assert.equal(sim.subchannel(A).released, true);
    assert.equal(sim.subchannel(addresses(1)[0]!).released, true);
    sim.advance(10);
    assert.equal(sim.subchannelsCreated, created + 1);
    assert.equal(sim.updateTurns.spreading, false);
    assert.deepEqual(new Set(picks(sim, 4)), new Set([B, addresses(1, 9_000)[0]!]));
  });

  test('a later big update supersedes the spread one: the result is the later list applied in one turn', () => {
    const first = addresses(2_500);
    const second = addresses(2_200, 1_500); // shares 1,000 endpoints with the first
    const spread = servingAB();
    const once = servingAB({ spreadUpdates: false });
    spread.update(first, RR);
    spread.advance(1);
    spread.update(second, RR);
    once.update(first, RR);
    once.advance(1);
    once.update(second, RR);
    assert.equal(spread.updateTurns.spreading, true);
    spread.advance(5);
    once.advance(5);
    assert.equal(spread.updateTurns.spreading, false);
    // The same tree and picks; the spread update made fewer subchannels on the way: only the first 1,000 of the
    // first list were placed before the second superseded it.
    const { created, released, ...state } = observed(spread, 2 * 2_200);
    const { created: _c, released: _r, ...onceState } = observed(once, 2 * 2_200);
    assert.deepEqual(state, onceState);
    assert.equal(created, 2 + 1_000 + 2_200);
    assert.equal(released, 2 + 1_000);
  });

  test('the same big list delivered again while it is spread does not start it over', () => {
    const sim = servingAB();
    const list = addresses(2_500);
    sim.update(list, RR);
    sim.advance(1);
    sim.update(list, RR);
    assert.equal(sim.subchannelsCreated, 2 + 1_000);
    sim.advance(2);
    assert.equal(sim.subchannelsCreated, 2 + 2_500);
    assert.equal(sim.updateTurns.spreading, false);
  });

  test('destroying the tree mid-spread leaves no step behind', () => {
    const sim = servingAB();
    sim.update(addresses(2_500), RR);
    sim.advance(1);
    const reports = sim.history.length;
    sim.destroy();
    sim.advance(10);
    assert.equal(sim.history.length, reports, 'nothing held is reported for a tree that is gone');
    assert.equal(sim.subchannelsCreated, 2 + 1_000);
    assert.equal(sim.updateTurns.spreading, false);
    assert.equal(
      [...sim.subchannels.values()].every((s) => s.released),
      true,
    );
  });

  test('turn budget: a list of 1,000 is placed in one turn, one of 1,001 in two', () => {
    const sim = servingAB();
    sim.update(addresses(1_000), RR);
    assert.equal(sim.subchannelsCreated, 2);
    sim.advance(1);
    assert.equal(sim.updateTurns.spreading, false);
    assert.equal(sim.subchannelsCreated, 2 + 1_000);
    assert.deepEqual(new Set(picks(sim, 1_000)), new Set(addresses(1_000)));
    sim.update(addresses(1_001, 20_000), RR);
    sim.advance(1);
    assert.equal(sim.updateTurns.spreading, true);
    assert.equal(sim.subchannelsCreated, 2 + 1_000 + 1_000);
    sim.advance(1);
    assert.equal(sim.updateTurns.spreading, false);
    assert.equal(sim.subchannelsCreated, 2 + 1_000 + 1_001);
  });

  test('threshold: a list of 499 is placed in the turn its update arrives in, one of 500 in the next', () => {
    for (const [size, spreads] of [
      [499, false],
      [500, true],
    ] as const) {
      const sim = servingAB();
      const list = addresses(size);
      sim.update(list, RR);
      assert.equal(sim.updateTurns.spreading, spreads, `${size}`);
      assert.equal(sim.subchannelsCreated, spreads ? 2 : 2 + size, `${size}`);
      assert.equal(sim.subchannel(A).released, !spreads, `${size}`);
      sim.advance(1);
      assert.equal(sim.subchannelsCreated, 2 + size, `${size}`);
      assert.equal(sim.subchannel(A).released, true, `${size}`);
      assert.deepEqual(new Set(picks(sim, size)), new Set(list), `${size}`);
    }
  });

  test('several lists share a turn: 700 and 500 under xds_wrr_locality take two turns', () => {
    const sim = new Simulation({ spreadTurnMs: 1 });
    sim.update(
      [...inLocality('L1', addresses(700)), ...inLocality('L2', addresses(500, 50_000))],
      WRR_LOCALITY,
    );
    assert.equal(sim.subchannelsCreated, 0);
    sim.advance(1);
    assert.equal(sim.subchannelsCreated, 1_000);
    assert.equal(sim.history.length, 0);
    sim.advance(1);
    assert.equal(sim.subchannelsCreated, 1_200);
    assert.equal(sim.state, 'READY');
    assert.equal(new Set(picks(sim, 4_800)).size, 1_200);
  });

  test('ten localities of 1,000 under xds_wrr_locality: one per turn, one report, equal to one turn', () => {
    const localities = Array.from({ length: 10 }, (_, z) => inLocality(`L${z}`, addresses(1_000, z * 1_000)));
    const spread = new Simulation({ spreadTurnMs: 1 });
    const once = new Simulation({ spreadUpdates: false });
    spread.update(localities.flat(), WRR_LOCALITY);
    once.update(localities.flat(), WRR_LOCALITY);
    for (let turn = 0; turn <= 9; turn++) {
      assert.equal(spread.subchannelsCreated, turn * 1_000);
      assert.equal(spread.history.length, 0, `no report before the update is complete (turn ${turn})`);
      spread.advance(1);
    }
    once.advance(10);
    assert.equal(spread.updateTurns.spreading, false);
    // The first report came with the last turn (more follow as the last locality's endpoints connect).
    assert.equal(spread.history[0]?.at, 10);
    assert.equal(spread.state, 'READY');
    assert.deepEqual(spread.describe(), once.describe());
    assert.equal(new Set(picks(spread, 40_000)).size, 10_000);
  });
});
