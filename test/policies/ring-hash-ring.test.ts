import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildRing, entriesPerEndpoint, type Ring } from '../../src/policies/index.js';
import { seededRandom } from '../../src/sim/index.js';
import { referenceXxh64 } from '../hash/xxh64-reference.js';

const U64_MAX = (1n << 64n) - 1n;
const ENVOY_MAX = 8_388_608;

/** [hash, endpoint index] of every entry, in ring order. */
function entries(ring: Ring): [bigint, number][] {
  return Array.from({ length: ring.size }, (_, i) => [ring.hashAt(i), ring.endpointAt(i)]);
}

/** The endpoint a hash lands on. */
function lookup(ring: Ring, hash: bigint): number {
  const index = ring.find(Number(hash >> 32n), Number(hash & 0xffffffffn));
  return ring.endpointAt(index);
}

/**
 * Envoy's ring construction written out plainly (BigInt XXH64 from the test's own reference, a comparator
 * sort on bigints): the independent reference the typed-array ring is checked against.
 */
function referenceRing(keys: string[], weights: number[], min: number, max: number): [bigint, number][] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const normalized = weights.map((w) => w / sum);
  const minNormalized = Math.min(1, ...normalized);
  const scale = Math.min(Math.ceil(minNormalized * min) / minNormalized, max);
  const ring: [bigint, number][] = [];
  let current = 0;
  let target = 0;
  keys.forEach((key, e) => {
    target += scale * normalized[e]!;
    for (let n = 0; current < target; n++, current++) ring.push([referenceXxh64(`${key}_${n}`), e]);
  });
  // Stable: equal hashes keep list order.
  return ring.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

const BASIC = [
  '127.0.0.1:90',
  '127.0.0.1:91',
  '127.0.0.1:92',
  '127.0.0.1:93',
  '127.0.0.1:94',
  '127.0.0.1:95',
];

