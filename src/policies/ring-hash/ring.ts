import { joinU64 } from '../../hash/u64.js';
import { Utf8Buffer } from '../../hash/utf8.js';
import { xxh64Into } from '../../hash/xxh64.js';

/**
 * The ring exactly as Envoy (and gRPC C-core) build it (A42 "Ring Construction"): each endpoint gets
 * entries in proportion to its normalized weight, keyed `"<hash key>_<n>"` and hashed with XXH64 seed 0,
 * then all entries are sorted by hash as unsigned 64-bit values.
 *
 * Stored compactly, without a bigint in sight: each entry is three consecutive uint32s (hash high word, hash
 * low word, endpoint index), so a lookup's last probes and the endpoint it returns share a cache line; a
 * bucket index over the top bits of the hash narrows every lookup to about two entries. 12 bytes per entry
 * plus 1-2 for the index.
 */
export class Ring {
  /** Number of entries. */
  readonly size: number;
  /** Entries per endpoint, by endpoint index. */
  readonly entriesPerEndpoint: Uint32Array;
  /** [high, low, endpoint] per entry, in ring order. */
  private readonly entries: Uint32Array;
  /** buckets[b] is the first entry whose hash's top bits are >= b; the last element is `size`. */
  private readonly buckets: Uint32Array;
  private readonly bucketShift: number;

  /** @internal Use {@link buildRing}: `entries` sorted, `buckets` its index over the top `bucketBits` bits. */
  constructor(
    entries: Uint32Array,
    entriesPerEndpoint: Uint32Array,
    buckets: Uint32Array,
    bucketBits: number,
  ) {
    this.size = entries.length / 3;
    this.entries = entries;
    this.entriesPerEndpoint = entriesPerEndpoint;
    this.buckets = buckets;
    this.bucketShift = 32 - bucketBits;
  }

  /**
   * The index of the first entry whose hash is >= (high, low) as unsigned 64-bit values, wrapping to 0
   * past the last entry (A42: "the subchannel on the ring that is closest to the request's hash").
   */
  find(high: number, low: number): number {
    const b = high >>> this.bucketShift;
    let lo = this.buckets[b]!;
    let hi = this.buckets[b + 1]!;
    const entries = this.entries;
    // Lower bound over [lo, hi): every entry before the bucket is smaller, every one after it larger.
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const h = entries[mid * 3]!;
      if (h < high || (h === high && entries[mid * 3 + 1]! < low)) lo = mid + 1;
      else hi = mid;
    }
    return lo === this.size ? 0 : lo;
  }

  /** The endpoint index of entry `i`. */
  endpointAt(i: number): number {
    return this.entries[i * 3 + 2]!;
  }

  /** The hash of entry `i` (for tests and diagnostics; allocates a bigint). */
  hashAt(i: number): bigint {
    return joinU64(this.entries[i * 3]!, this.entries[i * 3 + 1]!);
  }

  /** Bytes held by the ring's arrays. */
  get byteLength(): number {
    return this.entries.byteLength + this.buckets.byteLength + this.entriesPerEndpoint.byteLength;
  }
}

/**
 * Entries per endpoint for the given weights and ring size bounds, by Envoy's rule: normalize the weights,
 * scale = min(ceil(minNormalized * minRingSize) / minNormalized, maxRingSize), and give endpoint i the
 * entries that take a running count up to the running target sum(scale * normalized weight).
 */
export function entriesPerEndpoint(
  weights: ArrayLike<number>,
  minRingSize: number,
  maxRingSize: number,
): Uint32Array {
  const n = weights.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += weights[i]!;
  // The same double arithmetic, in the same order, as Envoy and C-core, so the counts match theirs exactly.
  let minNormalized = 1;
  for (let i = 0; i < n; i++) minNormalized = Math.min(minNormalized, weights[i]! / sum);
  const scale = Math.min(Math.ceil(minNormalized * minRingSize) / minNormalized, maxRingSize);
  const counts = new Uint32Array(n);
  let current = 0;
  let target = 0;
  for (let i = 0; i < n; i++) {
    target += scale * (weights[i]! / sum);
    // `while (current < target) current++` in closed form.
    if (current < target) {
      const next = Math.ceil(target);
      counts[i] = next - current;
      current = next;
    }
  }
  return counts;
}

const keyBuffer = new Utf8Buffer();
const hashOut = new Uint32Array(2);

/**
 * Builds the ring for endpoints with the given hash keys (A76 hash key, else the first address's text) and
 * weights: one XXH64 per entry, then a bucket sort on the top bits of the hash. Linear in the ring size for
 * any keys XXH64 spreads evenly; a few typed arrays are all it allocates.
 */
