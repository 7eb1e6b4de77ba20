import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Attributes, type Endpoint, parseAddress } from '../../src/core/index.js';
import { shuffleEndpoints } from '../../src/policies/index.js';
import { Simulation, seededRandom } from '../../src/sim/index.js';
import { chiSquare } from '../support/stats.js';

const ep = (...keys: string[]): Endpoint => ({
  addresses: keys.map((k) => parseAddress(k)),
  attributes: Attributes.EMPTY,
});
const name = (e: Endpoint) => e.addresses.map((a) => ('host' in a ? a.host : a.path)).join('+');

describe('pick_first shuffle (A62 "Enable random shuffling of address list", A61 "Flattening")', () => {
  test('all 6 permutations of 3 endpoints appear, uniformly (chi-square, 5 d.o.f., p > 0.001)', () => {
    const random = seededRandom(42);
    const endpoints = [ep('1.1.1.1:1'), ep('2.2.2.2:1'), ep('3.3.3.3:1')];
    const counts = new Map<string, number>();
    const runs = 60_000;
    for (let i = 0; i < runs; i++) {
      const key = shuffleEndpoints(endpoints, random).map(name).join(',');
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    assert.equal(counts.size, 6);
    const stat = chiSquare([...counts.values()], [1, 1, 1, 1, 1, 1]);
    assert.ok(stat < 20.52, `chi-square ${stat.toFixed(2)} exceeds the 0.001 critical value 20.52`);
  });

  test('a two-endpoint list shuffles both ways, about evenly', () => {
    const random = seededRandom(7);
    const endpoints = [ep('1.1.1.1:1'), ep('2.2.2.2:1')];
    let swapped = 0;
    const runs = 10_000;
    for (let i = 0; i < runs; i++) if (name(shuffleEndpoints(endpoints, random)[0]!) === '2.2.2.2') swapped++;
    const stat = chiSquare([swapped, runs - swapped], [1, 1]);
    assert.ok(
      stat < 10.83,
      `chi-square ${stat.toFixed(2)} exceeds the 0.001 critical value 10.83 (swapped ${swapped})`,
    );
  });

  test('shuffles endpoints but never the addresses inside one', () => {
    const random = seededRandom(3);
    const endpoints = [ep('1.1.1.1:1', '1.1.1.2:1'), ep('2.2.2.2:1', '2.2.2.3:1'), ep('3.3.3.3:1')];
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const order = shuffleEndpoints(endpoints, random).map(name);
      seen.add(order.join(','));
      for (const e of order) assert.ok(['1.1.1.1+1.1.1.2', '2.2.2.2+2.2.2.3', '3.3.3.3'].includes(e));
    }
    assert.equal(seen.size, 6);
  });

  test('the policy shuffles on each update when configured, and never when not', () => {
    const firstRequested = (shuffle: boolean, seed: number) => {
      const sim = new Simulation({ seed });
      sim.update(['1.1.1.1:1', '2.2.2.2:1', '3.3.3.3:1'], [{ pick_first: { shuffleAddressList: shuffle } }]);
      return [...sim.subchannels.values()].find((s) => s.connectionRequests > 0)!.key;
    };
    const shuffled = new Set<string>();
    const plain = new Set<string>();
    for (let seed = 1; seed <= 40; seed++) {
      shuffled.add(firstRequested(true, seed));
      plain.add(firstRequested(false, seed));
    }
    assert.equal(shuffled.size, 3);
    assert.deepEqual([...plain], ['1.1.1.1:1']);
  });
});
