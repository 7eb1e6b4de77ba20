// CDS: the parts of an `envoy.config.cluster.v3.Cluster` that client-side load balancing needs — the LB policy
// (A52's load_balancing_policy, or the legacy lb_policy fields of A27 / A42 / A48) and, for EDS clusters, the
// name to ask EDS for (A27).

import { enumName } from '../../protos/decode.js';
import {
  type Cluster,
  Cluster_DiscoveryType,
  Cluster_DiscoveryTypeSchema,
  Cluster_LbPolicy,
  Cluster_LbPolicySchema,
  Cluster_RingHashLbConfig_HashFunction,
  Cluster_RingHashLbConfig_HashFunctionSchema,
  ClusterSchema,
} from '../../protos/gen/envoy/config/cluster/v3/cluster_pb.js';
import type { ConfigSource } from '../../protos/gen/envoy/config/core/v3/config_source_pb.js';
import { decodeOrNack } from './decode-or-nack.js';
import { XdsResourceError } from './errors.js';
import {
  defaultXdsLbPolicyRegistry,
  type LbConfigEntry,
  type LbConfigList,
  LEAST_REQUEST_POLICY,
  ringSizes,
  validateEntry,
  XDS_DEFAULT_CHOICE_COUNT,
  type XdsLbPolicyRegistry,
} from './lb-policy-registry.js';
import { parseOutlierDetection } from './outlier-detection.js';
import type { XdsOutlierDetectionConfig } from './types.js';
import { type ResolvedXdsOptions, resolveXdsOptions, type XdsOptions } from './xds-options.js';

export interface ClusterOptions extends XdsOptions {
  /** The A52 converters; default `defaultXdsLbPolicyRegistry()`. */
  readonly lbPolicyRegistry?: XdsLbPolicyRegistry;
}

/** Decodes an encoded Cluster (a NACK reason on malformed bytes). */
export function decodeCluster(bytes: Uint8Array): Cluster {
  return decodeOrNack(ClusterSchema, bytes);
}

/**
 * The cluster's LB policy as a validated LoadBalancingConfig list (A52 "XdsClient"): `load_balancing_policy`
 * when it is set (and GRPC_EXPERIMENTAL_XDS_CUSTOM_LB_CONFIG is not "false"), else the legacy fields:
 * ROUND_ROBIN → xds_wrr_locality_experimental over round_robin; RING_HASH → ring_hash_experimental from
 * ring_hash_lb_config; LEAST_REQUEST → xds_wrr_locality_experimental over least_request_experimental.
 */
export function clusterLbPolicyConfig(cluster: Cluster, options: ClusterOptions = {}): LbConfigList {
  const resolved = resolveXdsOptions(options);
  if (resolved.customLbConfig && cluster.loadBalancingPolicy !== undefined) {
    const converters = options.lbPolicyRegistry ?? defaultXdsLbPolicyRegistry();
    return converters.convert(cluster.loadBalancingPolicy, resolved, 'load_balancing_policy');
  }
  const entry = legacyLbConfig(cluster, resolved);
  validateEntry(
    entry,
    resolved.registry,
    `lb_policy (${enumName(Cluster_LbPolicySchema, cluster.lbPolicy)})`,
  );
  return [entry];
}

