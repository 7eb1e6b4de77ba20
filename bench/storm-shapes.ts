/** What the connect-storm harnesses of both libraries share: the harness interface, the shapes, the addresses. */
import { xxh64 } from 'lbtree';

/** One policy tree under a fake channel, driven endpoint by endpoint. */
export interface StormHarness {
  /** Delivers the (prepared) first update; grpc-js-xds's ring_hash answers in a promise callback. */
  firstUpdate(): void | Promise<void>;
  /** Endpoint i connects: CONNECTING (asked for by the policy, or by a pick for ring_hash) -> READY. */
  up(i: number): void;
  /** Endpoint i loses its connection and the retry fails: READY -> IDLE -> CONNECTING -> TRANSIENT_FAILURE. */
  down(i: number): void;
  readonly state: string;
  destroy(): void;
}

/** The shapes of endpoint list the cases use. */
export type Shape =
  | 'plain' // round_robin, least_request, ring_hash
  | 'target-per-endpoint' // weighted_target: one target per endpoint
  | 'locality-per-endpoint' // xds_wrr_locality: one locality per endpoint
  | 'one-priority' // priority -> round_robin
  | 'xds-one-locality'; // priority -> xds_wrr_locality -> weighted_target -> round_robin, one locality

/** ring_hash: two entries per endpoint, so a pick can reach every endpoint (the default cap is 4,096). */
export const ringSize = (n: number): number => 2 * n;

export const address = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:50051`;

/**
 * ring_hash: the request hash that lands on endpoint i's first ring entry (Envoy's `<key>_0`), for the pick that
 * asks for its connection. Computed before the timed region, as the hash is the RPC's (a config selector's
 * work per call), not the policy's; XXH64 to a bigint costs about 0.5 µs, 5 ms per 10,000 endpoints.
 */
export const requestHashes = (keys: readonly string[]): bigint[] => keys.map((k) => xxh64(`${k}_0`));

/**
 * The harness's own keys for finding endpoint i's fake subchannel in its pool, hashed before any timed region
 * (a fresh string is flattened and hashed at its first Map lookup, about a microsecond each, which would
 * otherwise be counted in the connect storm of both libraries).
 */
export function lookupKeys(n: number): string[] {
  const keys = Array.from({ length: n }, (_, i) => address(i));
  new Set(keys);
  return keys;
}
