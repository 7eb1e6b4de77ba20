// Issue 25 §5: a channel places at most a turn's worth of endpoints (1,000) in the turn an update arrives in,
// however the update divides them: small lists are placed at once while the turn has budget left, and wait for
// a later turn once it has none, as big lists do. ring_hash (A42) places its list the same way and builds its
// ring once, when the list is complete. The channel keeps its old picker meanwhile and then sees the picker the
// update applied in one turn makes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Simulation, type SimulationOptions } from '../../src/sim/index.js';
import { manyAddresses as addresses, hashedPicks, picks } from '../support/sim-picks.js';

const RR = [{ round_robin: {} }];
const RING_HASH = [{ ring_hash_experimental: {} }];
const WRR_LOCALITY = [{ xds_wrr_locality_experimental: { childPolicy: RR } }];
/** A42 ring_hash lists of this many endpoints or more are placed over turns (SPREAD_MIN_ENDPOINTS, pinned). */
const SPREAD_AT = 500;
const A = '192.168.0.1:80';
const B = '192.168.0.2:80';

/** Lists of the given sizes, one after the other in the address space, as localities L0, L1, …. */
function localities(sizes: readonly number[]) {
  let from = 0;
  return sizes.flatMap((size, z) => {
    const keys = addresses(size, from);
    from += size;
    return keys.map((k) => ({ addresses: [k], attributes: { locality: `L${z}`, localityWeight: 1 } }));
  });
}

/** ring_hash targets of weighted_target, each given its own list of `size` endpoints. */
function ringTargets(sizes: readonly number[]) {
  const config = [
    {
      weighted_target_experimental: {
        targets: Object.fromEntries(sizes.map((_, t) => [`t${t}`, { weight: 1, childPolicy: RING_HASH }])),
      },
    },
  ];
  let from = 0;
  const endpoints = sizes.flatMap((size, t) => {
    const keys = addresses(size, from);
    from += size;
    return keys.map((k) => ({ addresses: [k], attributes: { path: [`t${t}`] } }));
  });
  return { config, endpoints };
}

/** How many endpoints each target's ring_hash holds (placed so far), by target. */
function ringSizes(sim: Simulation): number[] {
  return sim.describe()!.children!.map((c) => c.node.children?.length ?? 0);
}

/** Where a pick with each of `hashes` lands now (or the pick's type when it does not complete). */
function answers(sim: Simulation, hashes: readonly bigint[]): string[] {
  return hashes.map((hash) => {
    const p = sim.pick({ hash });
    return p.type === 'complete' ? p.address : p.type;
  });
}