describe('ring construction (A42 "Ring Construction": the same algorithm as Envoy)', () => {
  test("reproduces Envoy's published ring for six hosts with minimum_ring_size 12", () => {
    // Envoy ring_hash_lb_test "Basic": hosts 127.0.0.1:90..95, equal weights.
    const ring = buildRing(BASIC, [1, 1, 1, 1, 1, 1], 12, ENVOY_MAX);
    assert.deepEqual(entries(ring), [
      [833437586790550860n, 4],
      [928266305478181108n, 2],
      [1033482794131418490n, 0],
      [3551244743356806947n, 5],
      [3851675632748031481n, 3],
      [5583722120771150861n, 1],
      [6311230543546372928n, 1],
      [7700377290971790572n, 3],
      [13144177310400110813n, 5],
      [13444792449719432967n, 2],
      [15516499411664133160n, 4],
      [16117243373044804889n, 0],
    ]);
  });

  test("reproduces Envoy's rings for uneven hosts and for weights 1, 2, 3 on a ring of exactly 6", () => {
    // Envoy "UnevenHosts": two hosts, minimum ring 3 -> 2 entries each.
    assert.deepEqual(entries(buildRing(['127.0.0.1:80', '127.0.0.1:81'], [1, 1], 3, ENVOY_MAX)), [
      [5454692015285649509n, 0],
      [7859399908942313493n, 1],
      [13838424394637650569n, 0],
      [16064866803292627174n, 1],
    ]);
    assert.deepEqual(entries(buildRing(['127.0.0.1:81', '127.0.0.1:82'], [1, 1], 3, ENVOY_MAX)), [
      [7859399908942313493n, 0],
      [8241336090459785962n, 1],
      [12882406409176325258n, 1],
      [16064866803292627174n, 0],
    ]);
    // Envoy "HostWeightedTinyRing".
    const weighted = buildRing(['127.0.0.1:90', '127.0.0.1:91', '127.0.0.1:92'], [1, 2, 3], 6, 6);
    assert.equal(weighted.size, 6);
    for (const [hash, endpoint] of [
      [928266305478181108n, 2],
      [4443673547860492590n, 2],
      [5583722120771150861n, 1],
      [6311230543546372928n, 1],
      [13444792449719432967n, 2],
      [16117243373044804889n, 0],
    ] as const) {
      assert.equal(lookup(weighted, hash), endpoint, `${hash}`);
    }
  });

  test('A76 hash keys replace the address in the ring keys (Envoy\'s hash_key ring for keys "90".."95")', () => {
    const ring = buildRing(['90', '91', '92', '93', '94', '95'], [1, 1, 1, 1, 1, 1], 12, ENVOY_MAX);
    assert.deepEqual(
      entries(ring).map(([, e]) => e),
      [5, 5, 3, 4, 3, 2, 0, 2, 1, 0, 1, 4],
    );
    assert.equal(ring.hashAt(0), 1975508444536362413n);
    assert.equal(ring.hashAt(11), 15364271037087512980n);
  });

  test('matches an independent reference for mixed weights, IPv6 and non-ASCII keys, and many sizes', () => {
    const random = seededRandom(42);
    const cases: [string[], number[], number, number][] = [
      [['[2001:db8::1]:443', '[2001:db8::2]:443', '10.0.0.1:80'], [1, 1, 1], 1024, 4096],
      [['ключ-один', '鍵二', '🙂'], [3, 1, 2], 100, 1000],
      [['10.0.0.1:80', '10.0.0.2:80'], [1, 1000], 1024, 4096],
      [['a'], [7], 1, 1],
      [['a', 'b', 'c'], [1, 1, 1], 1, 1],
    ];
    for (let c = 0; c < 6; c++) {
      const n = 1 + Math.floor(random() * 60);
      const keys = Array.from({ length: n }, (_, i) => `10.1.${c}.${i}:${8000 + i}`);
      const weights = keys.map(() => 1 + Math.floor(random() * 20));
      const min = 1 + Math.floor(random() * 3000);
      cases.push([keys, weights, min, min + Math.floor(random() * 4000)]);
    }
    for (const [keys, weights, min, max] of cases) {
      assert.deepEqual(entries(buildRing(keys, weights, min, max)), referenceRing(keys, weights, min, max));
    }
  });

  test('exact ring sizes for several weight mixes', () => {
    const sizes = (w: number[], min: number, max: number) => Array.from(entriesPerEndpoint(w, min, max));
    assert.deepEqual(sizes([1], 1024, 4096), [1024]);
    assert.deepEqual(sizes([1, 3], 1024, 4096), [256, 768]);
    // ceil(1024 / 3) = 342 entries for the lightest endpoint, so the ring grows past the minimum to 1026.
    assert.deepEqual(sizes([1, 1, 1], 1024, 4096), [342, 342, 342]);
    assert.deepEqual(sizes([1, 2, 3], 1024, 4096), [171, 342, 513]);
    assert.deepEqual(sizes([1, 1000], 1024, 4096), [2, 2000]);
    assert.deepEqual(sizes([5, 1, 1], 10, 20), [10, 2, 2]);
    // The A42 locality example (weights 6, 3, 6, 2): scale 1028.5, so 1029 entries.
    const a42 = sizes([6, 3, 6, 2], 1024, 4096);
    assert.deepEqual(a42, [363, 182, 363, 121]);
    assert.equal(
      a42.reduce((a, b) => a + b),
      1029,
    );
    // Capped at the maximum: 10,000 equal endpoints share 4096 entries (some get none).
    const many = sizes(new Array(10_000).fill(1), 1024, 4096);
    assert.equal(
      many.reduce((a, b) => a + b),
      4096,
    );
    assert.ok(many.every((c) => c <= 1));
    assert.deepEqual(sizes([1, 1, 1], 1, 1), [1, 0, 0]);
    // Envoy's running double sum: 1000 x (4096 x 0.001) ends a hair above 4096, so the ring holds 4097
    // entries, one past maxRingSize, exactly as Envoy's and C-core's do.
    const drift = sizes(new Array(1000).fill(1), 4096, 4096);
    assert.equal(
      drift.reduce((a, b) => a + b),
      4097,
    );
    const keys = Array.from({ length: 1000 }, (_, i) => `k${i}`);
    assert.equal(referenceRing(keys, new Array(1000).fill(1), 4096, 4096).length, 4097);
  });
});

