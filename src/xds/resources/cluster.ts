// CDS: envoy.config.cluster.v3.Cluster validated as A27 (EDS), A37 (LOGICAL_DNS and aggregate clusters), A52
// (load_balancing_policy through the xDS LB policy registry, or the legacy lb_policy fields of A42 / A48), A50
// (outlier_detection), A29 / A82 (transport_socket) and A27's circuit breaking and lrs_server rules describe.

import type { Any } from '@bufbuild/protobuf/wkt';
import {
  type Cluster,
  Cluster_DiscoveryType,
  ClusterSchema,
} from '../../protos/gen/envoy/config/cluster/v3/cluster_pb.js';
import { RoutingPriority } from '../../protos/gen/envoy/config/core/v3/base_pb.js';
import { HealthStatus } from '../../protos/gen/envoy/config/core/v3/health_check_pb.js';
import { ClusterConfigSchema } from '../../protos/gen/envoy/extensions/clusters/aggregate/v3/cluster_pb.js';
import { CLUSTER_TYPE_URL } from '../../protos/type-urls.js';
import type { XdsResourceType } from '../client/resource-type.js';
import {
  A64_BACKEND_METRIC_PROPAGATION,
  parseBackendMetricPropagation,
} from './backend-metric-propagation.js';
import { type ClusterOptions, clusterLbPolicyConfig } from './cluster-lb-policy.js';
import { isAdsOrSelf } from './config-source.js';
import { decodeOrNack } from './decode-or-nack.js';
import { DEFAULT_OVERRIDE_HOST_STATUS, type XdsHealthStatus } from './health-status.js';
import type { LbConfigList } from './lb-policy-registry.js';
import { parseOutlierDetection } from './outlier-detection.js';
import { parseUpstreamTlsContext } from './tls-context.js';
import { DEFAULT_MAX_CONCURRENT_REQUESTS, type XdsCluster, type XdsClusterDiscovery } from './types.js';
import { anyTypeName, decodeResource, fail } from './validation.js';
import { decodeOptions, type ResolvedXdsOptions, resolveXdsOptions } from './xds-options.js';

const AGGREGATE_CLUSTER_TYPE = ClusterConfigSchema.typeName;

/**
 * Validates a Cluster as gRPC's XdsClient does (A27 EDS, A37 LOGICAL_DNS and aggregate, A52 LB policy, A50
 * outlier detection, A27 circuit breaking and lrs_server, A55 override_host_status): the one cluster validator
 * of lbtree, behind CDS on a channel and clusterToTree alike. Throws an XdsResourceError (the NACK reason).
 */
export function parseCluster(c: Cluster, options: ClusterOptions = {}): XdsCluster {
  return parseClusterResource(c, clusterLbPolicyConfig(c, options), resolveXdsOptions(options));
}

/** Validates a Cluster; `lbPolicy` is its already converted LB policy (see {@link parseCluster}). */
function parseClusterResource(c: Cluster, lbPolicy: LbConfigList, options: ResolvedXdsOptions): XdsCluster {
  if (c.lrsServer !== undefined && c.lrsServer.configSourceSpecifier.case !== 'self') {
    fail('lrs_server', 'ConfigSource is not self');
  }
  return {
    name: c.name,
    discovery: discovery(c),
    lbPolicy,
    maxRequests: maxRequests(c),
    outlierDetection: c.outlierDetection && parseOutlierDetection(c.outlierDetection, 'outlier_detection'),
    lrsLoadReporting: c.lrsServer !== undefined,
    backendMetricPropagation: options.orcaLrsPropagation
      ? parseBackendMetricPropagation(c.lrsReportEndpointMetrics)
      : A64_BACKEND_METRIC_PROPAGATION,
    overrideHostStatus: overrideHostStatus(c),
    // A29: transport_socket_matches is not supported (and ignored).
    upstreamTls: c.transportSocket && parseUpstreamTlsContext(c.transportSocket, options),
  };
}

const OVERRIDABLE: ReadonlyMap<HealthStatus, XdsHealthStatus> = new Map([
  [HealthStatus.UNKNOWN, 'UNKNOWN'],
  [HealthStatus.HEALTHY, 'HEALTHY'],
  [HealthStatus.DRAINING, 'DRAINING'],
]);

/**
 * A55: only UNKNOWN, HEALTHY and DRAINING count, other values are ignored rather than NACKed (mixed
 * deployments); unset means [UNKNOWN, HEALTHY].
 */
function overrideHostStatus(c: Cluster): readonly XdsHealthStatus[] {
  const set = c.commonLbConfig?.overrideHostStatus;
  if (set === undefined) return DEFAULT_OVERRIDE_HOST_STATUS;
  const statuses: XdsHealthStatus[] = [];
  for (const s of set.statuses) {
    const known = OVERRIDABLE.get(s);
    if (known !== undefined && !statuses.includes(known)) statuses.push(known);
  }
  return statuses;
}

