// A deliberately plain XXH64, written from the specification (xxHash's doc/xxhash_spec.md) with BigInt and
// no attention to speed: the independent reference the fast implementation and the ring are checked
// against. It is itself checked against the published vectors in xxh64.test.ts.

const MASK = (1n << 64n) - 1n;
const P1 = 0x9e3779b185ebca87n;
const P2 = 0xc2b2ae3d27d4eb4fn;
const P3 = 0x165667b19e3779f9n;
const P4 = 0x85ebca77c2b2ae63n;
const P5 = 0x27d4eb2f165667c5n;

const rotl = (x: bigint, r: bigint) => ((x << r) | (x >> (64n - r))) & MASK;
const mul = (a: bigint, b: bigint) => (a * b) & MASK;
const add = (a: bigint, b: bigint) => (a + b) & MASK;

function readLE(bytes: Uint8Array, at: number, n: number): bigint {
  let v = 0n;
  for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[at + i]!);
  return v;
}

function round(acc: bigint, lane: bigint): bigint {
  return mul(rotl(add(acc, mul(lane, P2)), 31n), P1);
}

function mergeAccumulator(acc: bigint, value: bigint): bigint {
  return add(mul(acc ^ round(0n, value), P1), P4);
}

export function referenceXxh64(input: Uint8Array | string, seed = 0n): bigint {
  const bytes = typeof input === 'string' ? new TextEncoder().encode(input) : input;
  const len = bytes.length;
  seed &= MASK;
  let i = 0;
  let acc: bigint;
  if (len >= 32) {
    let v1 = add(add(seed, P1), P2);
    let v2 = add(seed, P2);
    let v3 = seed;
    let v4 = (seed - P1) & MASK;
    while (i + 32 <= len) {
      v1 = round(v1, readLE(bytes, i, 8));
      v2 = round(v2, readLE(bytes, i + 8, 8));
      v3 = round(v3, readLE(bytes, i + 16, 8));
      v4 = round(v4, readLE(bytes, i + 24, 8));
      i += 32;
    }
    acc = add(add(add(rotl(v1, 1n), rotl(v2, 7n)), rotl(v3, 12n)), rotl(v4, 18n));
    acc = mergeAccumulator(acc, v1);
    acc = mergeAccumulator(acc, v2);
    acc = mergeAccumulator(acc, v3);
    acc = mergeAccumulator(acc, v4);
  } else {
    acc = add(seed, P5);
  }
  acc = add(acc, BigInt(len));
  for (; i + 8 <= len; i += 8) {
    acc ^= round(0n, readLE(bytes, i, 8));
    acc = add(mul(rotl(acc, 27n), P1), P4);
  }
  if (i + 4 <= len) {
    acc ^= mul(readLE(bytes, i, 4), P1);
    acc = add(mul(rotl(acc, 23n), P2), P3);
    i += 4;
  }
  for (; i < len; i++) {
    acc ^= mul(BigInt(bytes[i]!), P5);
    acc = mul(rotl(acc, 11n), P1);
  }
  acc ^= acc >> 33n;
  acc = mul(acc, P2);
  acc ^= acc >> 29n;
  acc = mul(acc, P3);
  acc ^= acc >> 32n;
  return acc;
}

/** xxHash's sanity-check buffer (cli/xsum_sanity_check.c): byte i is the top byte of PRIME32 * PRIME64^i. */
export function sanityBuffer(length: number): Uint8Array {
  const out = new Uint8Array(length);
  let gen = 2654435761n;
  for (let i = 0; i < length; i++) {
    out[i] = Number(gen >> 56n);
    gen = (gen * 11400714785074694797n) & MASK;
  }
  return out;
}
