import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { Attributes, ENDPOINT_WEIGHT, type Endpoint, parseAddress } from '../../src/core/index.js';
import { PF_WEIGHTED_SHUFFLING_ENV, weightedShuffleEndpoints } from '../../src/policies/index.js';
import { Simulation, seededRandom } from '../../src/sim/index.js';
import { CHI2_999, chiSquare } from '../support/stats.js';

const saved = process.env[PF_WEIGHTED_SHUFFLING_ENV];
afterEach(() => {
  if (saved === undefined) delete process.env[PF_WEIGHTED_SHUFFLING_ENV];
  else process.env[PF_WEIGHTED_SHUFFLING_ENV] = saved;
});

const KEYS = ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80', '10.0.0.4:80'];
const WEIGHTS = [1, 2, 3, 4];
const CHANNELS = 10_000;

/** The address each of 10,000 channels (seeds 1..10,000) asks to connect first, counted per address. */
function firstPicks(weights: readonly (number | undefined)[]): number[] {
  const counts = KEYS.map(() => 0);
  const endpoints = KEYS.map((k, i) => ({
    addresses: [k],
    ...(weights[i] !== undefined ? { attributes: { weight: weights[i] } } : {}),
  }));
  for (let seed = 1; seed <= CHANNELS; seed++) {
    const sim = new Simulation({ seed });
    sim.update(endpoints, [{ pick_first: { shuffleAddressList: true } }]);
    const first = [...sim.subchannels.values()].find((s) => s.connectionRequests > 0)!.key;
    counts[KEYS.indexOf(first)]!++;
  }
  return counts;
}

const weighted = (weight: number | undefined, key: string): Endpoint => ({
  addresses: [parseAddress(key)],
  attributes: weight === undefined ? Attributes.EMPTY : Attributes.EMPTY.with(ENDPOINT_WEIGHT, weight),
});

describe('A113 pick_first weighted random shuffling (GRPC_EXPERIMENTAL_PF_WEIGHTED_SHUFFLING)', () => {
  // Chi-square with 3 degrees of freedom: 16.27 is the 0.999 quantile (p = 0.001).
  test('on by default: over 10,000 channels the first endpoint follows weights 1:2:3:4 (chi-square < 16.27)', () => {
    delete process.env[PF_WEIGHTED_SHUFFLING_ENV];
    assert.equal(CHI2_999[3], 16.27);
    const counts = firstPicks(WEIGHTS);
    const stat = chiSquare(counts, WEIGHTS);
    assert.ok(stat < 16.27, `chi-square ${stat.toFixed(2)} against weights 1:2:3:4 (counts ${counts})`);
    // And it is not the uniform shuffle: against equal weights the statistic is far past the critical value.
    assert.ok(chiSquare(counts, [1, 1, 1, 1]) > 16.27, `counts ${counts} look uniform`);
  });

  test('GRPC_EXPERIMENTAL_PF_WEIGHTED_SHUFFLING=false: the A62 uniform shuffle, weights ignored', () => {
    process.env[PF_WEIGHTED_SHUFFLING_ENV] = 'false';
    const counts = firstPicks(WEIGHTS);
    const stat = chiSquare(counts, [1, 1, 1, 1]);
    assert.ok(stat < 16.27, `chi-square ${stat.toFixed(2)} against equal weights (counts ${counts})`);
    assert.ok(chiSquare(counts, WEIGHTS) > 16.27, `counts ${counts} follow the weights`);
  });

  test('"true" (any case) is the default; anything else keeps it', () => {
    for (const value of ['TRUE', ' true ', 'yes']) {
      process.env[PF_WEIGHTED_SHUFFLING_ENV] = value;
      const counts = firstPicks([1, 1, 1, 7]);
      assert.ok(chiSquare(counts, [1, 1, 1, 7]) < 16.27, `${JSON.stringify(value)}: counts ${counts}`);
    }
  });

  test('an endpoint without a weight attribute weighs 1', () => {
    delete process.env[PF_WEIGHTED_SHUFFLING_ENV];
    const counts = firstPicks([undefined, 3, undefined, undefined]);
    const stat = chiSquare(counts, [1, 3, 1, 1]);
    assert.ok(stat < 16.27, `chi-square ${stat.toFixed(2)} against 1:3:1:1 (counts ${counts})`);
  });

  test('the whole order is a weighted sample without replacement: P(C, then B) = 1/4 × 2/3 for weights 1, 2, 1', () => {
    const random = seededRandom(11);
    const endpoints = [weighted(1, '1.1.1.1:1'), weighted(2, '2.2.2.2:1'), weighted(1, '3.3.3.3:1')];
    const orders = new Map<string, number>();
    const runs = 60_000;
    for (let i = 0; i < runs; i++) {
      const key = weightedShuffleEndpoints(endpoints, random)
        .map((e) => ('host' in e.addresses[0]! ? e.addresses[0].host[0] : '?'))
        .join('');
      orders.set(key, (orders.get(key) ?? 0) + 1);
    }
    // Efraimidis–Spirakis: each next endpoint is drawn with probability weight / (weights still left).
    const expected: Record<string, number> = {
      '123': (1 / 4) * (2 / 3),
      '132': (1 / 4) * (1 / 3),
      '213': (2 / 4) * (1 / 2),
      '231': (2 / 4) * (1 / 2),
      '312': (1 / 4) * (1 / 3),
      '321': (1 / 4) * (2 / 3),
    };
    const names = Object.keys(expected);
    const stat = chiSquare(
      names.map((k) => orders.get(k) ?? 0),
      names.map((k) => expected[k]!),
    );
    assert.ok(
      stat < CHI2_999[5]!,
      `chi-square ${stat.toFixed(2)} (5 d.o.f., critical 20.52): ${[...orders]}`,
    );
  });

  test('UQ1.31 weights near 2^31 keep their ratio (keys compared as ln(u) / weight)', () => {
    const random = seededRandom(5);
    // The two shares of a locality split 3:1, as the cds tree writes them (1.0 = 2^31).
    const endpoints = [weighted(1_610_612_736, '1.1.1.1:1'), weighted(536_870_912, '2.2.2.2:1')];
    let first = 0;
    const runs = 20_000;
    for (let i = 0; i < runs; i++) {
      if (weightedShuffleEndpoints(endpoints, random)[0] === endpoints[0]) first++;
    }
    const stat = chiSquare([first, runs - first], [3, 1]);
    assert.ok(stat < 10.83, `chi-square ${stat.toFixed(2)} (1 d.o.f., critical 10.83): ${first} of ${runs}`);
  });

  test('u = 0 (the RNG may return it) does not throw: ties keep the list order', () => {
    const endpoints = [weighted(1, '1.1.1.1:1'), weighted(5, '2.2.2.2:1'), weighted(2, '3.3.3.3:1')];
    assert.deepEqual(
      weightedShuffleEndpoints(endpoints, () => 0),
      endpoints,
    );
  });
});
