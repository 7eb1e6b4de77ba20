// XXH64 (https://github.com/Cyan4973/xxHash, doc/xxhash_spec.md) on 32-bit halves. BigInt arithmetic allocates
// and costs tens of nanoseconds per operation, so every 64-bit value here is a pair of int32 locals (high,
// low): V8 keeps those in registers, and the ring builder hashes millions of keys without allocating. Values
// that must outlive a helper call live in an Int32Array, never in module `let`s, which V8 would box.

import { MAX_UINT32 } from '../core/uint32.js';
import { joinU64, splitU64 } from './u64.js';
import { Utf8Buffer } from './utf8.js';

// The five primes as (high, low) int32 halves.
const P1H = 0x9e3779b1 | 0;
const P1L = 0x85ebca87 | 0;
const P2H = 0xc2b2ae3d | 0;
const P2L = 0x27d4eb4f | 0;
const P3H = 0x165667b1 | 0;
const P3L = 0x9e3779f9 | 0;
const P4H = 0x85ebca77 | 0;
const P4L = 0xc2b2ae63 | 0;
const P5H = 0x27d4eb2f | 0;
const P5L = 0x165667c5 | 0;

// A module-local binding of the shared constant: read on every 32-bit carry in the hot loops.
const UINT32_MAX = MAX_UINT32;

// High word of (ah, al) * P mod 2^64 for each prime P: Math.imul gives the low word and the cross terms; the
// high half of al * P's low word comes from 16-bit pieces (Hacker's Delight mulhu), all in int32 arithmetic
// (every partial sum is below 2^32, so wrapping loses nothing). One small function per prime keeps every
// call site inlinable (V8 caps the bytecode it inlines into one function), which is most of the speed.
function mulP1(ah: number, al: number): number {
  const u0 = al & 0xffff;
  const u1 = al >>> 16;
  const t = (Math.imul(u1, 0xca87) + (Math.imul(u0, 0xca87) >>> 16)) | 0;
  const w1 = (Math.imul(u0, 0x85eb) + (t & 0xffff)) | 0;
  return (Math.imul(u1, 0x85eb) + (t >>> 16) + (w1 >>> 16) + Math.imul(al, P1H) + Math.imul(ah, P1L)) | 0;
}

function mulP2(ah: number, al: number): number {
  const u0 = al & 0xffff;
  const u1 = al >>> 16;
  const t = (Math.imul(u1, 0xeb4f) + (Math.imul(u0, 0xeb4f) >>> 16)) | 0;
  const w1 = (Math.imul(u0, 0x27d4) + (t & 0xffff)) | 0;
  return (Math.imul(u1, 0x27d4) + (t >>> 16) + (w1 >>> 16) + Math.imul(al, P2H) + Math.imul(ah, P2L)) | 0;
}

function mulP3(ah: number, al: number): number {
  const u0 = al & 0xffff;
  const u1 = al >>> 16;
  const t = (Math.imul(u1, 0x79f9) + (Math.imul(u0, 0x79f9) >>> 16)) | 0;
  const w1 = (Math.imul(u0, 0x9e37) + (t & 0xffff)) | 0;
  return (Math.imul(u1, 0x9e37) + (t >>> 16) + (w1 >>> 16) + Math.imul(al, P3H) + Math.imul(ah, P3L)) | 0;
}

function mulP5(ah: number, al: number): number {
  const u0 = al & 0xffff;
  const u1 = al >>> 16;
  const t = (Math.imul(u1, 0x67c5) + (Math.imul(u0, 0x67c5) >>> 16)) | 0;
  const w1 = (Math.imul(u0, 0x1656) + (t & 0xffff)) | 0;
  return (Math.imul(u1, 0x1656) + (t >>> 16) + (w1 >>> 16) + Math.imul(al, P5H) + Math.imul(ah, P5L)) | 0;
}

function read32(b: Uint8Array, i: number): number {
  return b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24);
}

// The four accumulators of the 32-byte stripe loop, as [v1 high, v1 low, v2 high, …].
const lanes = new Int32Array(8);

