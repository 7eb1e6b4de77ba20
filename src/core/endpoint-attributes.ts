import { AttributeKey } from './attributes.js';

// Per-endpoint attributes that resolvers and parent policies set and that later policies read (A61: most
// attributes are per endpoint). They live in core so that every layer, the simulator included, shares them.

/** A56 hierarchical address path: the child names, outermost first. */
export const HIERARCHICAL_PATH = new AttributeKey<readonly string[]>('lbtree.hierarchical_path');
/** Endpoint weight (EDS load_balancing_weight), used by ring_hash and weighted policies. */
export const ENDPOINT_WEIGHT = new AttributeKey<number>('lbtree.endpoint_weight');
/** The locality an endpoint belongs to, as a stable text key. */
export const LOCALITY = new AttributeKey<string>('lbtree.locality');
/** The weight of the endpoint's locality (EDS locality load_balancing_weight), read by wrr_locality. */
export const LOCALITY_WEIGHT = new AttributeKey<number>('lbtree.locality_weight');
/** A76: the key ring_hash hashes instead of the endpoint's first address. */
export const HASH_KEY = new AttributeKey<string>('lbtree.hash_key');
