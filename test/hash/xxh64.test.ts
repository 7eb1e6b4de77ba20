import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { xxh64, xxh64Into } from '../../src/hash/index.js';
import { xxh64 as publicXxh64 } from '../../src/index.js';
import { referenceXxh64, sanityBuffer } from './xxh64-reference.js';

const PRIME32 = 2654435761n;

// Published vectors: xxHash's own sanity check (cli/xsum_sanity_check.c: its test buffer, lengths and seeds)
// and well-known string digests (xxHash README / the xxhsum tool).
const SANITY: readonly [length: number, seed: bigint, digest: bigint][] = [
  [0, 0n, 0xef46db3751d8e999n],
  [0, PRIME32, 0xac75fda2929b17efn],
  [1, 0n, 0xe934a84adb052768n],
  [1, PRIME32, 0x5014607643a9b4c3n],
  [4, 0n, 0x9136a0dca57457een],
  [14, 0n, 0x8282dcc4994e35c8n],
  [14, PRIME32, 0xc3bd6bf63deb6df0n],
  [222, 0n, 0xb641ae8cb691c174n],
  [222, PRIME32, 0x20cb8ab7ae10c14an],
];

const STRINGS: readonly [text: string, seed: bigint, digest: bigint][] = [
  ['', 0n, 0xef46db3751d8e999n],
  ['a', 0n, 0xd24ec4f1a98c6e5bn],
  ['abc', 0n, 0x44bc2cf5ad770999n],
  ['ABC', 0n, 0xe66ae7354fcfee98n],
  ['xxhash', 0n, 0x32dd38952c4bc720n],
  ['abcdefghijklmnopqrstuvwxyz12345', 0n, 0x467605901b01d6f6n],
  ['Nobody inspects the spammish repetition', 0n, 0xfbcea83c8a378bf1n],
  ['', 668718853n, 0x04e830582a31a119n],
  ['a', 191961062n, 0x6e05ba2887c97977n],
  ['abcdefghijklmnopqrstuvwxyz12345', 877380273n, 0x37b562ec5715e132n],
];

describe('XXH64 (A42 "LB Policy Config": XX_HASH is XXH64() with seed 0)', () => {
  test('the BigInt reference in this test reproduces every published vector', () => {
    for (const [length, seed, digest] of SANITY) {
      assert.equal(referenceXxh64(sanityBuffer(length), seed), digest, `sanity buffer, length ${length}`);
    }
    for (const [text, seed, digest] of STRINGS) assert.equal(referenceXxh64(text, seed), digest, text);
  });

  test('xxh64 reproduces the published vectors, for bytes and for strings', () => {
    for (const [length, seed, digest] of SANITY) assert.equal(xxh64(sanityBuffer(length), seed), digest);
    for (const [text, seed, digest] of STRINGS) assert.equal(xxh64(text, seed), digest, JSON.stringify(text));
  });

  test('the seed defaults to 0; the package root exports xxh64', () => {
    assert.equal(xxh64('abc'), xxh64('abc', 0n));
    assert.equal(publicXxh64, xxh64);
    assert.equal(typeof xxh64(''), 'bigint');
  });

  test('every input length 0..100 (every code path: stripes, 8-, 4- and 1-byte tails) matches the reference', () => {
    for (let length = 0; length <= 100; length++) {
      const bytes = sanityBuffer(length);
      for (const seed of [0n, 1n, PRIME32, 0x9e3779b185ebca87n, (1n << 64n) - 1n]) {
        assert.equal(xxh64(bytes, seed), referenceXxh64(bytes, seed), `length ${length}, seed ${seed}`);
      }
    }
  });

  test('random inputs up to 300 bytes with random seeds match the reference', () => {
    let state = 12345;
    const next = () => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return state;
    };
    for (let i = 0; i < 300; i++) {
      const bytes = new Uint8Array(next() % 301).map(() => next() & 0xff);
      const seed = (BigInt(next()) << 32n) | BigInt(next());
      assert.equal(xxh64(bytes, seed), referenceXxh64(bytes, seed));
    }
  });

  test('strings are hashed as UTF-8, non-ASCII included', () => {
    for (const text of [
      'é',
      'ümlaut-key',
      '日本語のキー',
      '🙂 emoji',
      'mixed ascii and ünïcödé that is longer than 32 bytes',
    ]) {
      const utf8 = new TextEncoder().encode(text);
      assert.equal(xxh64(text), xxh64(utf8));
      assert.equal(xxh64(text), referenceXxh64(utf8));
    }
    // A long string exercises the buffer growing.
    const long = `${'x'.repeat(5000)}ÿ`;
    assert.equal(xxh64(long), referenceXxh64(new TextEncoder().encode(long)));
  });

  test('results are unsigned 64-bit (values >= 2^63 stay positive); seeds are taken mod 2^64', () => {
    assert.ok(xxh64('a') >= 1n << 63n, 'd24ec4f1… has its top bit set');
    assert.equal(xxh64('abc', -1n), xxh64('abc', (1n << 64n) - 1n));
    assert.equal(xxh64('abc', 1n << 64n), xxh64('abc', 0n));
  });

  test('xxh64Into (the allocation-free form the ring builder uses) gives the same words', () => {
    const out = new Uint32Array(2);
    for (let length = 0; length <= 70; length += 7) {
      const bytes = sanityBuffer(length);
      xxh64Into(bytes, length, out);
      assert.equal((BigInt(out[0]!) << 32n) | BigInt(out[1]!), referenceXxh64(bytes));
    }
    // Only the first `length` bytes count.
    const bytes = sanityBuffer(40);
    xxh64Into(bytes, 10, out);
    assert.equal((BigInt(out[0]!) << 32n) | BigInt(out[1]!), referenceXxh64(bytes.subarray(0, 10)));
  });
});