const HASHES = Array.from(
  { length: 100 },
  (_, i) => (BigInt(i + 1) * 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn,
);

/** A sim serving A and B under `config`, turns of 1 ms unless told otherwise. */
function servingAB(config: unknown, options: SimulationOptions = {}): Simulation {
  const sim = new Simulation({ spreadTurnMs: 1, ...options });
  sim.update([A, B], config);
  sim.advance(1);
  return sim;
}

describe('small lists share the turn budget of 1,000 endpoints (issue 25 §5)', () => {
  test('threshold: with 1 endpoint of the budget left a list of 499 is placed at once; with none left a list of 1 waits', () => {
    const sim = new Simulation({ spreadTurnMs: 1 });
    // 499 + 499 + 1 = 999 placed, 1 left: the next 499 are placed too (1,498, none left); the last 1 waits.
    sim.update(localities([499, 499, 1, 499, 1]), WRR_LOCALITY);
    assert.equal(sim.subchannelsCreated, 1_498);
    assert.equal(sim.updateTurns.spreading, true);
    assert.equal(sim.history.length, 0, 'nothing reported before the update is complete');
    sim.advance(1);
    assert.equal(sim.updateTurns.spreading, false);
    assert.equal(sim.subchannelsCreated, 1_499);
    assert.equal(sim.state, 'READY');
    assert.equal(new Set(picks(sim, 5 * 1_499)).size, 1_499);
  });

  test('ten lists of 100 are placed in the turn; an eleventh waits for the next, with lists of any size after it', () => {
    const sim = new Simulation({ spreadTurnMs: 1 });
    sim.update(localities([...Array(11).fill(100), 2]), WRR_LOCALITY);
    assert.equal(sim.subchannelsCreated, 1_000);
    sim.advance(1);
    assert.equal(sim.subchannelsCreated, 1_102);
    assert.equal(sim.updateTurns.spreading, false);
  });

  test('a locality per endpoint: 1,000 one-endpoint lists in the turn, the rest in the next; re-delivered as they are, none wait', () => {
    const sim = new Simulation({ spreadTurnMs: 1 });
    const list = localities(Array(1_500).fill(1));
    sim.update(list, WRR_LOCALITY);
    assert.equal(sim.subchannelsCreated, 1_000);
    assert.equal(sim.history.length, 0);
    sim.advance(1);
    assert.equal(sim.subchannelsCreated, 1_500);
    assert.equal(sim.updateTurns.spreading, false);
    assert.equal(sim.state, 'READY');
    sim.update(list, WRR_LOCALITY);
    assert.equal(sim.updateTurns.spreading, false);
    assert.equal(sim.subchannelsCreated, 1_500);
    // A new endpoint in each of 1,001 localities: the last one waits a turn.
    const moved = list.map((e, i) => (i <= 1_000 ? { ...e, addresses: [addresses(1, 50_000 + i)[0]!] } : e));
    sim.advance(1);
    sim.update(moved, WRR_LOCALITY);
    assert.equal(sim.subchannelsCreated, 1_500 + 1_000);
    assert.equal(sim.updateTurns.spreading, true);
    sim.advance(1);
    assert.equal(sim.subchannelsCreated, 1_500 + 1_001);
    assert.equal(sim.updateTurns.spreading, false);
    const now = new Set(moved.map((e) => e.addresses[0]));
    for (const a of picks(sim, 3_000)) assert.ok(now.has(a), a);
  });

  test('the budget is per turn: the next turn places a small update at once again', () => {
    const sim = new Simulation({ spreadTurnMs: 1 });
    sim.update(localities([400, 400, 400]), WRR_LOCALITY);
    assert.equal(sim.subchannelsCreated, 1_200);
    sim.update(localities([400, 400, 400, 10]), WRR_LOCALITY);
    // The same turn: its budget is spent, and the new list of 10 waits.
    assert.equal(sim.subchannelsCreated, 1_200);
    sim.advance(1);
    assert.equal(sim.subchannelsCreated, 1_210);
    sim.update(localities([400, 400, 400, 20]), WRR_LOCALITY);
    assert.equal(sim.subchannelsCreated, 1_220);
    assert.equal(sim.updateTurns.spreading, false);
  });

  test('a waiting small list superseded by the next update: only the later list is ever placed', () => {
    const sim = new Simulation({ spreadTurnMs: 1 });
    const first = localities([400, 400, 400, 300]);
    sim.update(first, WRR_LOCALITY);
    assert.equal(sim.subchannelsCreated, 1_200);
    // The same turn, L3 moved to other addresses: L0–L2 repeat (nothing to place), L3 waits again.
    const second = [
      ...first.slice(0, 1_200),
      ...localities([300].concat()).map((e) => ({
        ...e,
        addresses: e.addresses.map((a) => a.replace(/^10\./, '11.')),
        attributes: { locality: 'L3', localityWeight: 1 },
      })),
    ];
    sim.update(second, WRR_LOCALITY);
    assert.equal(sim.subchannelsCreated, 1_200);
    sim.advance(1);
    assert.equal(sim.updateTurns.spreading, false);
    assert.equal(sim.subchannelsCreated, 1_500);
    assert.equal(sim.findSubchannel(addresses(1, 1_200)[0]!), undefined, 'the first L3 was never placed');
    assert.equal(new Set(picks(sim, 3_000)).size, 1_500);
  });
});

describe('ring_hash places a big list over turns (A42, issue 25 §5)', () => {
  test('threshold: a list of 499 replaces the ring in its own turn; one of 500 in the next, the old ring serving meanwhile', () => {
    for (const [size, spreads] of [
      [499, false],
      [500, true],
    ] as const) {
      const sim = servingAB(RING_HASH);
      const before = hashedPicks(sim, HASHES);
      assert.deepEqual(new Set(before), new Set([A, B]));
      sim.update(addresses(size), RING_HASH);
      assert.equal(sim.updateTurns.spreading, spreads, `${size}`);
      // Spread: nothing placed yet, and the old ring answers every hash; else the new list's ring (its
      // endpoints IDLE until a pick asks for them).
      assert.equal(sim.describe()!.children!.length, spreads ? 2 : size, `${size}`);
      const now = answers(sim, HASHES);
      if (spreads) assert.deepEqual(now, before);
      else assert.ok(!now.includes(A) && !now.includes(B), `${size}`);
      sim.advance(1);
      assert.equal(sim.updateTurns.spreading, false, `${size}`);
      assert.equal(sim.describe()!.children!.length, size, `${size}`);
      const list = new Set(addresses(size));
      for (const a of hashedPicks(sim, HASHES)) assert.ok(list.has(a), `${size}: ${a}`);
    }
  });

  test('a list of 2,500: 1,000 a turn, the old ring answering every hash until the third turn builds the new one', () => {
    const spread = servingAB(RING_HASH, { trace: true });
    const once = servingAB(RING_HASH, { spreadUpdates: false });
    const before = hashedPicks(spread, HASHES);
    hashedPicks(once, HASHES);
    const reports = spread.history.length;
    const list = addresses(2_500);
    spread.update(list, RING_HASH);
    once.update(list, RING_HASH);
    const rings = () => spread.traces.filter((t) => t.includes('ring_hash: built a ring')).length;
    for (let turn = 0; turn < 3; turn++) {
      assert.equal(spread.describe()!.children!.length, 2 + turn * 1_000, `turn ${turn}`);
      assert.deepEqual(answers(spread, HASHES), before, `the old ring answers (turn ${turn})`);
      assert.equal(spread.history.length, reports, `turn ${turn}`);
      assert.equal(rings(), 1, `turn ${turn}`);
      spread.advance(1);
    }
    assert.equal(spread.updateTurns.spreading, false);
    assert.equal(rings(), 2);
    once.advance(3);
    // The same ring (every endpoint's share of it) and the same answer for every hash as in one turn.
    assert.deepEqual(spread.describe(), once.describe());
    assert.deepEqual(hashedPicks(spread, HASHES), hashedPicks(once, HASHES));
  });

  test('a later list supersedes the spread one: the same ring as the later list applied in one turn', () => {
    const spread = servingAB(RING_HASH);
    const once = servingAB(RING_HASH, { spreadUpdates: false });
    const first = addresses(2_500);
    const second = addresses(2_200, 1_500); // shares 1,000 endpoints with the first
    for (const sim of [spread, once]) {
      sim.update(first, RING_HASH);
      sim.advance(1);
      sim.update(second, RING_HASH);
    }
    assert.equal(spread.updateTurns.spreading, true);
    spread.advance(5);
    once.advance(5);
    assert.equal(spread.updateTurns.spreading, false);
    assert.deepEqual(spread.describe(), once.describe());
    assert.deepEqual(hashedPicks(spread, HASHES), hashedPicks(once, HASHES));
  });

  test('the same list again while it is spread lets it go on; a later small list is applied at once', () => {
    const sim = servingAB(RING_HASH);
    const list = addresses(2_500);
    sim.update(list, RING_HASH);
    sim.advance(1);
    sim.update(list, RING_HASH);
    assert.equal(sim.describe()!.children!.length, 2 + 1_000);
    sim.advance(2);
    assert.equal(sim.updateTurns.spreading, false);
    assert.equal(sim.describe()!.children!.length, 2_500);
    sim.update(list, RING_HASH);
    sim.advance(1);
    sim.update([A, B], RING_HASH);
    assert.equal(sim.updateTurns.spreading, false);
    assert.equal(sim.describe()!.children!.length, 2);
    assert.deepEqual(new Set(hashedPicks(sim, HASHES)), new Set([A, B]));
  });

  test('the list in use delivered again (a resolver re-resolving) is not spread: the channel reports at once (A42)', () => {
    const sim = servingAB(RING_HASH);
    const list = addresses(SPREAD_AT);
    sim.update(list, RING_HASH);
    sim.advance(2);
    assert.equal(sim.updateTurns.spreading, false);
    sim.update(list, RING_HASH);
    assert.equal(sim.updateTurns.spreading, false, 'nothing to place: no turns held');
    assert.equal(sim.describe()!.children!.length, SPREAD_AT);
    // With another config the same endpoints are a new list again: spread.
    sim.update(list, [{ ring_hash_experimental: { minRingSize: 2048 } }]);
    assert.equal(sim.updateTurns.spreading, true);
  });

  test('small ring_hash lists share the turn budget: 400 + 400 + 400 at once, a fourth 400 in the next turn', () => {
    const { config, endpoints } = ringTargets([400, 400, 400, 400]);
    const sim = new Simulation({ spreadTurnMs: 1 });
    sim.update(endpoints, config);
    assert.deepEqual(ringSizes(sim), [400, 400, 400, 0]);
    assert.equal(sim.history.length, 0);
    sim.advance(1);
    assert.deepEqual(ringSizes(sim), [400, 400, 400, 400]);
    assert.equal(sim.updateTurns.spreading, false);
    assert.equal(sim.state, 'IDLE');
  });
});
