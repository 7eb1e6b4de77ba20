import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Attributes, ConfigError, type Endpoint, parseAddress, Registry } from '../../src/core/index.js';
import { defaultRegistry } from '../../src/policies/default-registry.js';
import {
  parseRandomSubsettingConfig,
  RANDOM_SUBSETTING,
  registerAllPolicies,
  rendezvousSubset,
} from '../../src/policies/index.js';
import { Simulation, seededRandom } from '../../src/sim/index.js';
import { referenceXxh64 } from '../hash/xxh64-reference.js';

const registry = registerAllPolicies(new Registry());
const RR = [{ round_robin: {} }];
const config = (subsetSize: number) => [{ [RANDOM_SUBSETTING]: { subsetSize, childPolicy: RR } }];
const server = (i: number) => `10.${i >> 8}.${i & 255}.1:443`;
const servers = (n: number) => Array.from({ length: n }, (_, i) => server(i));
const ep = (...keys: string[]): Endpoint => ({
  addresses: keys.map(parseAddress),
  attributes: Attributes.EMPTY,
});

/** The addresses the channel holds a subchannel for now (round_robin connects to every endpoint it gets). */
function connected(sim: Simulation): Set<string> {
  return new Set([...sim.subchannels].filter(([, s]) => !s.released).map(([k]) => k));
}

/** The seed a policy draws first in a Simulation with this seed: two uint32 words from the seeded source. */
function policySeed(simSeed: number): bigint {
  const random = seededRandom(simSeed);
  const high = BigInt(Math.floor(random() * 2 ** 32));
  const low = BigInt(Math.floor(random() * 2 ** 32));
  return (high << 32n) | low;
}

/** A68's pseudocode, written out with BigInt XXH64 from the test's own reference. */
function referenceSubset(keys: readonly string[], size: number, seed: bigint): string[] {
  if (size >= keys.length) return [...keys];
  return keys
    .map((k) => ({ k, h: referenceXxh64(k, seed) }))
    .sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : 0))
    .slice(0, size)
    .map((x) => x.k);
}

describe('random_subsetting_experimental config (A68 "LB Policy Config and Parameters")', () => {
  const P = `$[0].${RANDOM_SUBSETTING}`;
  const parse = (json: unknown) => parseRandomSubsettingConfig(json, P, registry);

  test('subsetSize and childPolicy, by JSON or proto names; a decimal string is a uint32 in proto3 JSON', () => {
    assert.equal(parse({ subsetSize: 10, childPolicy: RR }).subsetSize, 10);
    assert.equal(parse({ subset_size: '3', child_policy: RR }).subsetSize, 3);
    assert.equal(parse({ subsetSize: 1, childPolicy: RR }).childPolicy.factory.name, 'round_robin');
    assert.equal(parse({ subsetSize: 0xffff_ffff, childPolicy: RR }).subsetSize, 0xffff_ffff);
  });

  test('both fields are required; subset_size must be greater than 0 and a uint32; errors name the path', () => {
    const cases: [unknown, string, RegExp][] = [
      [{ childPolicy: RR }, `${P}.subsetSize`, /required/],
      [{ subsetSize: 0, childPolicy: RR }, `${P}.subsetSize`, /out of range \[1, 4294967295\]/],
      [{ subsetSize: 2 ** 32, childPolicy: RR }, `${P}.subsetSize`, /out of range/],
      [{ subsetSize: 2.5, childPolicy: RR }, `${P}.subsetSize`, /integer/],
      [{ subsetSize: 10 }, `${P}.childPolicy`, /required/],
      [{ subsetSize: 10, childPolicy: [{ no_such_policy: {} }] }, `${P}.childPolicy`, /no_such_policy/],
      [
        { subsetSize: 10, childPolicy: [{ ring_hash_experimental: { minRingSize: 0 } }] },
        `${P}.childPolicy[0]`,
        /./,
      ],
      ['ten', P, /object/],
    ];
    for (const [json, path, message] of cases) {
      assert.throws(
        () => parse(json),
        (e: unknown) => e instanceof ConfigError && e.path.startsWith(path) && message.test(e.message),
        JSON.stringify(json),
      );
    }
  });

  test('registered in the default registry (so in every Simulation and in grpc-js through register())', () => {
    assert.equal(defaultRegistry().get(RANDOM_SUBSETTING)?.name, RANDOM_SUBSETTING);
    const sim = new Simulation();
    assert.equal(sim.update(servers(3), config(2)), true);
  });
});

