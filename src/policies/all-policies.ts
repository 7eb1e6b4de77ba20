import type { Registry } from '../core/index.js';
import { leastRequestFactory } from './least-request.js';
import { outlierDetectionFactory } from './outlier-detection/index.js';
import { pickFirstFactory } from './pick-first/index.js';
import { priorityFactory } from './priority/index.js';
import { randomSubsettingFactory } from './random-subsetting/index.js';
import { ringHashFactory } from './ring-hash/index.js';
import { roundRobinFactory } from './round-robin.js';
import { weightedRoundRobinFactory } from './weighted-round-robin/index.js';
import { weightedTargetFactory } from './weighted-target/index.js';
import { wrrLocalityFactory } from './wrr-locality.js';

/** Every lbtree policy, under its gRFC name. */
export const ALL_POLICIES = [
  pickFirstFactory,
  roundRobinFactory,
  priorityFactory,
  weightedTargetFactory,
  ringHashFactory,
  leastRequestFactory,
  wrrLocalityFactory,
  outlierDetectionFactory,
  weightedRoundRobinFactory,
  randomSubsettingFactory,
] as const;

/**
 * The further names each policy answers to, at every depth of a tree: the suffix-less names @grpc/grpc-js-xds
 * generates (`priority`, `ring_hash`, …), and `lbtree_pick_first` / `lbtree_round_robin`, under which the
 * grpc-js adapter offers lbtree's versions of grpc-js's built-ins. The one name table: the grpc-js `register()`
 * registers exactly these names (plus the canonical ones).
 */
export const POLICY_ALIASES: Readonly<Record<string, readonly string[]>> = {
  [pickFirstFactory.name]: ['lbtree_pick_first'],
  [roundRobinFactory.name]: ['lbtree_round_robin'],
  [weightedRoundRobinFactory.name]: ['lbtree_weighted_round_robin'],
  [priorityFactory.name]: ['priority'],
  [weightedTargetFactory.name]: ['weighted_target'],
  [ringHashFactory.name]: ['ring_hash'],
  [leastRequestFactory.name]: ['least_request'],
  [wrrLocalityFactory.name]: ['xds_wrr_locality'],
};

export function registerAllPolicies(registry: Registry, options: { override?: boolean } = {}): Registry {
  for (const factory of ALL_POLICIES) {
    registry.register(factory, { ...options, aliases: POLICY_ALIASES[factory.name] ?? [] });
  }
  return registry;
}
