import type { Registry } from '../core/index.js';
import { leastRequestFactory } from './least-request.js';
import { outlierDetectionFactory } from './outlier-detection/index.js';
import { pickFirstFactory } from './pick-first/index.js';
import { priorityFactory } from './priority/index.js';
import { ringHashFactory } from './ring-hash/index.js';
import { roundRobinFactory } from './round-robin.js';
import { weightedTargetFactory } from './weighted-target/index.js';
import { wrrLocalityFactory } from './wrr-locality.js';

export * from './child-policy.js';
export * from './default-registry.js';
export * from './endpoint-list.js';
export * from './least-request.js';
export * from './outlier-detection/index.js';
export * from './petiole.js';
export * from './pick-first/index.js';
export * from './priority/index.js';
export * from './ring-hash/index.js';
export * from './round-robin.js';
export * from './weighted-target/index.js';
export * from './wrr-locality.js';

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
] as const;

export function registerAllPolicies(registry: Registry, options: { override?: boolean } = {}): Registry {
  for (const factory of ALL_POLICIES) registry.register(factory, options);
  return registry;
}
