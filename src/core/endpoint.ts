import { type Address, addressKey } from './address.js';
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
