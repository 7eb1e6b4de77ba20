import { type PolicyFactory, type RegisterOptions, Registry } from '../core/index.js';
import { registerAllPolicies } from './all-policies.js';

let registry: Registry | undefined;

/**
 * The process-wide registry: every lbtree policy plus those an application adds with `registerPolicy`.
 * grpc-js's `register()` and the xDS LB policy registry (A52: a control plane selects a custom policy by
 * its TypedStruct name) look policies up here; each Simulation starts from a copy of it.
 */
export function defaultRegistry(): Registry {
  registry ??= registerAllPolicies(new Registry());
  return registry;
}

/**
 * Adds an application's own policy (A52 "custom LB policies"), e.g. `myorg.MyCustomLeastRequestPolicy`.
 * Register it before calling lbtree's grpc-js `register()` (or call that again afterwards).
 */
export function registerPolicy(factory: PolicyFactory, options: RegisterOptions = {}): void {
  defaultRegistry().register(factory, options);
}