function legacyLbConfig(cluster: Cluster, options: ResolvedXdsOptions): LbConfigEntry {
  switch (cluster.lbPolicy) {
    case Cluster_LbPolicy.ROUND_ROBIN:
      return { xds_wrr_locality_experimental: { childPolicy: [{ round_robin: {} }] } };
    case Cluster_LbPolicy.RING_HASH: {
      if (!options.ringHash) {
        throw new XdsResourceError(
          'lb_policy',
          'RING_HASH is disabled (GRPC_XDS_EXPERIMENTAL_ENABLE_RING_HASH=false)',
        );
      }
      const config = cluster.lbConfig.case === 'ringHashLbConfig' ? cluster.lbConfig.value : undefined;
      if (config && config.hashFunction !== Cluster_RingHashLbConfig_HashFunction.XX_HASH) {
        const name = enumName(Cluster_RingHashLbConfig_HashFunctionSchema, config.hashFunction);
        throw new XdsResourceError(
          'ring_hash_lb_config.hash_function',
          `unsupported value ${name} (gRPC supports only XX_HASH)`,
        );
      }
      const sizes = ringSizes(config?.minimumRingSize, config?.maximumRingSize, (problem, field) => {
        throw new XdsResourceError(`ring_hash_lb_config.${field}`, problem);
      });
      return { ring_hash_experimental: sizes };
    }
    case Cluster_LbPolicy.LEAST_REQUEST: {
      const config = cluster.lbConfig.case === 'leastRequestLbConfig' ? cluster.lbConfig.value : undefined;
      const choiceCount = config?.choiceCount ?? XDS_DEFAULT_CHOICE_COUNT;
      if (choiceCount < 2) {
        throw new XdsResourceError('least_request_lb_config.choice_count', `${choiceCount} is less than 2`);
      }
      return {
        xds_wrr_locality_experimental: { childPolicy: [{ [LEAST_REQUEST_POLICY]: { choiceCount } }] },
      };
    }
    default: {
      const name = enumName(Cluster_LbPolicySchema, cluster.lbPolicy);
      throw new XdsResourceError('lb_policy', `unsupported value ${name}`);
    }
  }
}

/** What lbtree takes from a validated EDS Cluster. */
export interface XdsClusterResource {
  readonly name: string;
  /** The ClusterLoadAssignment name to watch: eds_cluster_config.service_name, or the cluster name. */
  readonly edsServiceName: string;
  /** The validated LB policy (see {@link clusterLbPolicyConfig}). */
  readonly lbPolicy: LbConfigList;
  /** Whether LRS load reporting is on (lrs_server set to `self`). */
  readonly lrsLoadReporting: boolean;
  /** outlier_detection (A50), when the cluster has it. */
  readonly outlierDetection?: XdsOutlierDetectionConfig;
}

/**
 * Validates a Cluster as gRPC's XdsClient does for an EDS cluster (A27 "Cluster Proto"): `type` EDS,
 * `eds_cluster_config.eds_config` set to `ads` or `self`, `lrs_server` (if set) `self`, and a valid LB policy.
 * LOGICAL_DNS and aggregate clusters (A37) are not supported yet and are rejected with that reason.
 */
export function parseCluster(cluster: Cluster, options: ClusterOptions = {}): XdsClusterResource {
  const discovery = cluster.clusterDiscoveryType;
  if (discovery.case === 'clusterType') {
    throw new XdsResourceError(
      'cluster_type',
      `custom cluster type "${discovery.value.name}" is not supported (lbtree handles EDS clusters so far)`,
    );
  }
  const type = discovery.case === 'type' ? discovery.value : Cluster_DiscoveryType.STATIC;
  if (type !== Cluster_DiscoveryType.EDS) {
    const name = enumName(Cluster_DiscoveryTypeSchema, type);
    throw new XdsResourceError('type', `unsupported value ${name} (lbtree handles EDS clusters so far)`);
  }
  const edsConfig = cluster.edsClusterConfig?.edsConfig;
  if (edsConfig === undefined)
    throw new XdsResourceError('eds_cluster_config.eds_config', 'field not present');
  if (!isAdsOrSelf(edsConfig)) {
    throw new XdsResourceError('eds_cluster_config.eds_config', 'ConfigSource is not ads or self');
  }
  if (cluster.lrsServer !== undefined && cluster.lrsServer.configSourceSpecifier.case !== 'self') {
    throw new XdsResourceError('lrs_server', 'ConfigSource is not self');
  }
  const serviceName = cluster.edsClusterConfig?.serviceName ?? '';
  return {
    name: cluster.name,
    edsServiceName: serviceName !== '' ? serviceName : cluster.name,
    lbPolicy: clusterLbPolicyConfig(cluster, options),
    lrsLoadReporting: cluster.lrsServer !== undefined,
    ...(cluster.outlierDetection
      ? { outlierDetection: parseOutlierDetection(cluster.outlierDetection, 'outlier_detection') }
      : {}),
  };
}

function isAdsOrSelf(source: ConfigSource): boolean {
  const which = source.configSourceSpecifier.case;
  return which === 'ads' || which === 'self';
}