function discovery(c: Cluster): XdsClusterDiscovery {
  const kind = c.clusterDiscoveryType;
  if (kind.case === 'clusterType') return aggregate(kind.value.typedConfig);
  const type = kind.case === 'type' ? kind.value : Cluster_DiscoveryType.STATIC;
  switch (type) {
    case Cluster_DiscoveryType.EDS: {
      const source = c.edsClusterConfig?.edsConfig;
      if (source === undefined) fail('eds_cluster_config.eds_config', 'field not present');
      if (!isAdsOrSelf(source)) fail('eds_cluster_config.eds_config', 'ConfigSource is not ads or self');
      const serviceName = c.edsClusterConfig?.serviceName ?? '';
      // A47 "CDS Resource Validation": an xdstp: name names the Cluster type, so it cannot name the EDS resource.
      if (serviceName === '' && c.name.startsWith('xdstp:')) {
        fail(
          'eds_cluster_config.service_name',
          'must be set when the cluster name is an xdstp: name (gRFC A47)',
        );
      }
      return { kind: 'eds', edsServiceName: serviceName !== '' ? serviceName : c.name };
    }
    case Cluster_DiscoveryType.LOGICAL_DNS:
      return logicalDns(c);
    default: {
      const name = Cluster_DiscoveryType[type] ?? String(type);
      return fail(
        'type',
        `unsupported value ${name} (expected EDS, LOGICAL_DNS or an aggregate cluster_type)`,
      );
    }
  }
}

/** A37: load_assignment with exactly one locality holding exactly one endpoint, a host name and a port. */
function logicalDns(c: Cluster): XdsClusterDiscovery {
  let at = 'load_assignment';
  if (c.loadAssignment === undefined) fail(at, 'field not present');
  const localities = c.loadAssignment.endpoints;
  if (localities.length !== 1)
    fail(`${at}.endpoints`, `has ${localities.length} entries, expected exactly 1`);
  const lbEndpoints = localities[0]!.lbEndpoints;
  at += '.endpoints[0].lb_endpoints';
  if (lbEndpoints.length !== 1) fail(at, `has ${lbEndpoints.length} entries, expected exactly 1`);
  at += '[0].endpoint';
  const endpoint = lbEndpoints[0]!.hostIdentifier;
  if (endpoint.case !== 'endpoint') fail(at, 'field not present');
  at += '.address';
  const address = endpoint.value.address;
  if (address === undefined) fail(at, 'field not present');
  at += '.socket_address';
  if (address.address.case !== 'socketAddress') fail(at, 'field not present');
  const socket = address.address.value;
  if (socket.address === '') fail(`${at}.address`, 'must not be empty');
  if (socket.portSpecifier.case !== 'portValue') fail(`${at}.port_value`, 'field not present');
  const port = socket.portSpecifier.value;
  if (port > 65535) fail(`${at}.port_value`, `${port} is not a valid port`);
  return { kind: 'logical_dns', hostname: socket.address, port };
}

/** A37: cluster_type.typed_config is an aggregate ClusterConfig listing at least one cluster. */
function aggregate(config: Any | undefined): XdsClusterDiscovery {
  const at = 'cluster_type.typed_config';
  if (config === undefined) fail(at, 'field not present');
  const typeName = anyTypeName(config, at);
  if (typeName !== AGGREGATE_CLUSTER_TYPE) {
    fail(`${at}.type_url`, `unsupported cluster type ${typeName} (expected ${AGGREGATE_CLUSTER_TYPE})`);
  }
  const clusters = decodeOrNack(ClusterConfigSchema, config.value, at).clusters;
  if (clusters.length === 0) fail(`${at}.clusters`, 'must not be empty');
  return { kind: 'aggregate', clusters };
}

/** circuit_breakers: max_requests of the DEFAULT-priority thresholds, else 1024. */
function maxRequests(c: Cluster): number {
  const thresholds = c.circuitBreakers?.thresholds ?? [];
  const def = thresholds.find((t) => t.priority === RoutingPriority.DEFAULT);
  return def?.maxRequests ?? DEFAULT_MAX_CONCURRENT_REQUESTS;
}

/** CDS (A27): a Cluster missing from a state-of-the-world response has been deleted. */
export const clusterResourceType: XdsResourceType<XdsCluster> = {
  typeUrl: CLUSTER_TYPE_URL,
  allResourcesRequiredInSotW: true,
  decode: (bytes, context) =>
    decodeResource(
      () => decodeOrNack(ClusterSchema, bytes),
      (c) => c.name,
      (c) => parseCluster(c, decodeOptions(context)),
    ),
};
