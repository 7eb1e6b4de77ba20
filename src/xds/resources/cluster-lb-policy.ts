// A Cluster's LB policy as a LoadBalancingConfig list: A52's load_balancing_policy through the xDS LB policy
// registry, or the legacy lb_policy fields of A27 / A42 / A48. The rest of the Cluster is validated in
// cluster.ts.

import { enumName } from '../../protos/decode.js';
import {
  type Cluster,
  Cluster_LbPolicy,
  Cluster_LbPolicySchema,
  Cluster_RingHashLbConfig_HashFunction,
  Cluster_RingHashLbConfig_HashFunctionSchema,
  ClusterSchema,
} from '../../protos/gen/envoy/config/cluster/v3/cluster_pb.js';
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