describe('A68 "Subsetting algorithm": rendezvous hashing with XXH64', () => {
  test('the subset is the subset_size endpoints of lowest XXH64(first address, seed), in hash order', () => {
    const random = seededRandom(68);
    const keys = servers(50);
    for (let round = 0; round < 20; round++) {
      const high = Math.floor(random() * 2 ** 32);
      const low = Math.floor(random() * 2 ** 32);
      const seed = (BigInt(high) << 32n) | BigInt(low);
      const size = 1 + (round % 12);
      const got = rendezvousSubset(
        keys.map((k) => ep(k)),
        size,
        high,
        low,
      ).map((e) => e.addresses.map((a) => ('host' in a ? `${a.host}:${a.port}` : '')).join());
      assert.deepEqual(got, referenceSubset(keys, size, seed), `seed ${seed}`);
    }
  });

  test('subset_size ≥ the endpoint count: every endpoint, as given (both sides: 5 of 5, 4 of 5)', () => {
    const list = servers(5).map((k) => ep(k));
    assert.equal(rendezvousSubset(list, 5, 1, 2), list);
    assert.equal(rendezvousSubset(list, 6, 1, 2), list);
    const four = rendezvousSubset(list, 4, 1, 2);
    assert.equal(four.length, 4);
    assert.notEqual(four, list);
  });

  test('A61: an endpoint is hashed by its first address and handed on whole', () => {
    const single = servers(20).map((k) => ep(k));
    const multi = single.map((_, i) => ep(server(i), `[fd00::${i + 1}]:443`));
    const a = rendezvousSubset(single, 5, 7, 9);
    const b = rendezvousSubset(multi, 5, 7, 9);
    assert.deepEqual(
      b.map((e) => e.addresses.length),
      [2, 2, 2, 2, 2],
    );
    assert.deepEqual(
      b.map((e) => multi.indexOf(e)),
      a.map((e) => single.indexOf(e)),
    );
  });

  test('an endpoint with no address is left out and does not count toward subset_size', () => {
    const empty: Endpoint = { addresses: [], attributes: Attributes.EMPTY };
    const list = [ep(server(1)), empty, ep(server(2))];
    assert.deepEqual(rendezvousSubset(list, 2, 0, 0), [list[0], list[2]]);
  });

  test('the seed is per policy: two channels differ; one channel keeps its subset whatever the list order', () => {
    const keys = servers(100);
    const a = new Simulation({ seed: 1 });
    const b = new Simulation({ seed: 2 });
    a.update(keys, config(10));
    b.update(keys, config(10));
    assert.notDeepEqual([...connected(a)].sort(), [...connected(b)].sort());
    const before = [...connected(a)].sort();
    a.update([...keys].reverse(), config(10));
    assert.deepEqual([...connected(a)].sort(), before);
    assert.equal(connected(a).size, 10);
  });
});

describe('A68 in the simulator: 1,000 clients, 100 servers, subset_size 10', () => {
  const CLIENTS = 1_000;
  const K = 10;
  const clients: Simulation[] = [];
  const before: Set<string>[] = [];

  test('every server has 100 ± 47 connections: Binomial(1000, 10/100), 5 standard deviations (9.49)', () => {
    // Each client's seed makes its subset a uniformly random 10 of the 100 servers, independent of the
    // others, so a server's connection count is Binomial(C = 1000, p = k/N = 0.1): mean C·p = 100,
    // σ = √(C·p·(1−p)) = 9.49. All 100 servers within 5σ fails with probability < 100 × 5.7e-7.
    const counts = new Map<string, number>(servers(100).map((k) => [k, 0]));
    for (let seed = 1; seed <= CLIENTS; seed++) {
      const sim = new Simulation({ seed });
      sim.update(servers(100), config(K));
      const subset = connected(sim);
      assert.equal(subset.size, K);
      for (const k of subset) counts.set(k, counts.get(k)! + 1);
      clients.push(sim);
      before.push(subset);
    }
    const values = [...counts.values()];
    assert.equal(
      values.reduce((a, b) => a + b, 0),
      CLIENTS * K,
    );
    const sigma = Math.sqrt(CLIENTS * 0.1 * 0.9);
    for (const [k, c] of counts) assert.ok(Math.abs(c - 100) <= 5 * sigma, `${k}: ${c} connections`);
    // And spread as a binomial is, not more evenly: the sample deviation is within 25 % of σ.
    const sd = Math.sqrt(values.reduce((a, c) => a + (c - 100) ** 2, 0) / values.length);
    assert.ok(
      Math.abs(sd - sigma) < 0.25 * sigma,
      `standard deviation ${sd.toFixed(2)} vs σ ${sigma.toFixed(2)}`,
    );
  });

  test('scaling to 110 servers moves exactly the connections rendezvous hashing says', () => {
    assert.equal(clients.length, CLIENTS, 'runs after the distribution test');
    let moved = 0;
    for (let c = 0; c < CLIENTS; c++) {
      const sim = clients[c]!;
      const seed = policySeed(c + 1);
      const old = before[c]!;
      // The channel's subset is A68's, from the seed this policy drew.
      assert.deepEqual([...old].sort(), referenceSubset(servers(100), K, seed).sort(), `client ${c}`);
      sim.update(servers(110), config(K));
      const now = connected(sim);
      assert.equal(now.size, K);
      // The new subset is the k lowest of (old subset ∪ the 10 new servers): no other server's score changed.
      const expected = referenceSubset([...old, ...servers(110).slice(100)], K, seed);
      assert.deepEqual([...now].sort(), expected.sort(), `client ${c}`);
      // So only new servers come in, each beating the client's previous k-th lowest score …
      const kth = [...old].reduce((m, k) => {
        const h = referenceXxh64(k, seed);
        return h > m ? h : m;
      }, 0n);
      const added = [...now].filter((k) => !old.has(k));
      for (const k of added) {
        assert.ok(servers(110).slice(100).includes(k), `client ${c}: ${k} is not a new server`);
        assert.ok(referenceXxh64(k, seed) < kth, `client ${c}: ${k} does not beat the previous k-th`);
      }
      // … and as many old ones leave: those with the highest scores.
      const removed = [...old].filter((k) => !now.has(k));
      assert.equal(removed.length, added.length);
      const kept = [...old].filter((k) => now.has(k));
      const maxKept = kept.reduce((m, k) => (referenceXxh64(k, seed) > m ? referenceXxh64(k, seed) : m), 0n);
      for (const k of removed)
        assert.ok(referenceXxh64(k, seed) > maxKept, `client ${c}: ${k} left before a worse one`);
      moved += added.length;
    }
    // Each of the 10 new servers lands in a client's subset with probability 10/110: about
    // 1000 × 10 × 10/110 = 909 connections move (Binomial-like, σ ≈ 29), of 10,000.
    assert.ok(Math.abs(moved - 909) < 5 * 29, `${moved} connections moved`);
  });
});
