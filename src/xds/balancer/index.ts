import type { Registry } from '../../core/index.js';
import { cdsFactory } from './cds.js';
import { clusterImplFactory } from './cluster-impl.js';
import { clusterManagerFactory } from './cluster-manager.js';
import { overrideHostFactory } from './override-host/index.js';

export * from '../call-attributes.js';
export * from './cds.js';
export * from './cluster-call-stats.js';
export * from './cluster-impl.js';
export * from './cluster-manager.js';
export * from './override-host/index.js';

/**
 * The xDS policies under their gRFC names: xds_cluster_manager, cds, xds_cluster_impl and xds_override_host
 * (all `_experimental`).
 */
export const XDS_POLICIES = [
  clusterManagerFactory,
  cdsFactory,
  clusterImplFactory,
  overrideHostFactory,
] as const;

/** Adds the xDS policies that `registry` does not have yet (safe to call again); returns the registry. */
export function registerXdsPolicies(registry: Registry): Registry {
  for (const factory of XDS_POLICIES) if (!registry.has(factory.name)) registry.register(factory);
  return registry;
}
