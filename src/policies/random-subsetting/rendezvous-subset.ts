import { addressKey, type Endpoint } from '../../core/index.js';
import { Utf8Buffer } from '../../hash/utf8.js';
import { xxh64Into } from '../../hash/xxh64.js';

const text = new Utf8Buffer();
const hash = new Uint32Array(2);

/**
 * A68 "Subsetting algorithm" (rendezvous hashing): each endpoint's score is XXH64 of its first address (A61:
 * an endpoint with several addresses is hashed by the first), seeded with the policy's 64-bit seed; the
 * `size` endpoints with the lowest scores, in score order, are the subset. With `size` or fewer endpoints,
 * all of them, as given. Endpoints without an address are left out (nothing to hash, and no child could
 * use them).
 *
 * A server joining or leaving changes no other score, so a client's subset changes only by the servers
 * whose score beats (or was among) its k lowest.
 */
export function rendezvousSubset(
  endpoints: readonly Endpoint[],
  size: number,
  seedHigh: number,
  seedLow: number,
): readonly Endpoint[] {
  const usable = endpoints.every((e) => e.addresses.length > 0)
    ? endpoints
    : endpoints.filter((e) => e.addresses.length > 0);
  const n = usable.length;
  if (n <= size) return usable;
  const high = new Uint32Array(n);
  const low = new Uint32Array(n);
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    text.set(addressKey(usable[i]!.addresses[0]!));
    xxh64Into(text.bytes, text.length, hash, seedHigh, seedLow);
    high[i] = hash[0]!;
    low[i] = hash[1]!;
    order[i] = i;
  }
  // Unsigned 64-bit order (high word, then low word); equal scores keep the list order.
  order.sort((a, b) => high[a]! - high[b]! || low[a]! - low[b]! || a - b);
  const subset = new Array<Endpoint>(size);
  for (let i = 0; i < size; i++) subset[i] = usable[order[i]!]!;
  return subset;
}
