import { type Address, addressKey, sameAddress } from './address.js';
import { Attributes } from './attributes.js';

/** A61: one backend, reachable at one or more addresses, with per-endpoint attributes. */
export interface Endpoint {
  readonly addresses: readonly Address[];
  readonly attributes: Attributes;
}

export function endpoint(addresses: readonly Address[], attributes: Attributes = Attributes.EMPTY): Endpoint {
  return { addresses, attributes };
}

// A character that cannot occur in an address key, so joined keys never collide.
const KEY_SEPARATOR = '\u0000';

/**
 * The UNORDERED address set of an endpoint as a string (A61 "Endpoint list updates"): `[A,B]` and `[B,A]`
 * give the same key. Every petiole keeps its children in a Map under this key.
 */
export function endpointKey(e: Endpoint): string {
  const addresses = e.addresses;
  if (addresses.length === 1) return addressKey(addresses[0]!);
  const keys = addresses.map(addressKey);
  keys.sort();
  return keys.join(KEY_SEPARATOR);
}

/** Whether two endpoints hold the same addresses in the same order (attributes are not compared). */
export function sameAddressOrder(a: Endpoint, b: Endpoint): boolean {
  const x = a.addresses;
  const y = b.addresses;
  if (x === y) return true;
  if (x.length !== y.length) return false;
  for (let j = 0; j < x.length; j++) if (!sameAddress(x[j]!, y[j]!)) return false;
  return true;
}

/**
 * Whether two endpoint lists are equal: the same endpoints in the same order, each with the same addresses in
 * the same order and equal attributes ({@link Attributes.equals}). O(n) comparisons, nothing allocated; a
 * run of endpoints sharing one Attributes object on both sides (a resolver builds one per locality) is
 * compared once.
 */
export function sameEndpointList(a: readonly Endpoint[], b: readonly Endpoint[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  let lastA: Attributes | null = null;
  let lastB: Attributes | null = null;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x !== y && !sameAddressOrder(x, y)) return false;
    const ax = x.attributes;
    const ay = y.attributes;
    if (ax === lastA && ay === lastB) continue;
    if (!ax.equals(ay)) return false;
    lastA = ax;
    lastB = ay;
  }
  return true;
}

/** Whether two endpoint lists hold the same addresses in the same order (attributes are not compared). */
export function sameEndpointAddresses(a: readonly Endpoint[], b: readonly Endpoint[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!sameAddressOrder(a[i]!, b[i]!)) return false;
  return true;
}
