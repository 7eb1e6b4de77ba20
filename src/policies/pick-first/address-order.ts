import {
  type Address,
  type AddressFamily,
  type Attributes,
  addressFamily,
  addressKey,
  ENDPOINT_WEIGHT,
  type Endpoint,
  sameAddressOrder,
  sameEndpointAddresses,
} from '../../core/index.js';

/**
 * The list pick_first is given: endpoints, or one endpoint standing for the list of just it (how a petiole
 * hands each child its endpoint without a one-element array per endpoint).
 */
export type EndpointsOrOne = readonly Endpoint[] | Endpoint;

/** The endpoints of `list` as an array (allocates one for a single endpoint: off the hot path). */
export function endpointArray(list: EndpointsOrOne): readonly Endpoint[] {
  return isEndpointArray(list) ? list : [list];
}

export function isEndpointArray(list: EndpointsOrOne): list is readonly Endpoint[] {
  return Array.isArray(list);
}

/** Whether two lists hold the same addresses in the same order (attributes are not compared). */
export function sameEndpointsOrOne(a: EndpointsOrOne, b: EndpointsOrOne): boolean {
  if (a === b) return true;
  const x = isEndpointArray(a) ? (a.length === 1 ? a[0]! : null) : a;
  const y = isEndpointArray(b) ? (b.length === 1 ? b[0]! : null) : b;
  if (x !== null && y !== null) return sameAddressOrder(x, y);
  if (x !== null || y !== null) return false;
  return sameEndpointAddresses(a as readonly Endpoint[], b as readonly Endpoint[]);
}

/** One address of the flattened list, remembering the endpoint attributes its subchannel is created with. */
export interface FlatAddress {
  readonly address: Address;
  readonly key: string;
  readonly attributes: Attributes;
}

/**
 * A62 shuffle: Fisher-Yates over the ENDPOINTS (A61 "Flattening": never the addresses inside one).
 * Every permutation is equally likely, two-element lists included.
 */
export function shuffleEndpoints(endpoints: readonly Endpoint[], random: () => number): Endpoint[] {
  const out = endpoints.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const t = out[i]!;
    out[i] = out[j]!;
    out[j] = t;
  }
  return out;
}

/**
 * A113 weighted shuffle (Efraimidis–Spirakis): each endpoint draws the key `u^(1/weight)`, `u` uniform in
 * [0, 1), weight its ENDPOINT_WEIGHT attribute (1 when absent), and the endpoints are sorted by key,
 * largest first. So endpoint i comes first with probability weight_i / Σ weight. The keys are compared as
 * `ln(u) / weight`, the same order, which keeps its precision for UQ1.31 weights near 2^31 where
 * `u^(1/weight)` rounds to 1. Ties (u = 0) keep the list order.
 */
export function weightedShuffleEndpoints(endpoints: readonly Endpoint[], random: () => number): Endpoint[] {
  const n = endpoints.length;
  const keys = new Float64Array(n);
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const weight = endpoints[i]!.attributes.get(ENDPOINT_WEIGHT);
    keys[i] = Math.log(random()) / (weight !== undefined && weight > 0 ? weight : 1);
    order[i] = i;
  }
  order.sort((a, b) => keys[b]! - keys[a]! || a - b);
  return order.map((i) => endpoints[i]!);
}

/** A61 "Flattening": concatenate the endpoints' addresses in order; a repeated address keeps its first place. */
export function flattenEndpoints(endpoints: readonly Endpoint[]): FlatAddress[] {
  const seen = new Set<string>();
  const out: FlatAddress[] = [];
  for (const e of endpoints) {
    for (const address of e.addresses) {
      const key = addressKey(address);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ address, key, attributes: e.attributes });
    }
  }
  return out;
}

/**
 * RFC 8305 section 4 interleaving (First Address Family Count = 1): alternate between address families,
 * starting with the family of the first address and keeping each family's relative order. With more than two
 * families present (unix paths, host names) they take turns in order of first appearance.
 */
export function interleaveFamilies(list: readonly FlatAddress[]): FlatAddress[] {
  const byFamily = new Map<AddressFamily, FlatAddress[]>();
  for (const a of list) {
    const family = addressFamily(a.address);
    let bucket = byFamily.get(family);
    if (!bucket) {
      bucket = [];
      byFamily.set(family, bucket);
    }
    bucket.push(a);
  }
  if (byFamily.size <= 1) return list.slice();
  const buckets = [...byFamily.values()];
  const out: FlatAddress[] = [];
  for (let i = 0; out.length < list.length; i++) {
    for (const bucket of buckets) {
      if (i < bucket.length) out.push(bucket[i]!);
    }
  }
  return out;
}

/**
 * The order a Happy Eyeballs pass walks (A61 "Flattening"): flatten, de-duplicate, interleave families.
 * (pick_first skips it for a list of one address, every petiole child's.)
 */
export function happyEyeballsOrder(endpoints: EndpointsOrOne): FlatAddress[] {
  return interleaveFamilies(flattenEndpoints(endpointArray(endpoints)));
}
