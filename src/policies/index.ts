import type { Registry } from '../core/index.js';
import { pickFirstFactory } from './pick-first/index.js';
import { roundRobinFactory } from './round-robin.js';

export * from './endpoint-list.js';
export * from './pick-first/index.js';
export * from './round-robin.js';

/** Every lbtree policy, under its gRFC name. */
export const ALL_POLICIES = [pickFirstFactory, roundRobinFactory] as const;

export function registerAllPolicies(registry: Registry, options: { override?: boolean } = {}): Registry {
  for (const factory of ALL_POLICIES) registry.register(factory, options);
  return registry;
}