export function buildRing(
  keys: readonly string[],
  weights: ArrayLike<number>,
  minRingSize: number,
  maxRingSize: number,
): Ring {
  const counts = entriesPerEndpoint(weights, minRingSize, maxRingSize);
  let size = 0;
  for (let i = 0; i < counts.length; i++) size += counts[i]!;
  const entries = new Uint32Array(size * 3);
  const key = keyBuffer;
  let at = 0;
  for (let e = 0; e < keys.length; e++) {
    const count = counts[e]!;
    if (count === 0) continue;
    key.set(keys[e]!);
    const prefix = key.length + 1;
    key.reserve(prefix + 10);
    const bytes = key.bytes;
    bytes[prefix - 1] = 0x5f; // '_'
    bytes[prefix] = 0x30; // the count, in decimal, starts at "0"
    let end = prefix + 1;
    for (let n = 0; ; ) {
      xxh64Into(bytes, end, hashOut);
      entries[at] = hashOut[0]!;
      entries[at + 1] = hashOut[1]!;
      entries[at + 2] = e;
      at += 3;
      if (++n === count) break;
      // Increment the decimal digits in place rather than formatting n again.
      let d = end - 1;
      while (d >= prefix && bytes[d] === 0x39) bytes[d--] = 0x30;
      if (d >= prefix) {
        bytes[d]!++;
      } else {
        bytes[prefix] = 0x31; // 9…9 + 1 = 10…0: one digit longer
        bytes[end++] = 0x30;
      }
    }
  }
  // About two entries per bucket: a lookup reads one bucket and searches about two entries.
  const bits = Math.min(24, Math.max(1, Math.floor(Math.log2(size)) - 1));
  const { sorted, buckets } = sortByHash(entries, bits);
  return new Ring(sorted, counts, buckets, bits);
}

/**
 * Sorts [high, low, endpoint] triples by (high, low) as unsigned 64-bit values: a counting sort on the top
 * `bits` bits (one pass, and its bucket starts are the lookup index), then each bucket, about two entries,
 * sorted in place. Stable, so entries with equal hashes (endpoints sharing a hash key) keep list order and
 * the ring is deterministic.
 */
function sortByHash(entries: Uint32Array, bits: number): { sorted: Uint32Array; buckets: Uint32Array } {
  const shift = 32 - bits;
  const count = 2 ** bits;
  const buckets = new Uint32Array(count + 1);
  for (let i = 0; i < entries.length; i += 3) buckets[(entries[i]! >>> shift) + 1]!++;
  for (let b = 1; b <= count; b++) buckets[b] = buckets[b]! + buckets[b - 1]!;
  const next = buckets.slice(0, count);
  const sorted = new Uint32Array(entries.length);
  for (let i = 0; i < entries.length; i += 3) {
    const b = entries[i]! >>> shift;
    const to = next[b]! * 3;
    next[b] = next[b]! + 1;
    sorted[to] = entries[i]!;
    sorted[to + 1] = entries[i + 1]!;
    sorted[to + 2] = entries[i + 2]!;
  }
  for (let b = 0; b < count; b++) {
    const from = buckets[b]!;
    const to = buckets[b + 1]!;
    if (to - from > 1) sortRange(sorted, from, to);
  }
  return { sorted, buckets };
}

/** Whether entry i's hash is greater than entry j's (unsigned 64-bit). */
function greater(e: Uint32Array, i: number, j: number): boolean {
  const a = e[i * 3]!;
  const b = e[j * 3]!;
  return a > b || (a === b && e[i * 3 + 1]! > e[j * 3 + 1]!);
}

/** Stable sort of entries [from, to) by hash. */
function sortRange(e: Uint32Array, from: number, to: number): void {
  if (to - from <= 32) {
    // Insertion sort: buckets hold about two entries.
    for (let i = from + 1; i < to; i++) {
      const high = e[i * 3]!;
      const low = e[i * 3 + 1]!;
      const endpoint = e[i * 3 + 2]!;
      let j = i - 1;
      while (j >= from && (e[j * 3]! > high || (e[j * 3] === high && e[j * 3 + 1]! > low))) {
        e[(j + 1) * 3] = e[j * 3]!;
        e[(j + 1) * 3 + 1] = e[j * 3 + 1]!;
        e[(j + 1) * 3 + 2] = e[j * 3 + 2]!;
        j--;
      }
      e[(j + 1) * 3] = high;
      e[(j + 1) * 3 + 1] = low;
      e[(j + 1) * 3 + 2] = endpoint;
    }
    return;
  }
  // A crowded bucket (keys chosen to collide in their top bits): an O(m log m) sort keeps the build
  // from going quadratic. Index order breaks ties, so the sort stays stable.
  const order = Array.from({ length: to - from }, (_, k) => from + k);
  order.sort((i, j) => (greater(e, i, j) ? 1 : greater(e, j, i) ? -1 : i - j));
  const copy = e.slice(from * 3, to * 3);
  for (let k = 0; k < order.length; k++) {
    const src = (order[k]! - from) * 3;
    e[(from + k) * 3] = copy[src]!;
    e[(from + k) * 3 + 1] = copy[src + 1]!;
    e[(from + k) * 3 + 2] = copy[src + 2]!;
  }
}