/** lanes[j] = round(lanes[j], the 8 bytes at i): acc += input * P2; acc = rotl(acc, 31); acc *= P1. */
function stripeRound(j: number, bytes: Uint8Array, i: number): void {
  const ih = read32(bytes, i + 4);
  const il = read32(bytes, i);
  const kh = mulP2(ih, il);
  const kl = Math.imul(il, P2L);
  const s = (lanes[j + 1]! >>> 0) + (kl >>> 0);
  let al = s | 0;
  let ah = (lanes[j]! + kh + (s > UINT32_MAX ? 1 : 0)) | 0;
  const rh = (ah << 31) | (al >>> 1);
  al = (al << 31) | (ah >>> 1);
  ah = rh;
  lanes[j] = mulP1(ah, al);
  lanes[j + 1] = Math.imul(al, P1L);
}

/** lanes = (seed + P1 + P2, seed + P2, seed, seed - P1). */
function initLanes(seedHi: number, seedLo: number): void {
  // seed + P1 + P2
  let s = (seedLo >>> 0) + (P1L >>> 0) + (P2L >>> 0);
  lanes[0] = (seedHi + P1H + P2H + Math.floor(s / 0x100000000)) | 0;
  lanes[1] = s | 0;
  s = (seedLo >>> 0) + (P2L >>> 0);
  lanes[2] = (seedHi + P2H + (s > UINT32_MAX ? 1 : 0)) | 0;
  lanes[3] = s | 0;
  lanes[4] = seedHi;
  lanes[5] = seedLo;
  // seed - P1: borrow when the low half underflows.
  s = (seedLo >>> 0) - (P1L >>> 0);
  lanes[6] = (seedHi - P1H - (s < 0 ? 1 : 0)) | 0;
  lanes[7] = s | 0;
}

/**
 * XXH64 of `bytes[0, length)` with the 64-bit seed (seedHi, seedLo as uint32 or int32 bit patterns). Writes
 * the result to `out` as [high 32 bits, low 32 bits]. Allocation-free.
 */