describe('ring lookup (A42 "Picker Behavior": the first entry whose hash is >= the request hash)', () => {
  const ring = buildRing(BASIC, [1, 1, 1, 1, 1, 1], 12, ENVOY_MAX);

  test('hash 0, hash 2^64-1 (wraps to the first entry), an exact entry, and one past it', () => {
    // The same lookups Envoy's "Basic" test makes.
    assert.equal(lookup(ring, 0n), 4);
    assert.equal(lookup(ring, U64_MAX), 4);
    assert.equal(lookup(ring, 3551244743356806947n), 5);
    assert.equal(lookup(ring, 3551244743356806948n), 3);
    assert.equal(lookup(ring, 16117243373044804889n), 0, 'the last entry itself');
    assert.equal(lookup(ring, 16117243373044804890n), 4, 'past the last entry wraps');
  });

  test('unsigned order: entries with the top bit set sort after smaller ones, and are found', () => {
    const hashes = entries(ring).map(([h]) => h);
    assert.ok(hashes.some((h) => h >= 1n << 63n) && hashes.some((h) => h < 1n << 63n));
    for (let i = 1; i < hashes.length; i++) assert.ok(hashes[i - 1]! < hashes[i]!, 'ascending as unsigned');
    // 2^63 lands on the first entry >= 2^63 (a signed comparison would see it as the smallest value).
    assert.equal(lookup(ring, 1n << 63n), 5);
    assert.equal(lookup(ring, (1n << 63n) - 1n), 5);
    assert.equal(lookup(ring, 13144177310400110813n - 1n), 5);
  });

  test('agrees with a linear scan for random hashes and hashes next to every entry, on rings of many sizes', () => {
    const random = seededRandom(9);
    for (const size of [1, 2, 3, 5, 64, 1000, 4096, 10_007]) {
      const keys = Array.from({ length: 37 }, (_, i) => `192.168.0.${i}:80`);
      const r = buildRing(
        keys,
        keys.map((_, i) => 1 + (i % 5)),
        size,
        size,
      );
      const all = entries(r);
      const scan = (h: bigint) => {
        // The first entry >= h; none means wrapping to entry 0.
        return Math.max(
          all.findIndex(([x]) => x >= h),
          0,
        );
      };
      const probes: bigint[] = [0n, U64_MAX, 1n << 63n, (1n << 32n) - 1n, 1n << 32n];
      for (const [h] of all.slice(0, 200)) probes.push(h, h + 1n, h - 1n);
      for (let i = 0; i < 300; i++) {
        probes.push((BigInt(Math.floor(random() * 2 ** 32)) << 32n) | BigInt(Math.floor(random() * 2 ** 32)));
      }
      for (const h of probes) {
        const value = h & U64_MAX;
        assert.equal(
          r.find(Number(value >> 32n), Number(value & 0xffffffffn)),
          scan(value),
          `size ${size}, ${value}`,
        );
      }
    }
  });

  test('endpoints sharing a hash key keep list order on their equal hashes (deterministic ring)', () => {
    const r = buildRing(['same', 'same', 'other'], [1, 1, 1], 3, 3);
    const all = entries(r);
    const sameHash = referenceXxh64('same_0');
    assert.deepEqual(
      all.filter(([h]) => h === sameHash).map(([, e]) => e),
      [0, 1],
    );
    assert.equal(lookup(r, sameHash), 0);
  });

  test('compact storage: at most 16 bytes per entry, 4096 and 1,048,576 entries alike', () => {
    const keys = Array.from({ length: 1024 }, (_, i) => `10.0.${i >> 8}.${i & 255}:50051`);
    for (const size of [4096, 1 << 20]) {
      const r = buildRing(keys, new Array(1024).fill(1), size, size);
      assert.equal(r.size, size);
      assert.ok(r.byteLength / r.size <= 16, `${r.byteLength / r.size} bytes per entry`);
    }
  });
});
