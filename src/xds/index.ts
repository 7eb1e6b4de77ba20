// `lbtree/xds`: xDS-configured load balancing (gRFC A52) — the Envoy resources lbtree reads, the xDS LB
// policy registry, CDS / EDS validation, and the cluster resolver's priority tree.

import { type ClusterOptions, clusterLbPolicyConfig, decodeCluster } from './resources/cluster-lb-policy.js';
import {
  decodeLoadBalancingPolicy,
  defaultXdsLbPolicyRegistry,
  type LbConfigList,
} from './resources/lb-policy-registry.js';

// A52 custom policies: register a PolicyFactory under a protobuf-style name (`myorg.MyCustomLb`) and a
// control plane can select it with a TypedStruct whose type_url ends in that name.
export { defaultRegistry, registerPolicy } from '../policies/default-registry.js';
export { MAX_PROTO_NESTING } from '../protos/decode.js';
export { type JsonReadOptions, ProtoJsonError } from '../protos/json.js';
export { xdsTypeRegistry } from '../protos/type-registry.js';
export { XDS_HEALTH_STATUS, XDS_LOCALITY_NAME, XDS_PRIORITY } from './attribute-keys.js';
export {
  type ClusterTreeOptions,
  clusterToTree,
  clusterToTreeFromJson,
  type EndpointClusterTree,
  encodeCluster,
  encodeClusterLoadAssignment,
  encodeLoadBalancingPolicy,
  type PlainClusterTree,
  XdsClusterTreeGenerator,
} from './balancer/cluster-tree.js';
export type { PlainXdsEndpoint } from './balancer/priority-tree.js';
export { type ClusterOptions, decodeCluster } from './resources/cluster-lb-policy.js';
export {
  decodeClusterLoadAssignment,
  localityKey,
  parseClusterLoadAssignment,
  type XdsDropCategory,
  type XdsEndpoint,
  type XdsEndpointResource,
  type XdsHealthStatus,
  type XdsLocality,
  type XdsLocalityName,
} from './resources/cluster-load-assignment.js';
export { MAX_NACK_REASON_LENGTH, XdsResourceError } from './resources/errors.js';
export {
  defaultXdsLbPolicyRegistry,
  type LbConfigEntry,
  type LbConfigList,
  MAX_LB_POLICY_DEPTH,
  type XdsLbConversion,
  type XdsLbPolicyConverter,
  XdsLbPolicyRegistry,
} from './resources/lb-policy-registry.js';
export type { XdsOptions } from './resources/xds-options.js';

/**
 * A52 `convertToServiceConfig`: an encoded `envoy.config.cluster.v3.LoadBalancingPolicy` → the LoadBalancingConfig
 * list (one entry: the first supported policy, converted recursively and validated by the gRPC LB policy
 * registry — `options.registry`, else `defaultRegistry()`). Throws an XdsResourceError whose message is the
 * NACK reason.
 */
export function convertLoadBalancingPolicy(bytes: Uint8Array, options: ClusterOptions = {}): LbConfigList {
  const policy = decodeLoadBalancingPolicy(bytes);
  return (options.lbPolicyRegistry ?? defaultXdsLbPolicyRegistry()).convert(policy, options);
}

/**
 * The LoadBalancingConfig list for an encoded `envoy.config.cluster.v3.Cluster`: from load_balancing_policy
 * (A52) or, when it is unset, from lb_policy and its config (A42 / A48). Throws the NACK reason.
 */
export function clusterLbConfig(bytes: Uint8Array, options: ClusterOptions = {}): LbConfigList {
  return clusterLbPolicyConfig(decodeCluster(bytes), options);
}

export * from './balancer/index.js';
export * from './client/index.js';
// Load reporting (A27 LRS, A64 / A85): the counters xds_cluster_impl fills, and the client that streams them.
export {
  type ClusterLoadSnapshot,
  ClusterLoadStore,
  LoadStore,
  LocalityLoadCounter,
  type LocalityLoadSnapshot,
  type MetricSum,
  XDS_LOAD_REPORTING_ARG,
  type XdsLoadReporting,
} from './load-store.js';
export { LrsClient, type LrsClientOptions } from './lrs/lrs-client.js';
export { MIN_LOAD_REPORTING_INTERVAL_MS } from './lrs/lrs-response.js';
export { type LrsStreamState, ServerLrsStream } from './lrs/server-lrs-stream.js';
// The LDS / RDS / CDS / EDS resource types an XdsClient watches, their validated values, selectVirtualHost.
export * from './resources/index.js';
export {
  XDS_CONFIG_ATTRIBUTE,
  type XdsAggregateConfig,
  type XdsClusterConfig,
  type XdsConfig,
  type XdsEndpointConfig,
  xdsConfigOf,
} from './xds-config.js';