export function xxh64Into(
  bytes: Uint8Array,
  length: number,
  out: Uint32Array,
  seedHi: number = 0,
  seedLo: number = 0,
): void {
  seedHi |= 0;
  seedLo |= 0;
  let hh: number;
  let hl: number;
  let i = 0;
  let s: number;
  let t: number;
  if (length >= 32) {
    initLanes(seedHi, seedLo);
    const limit = length - 32;
    do {
      stripeRound(0, bytes, i);
      stripeRound(2, bytes, i + 8);
      stripeRound(4, bytes, i + 16);
      stripeRound(6, bytes, i + 24);
      i += 32;
    } while (i <= limit);
    // h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)
    hh = 0;
    hl = 0;
    for (let j = 0; j < 8; j += 2) {
      const r = j === 0 ? 1 : j === 2 ? 7 : j === 4 ? 12 : 18;
      const vh = lanes[j]!;
      const vl = lanes[j + 1]!;
      const rh = (vh << r) | (vl >>> (32 - r));
      const rl = (vl << r) | (vh >>> (32 - r));
      s = (hl >>> 0) + (rl >>> 0);
      hl = s | 0;
      hh = (hh + rh + (s > UINT32_MAX ? 1 : 0)) | 0;
    }
    // Merge each lane: h = (h ^ round(0, v)) * P1 + P4.
    for (let j = 0; j < 8; j += 2) {
      const vh = lanes[j]!;
      const vl = lanes[j + 1]!;
      let kh = mulP2(vh, vl);
      let kl = Math.imul(vl, P2L);
      t = (kh << 31) | (kl >>> 1);
      kl = (kl << 31) | (kh >>> 1);
      kh = t;
      t = mulP1(kh, kl);
      kl = Math.imul(kl, P1L);
      kh = t;
      hh ^= kh;
      hl ^= kl;
      t = mulP1(hh, hl);
      hl = Math.imul(hl, P1L);
      s = (hl >>> 0) + (P4L >>> 0);
      hl = s | 0;
      hh = (t + P4H + (s > UINT32_MAX ? 1 : 0)) | 0;
    }
  } else {
    // h = seed + P5
    s = (seedLo >>> 0) + (P5L >>> 0);
    hl = s | 0;
    hh = (seedHi + P5H + (s > UINT32_MAX ? 1 : 0)) | 0;
  }
  // h += length (exact: a Uint8Array is far shorter than 2^53 bytes).
  s = (hl >>> 0) + (length >>> 0);
  hl = s | 0;
  hh = (hh + Math.floor(length / 0x100000000) + (s > UINT32_MAX ? 1 : 0)) | 0;
  // 8-byte lanes: h ^= round(0, lane); h = rotl(h, 27) * P1 + P4.
  for (; i + 8 <= length; i += 8) {
    const ih = read32(bytes, i + 4);
    const il = read32(bytes, i);
    let kh = mulP2(ih, il);
    let kl = Math.imul(il, P2L);
    t = (kh << 31) | (kl >>> 1);
    kl = (kl << 31) | (kh >>> 1);
    kh = t;
    t = mulP1(kh, kl);
    kl = Math.imul(kl, P1L);
    hh ^= t;
    hl ^= kl;
    t = (hh << 27) | (hl >>> 5);
    hl = (hl << 27) | (hh >>> 5);
    hh = t;
    t = mulP1(hh, hl);
    hl = Math.imul(hl, P1L);
    s = (hl >>> 0) + (P4L >>> 0);
    hl = s | 0;
    hh = (t + P4H + (s > UINT32_MAX ? 1 : 0)) | 0;
  }
  // One 4-byte lane: h ^= lane * P1; h = rotl(h, 23) * P2 + P3.
  if (i + 4 <= length) {
    const il = read32(bytes, i);
    hh ^= mulP1(0, il);
    hl ^= Math.imul(il, P1L);
    t = (hh << 23) | (hl >>> 9);
    hl = (hl << 23) | (hh >>> 9);
    hh = t;
    t = mulP2(hh, hl);
    hl = Math.imul(hl, P2L);
    s = (hl >>> 0) + (P3L >>> 0);
    hl = s | 0;
    hh = (t + P3H + (s > UINT32_MAX ? 1 : 0)) | 0;
    i += 4;
  }
  // Single bytes: h ^= byte * P5; h = rotl(h, 11) * P1.
  for (; i < length; i++) {
    const b = bytes[i]!;
    hh ^= mulP5(0, b);
    hl ^= Math.imul(b, P5L);
    t = (hh << 11) | (hl >>> 21);
    hl = (hl << 11) | (hh >>> 21);
    hh = t;
    t = mulP1(hh, hl);
    hl = Math.imul(hl, P1L);
    hh = t;
  }
  // Avalanche: h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3; h ^= h >> 32.
  hl ^= hh >>> 1;
  t = mulP2(hh, hl);
  hl = Math.imul(hl, P2L);
  hh = t;
  hl ^= (hh << 3) | (hl >>> 29);
  hh ^= hh >>> 29;
  t = mulP3(hh, hl);
  hl = Math.imul(hl, P3L);
  hh = t;
  hl ^= hh;
  out[0] = hh;
  out[1] = hl;
}

const seedWords = new Uint32Array(2);
const result = new Uint32Array(2);
const text = new Utf8Buffer();

/**
 * XXH64 of `input` (a string is hashed as its UTF-8 bytes) with `seed` (default 0, the seed A42 uses),
 * as an unsigned 64-bit bigint. The seed is taken mod 2^64, as the C API's uint64 parameter would.
 */
export function xxh64(input: Uint8Array | string, seed?: bigint): bigint {
  let seedHigh = 0;
  let seedLow = 0;
  if (seed !== undefined) {
    splitU64(seed, seedWords);
    seedHigh = seedWords[0]!;
    seedLow = seedWords[1]!;
  }
  if (typeof input === 'string') {
    text.set(input);
    xxh64Into(text.bytes, text.length, result, seedHigh, seedLow);
  } else {
    xxh64Into(input, input.length, result, seedHigh, seedLow);
  }
  return joinU64(result[0]!, result[1]!);
}
