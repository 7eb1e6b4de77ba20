// The one builder of a cluster's policy tree (A37 / A74 / A75, as grpc-go's cdsbalancer/configbuilder.go):
// the cds policy of every xds: channel and clusterToTree (the simulator, `lbtree simulate`) both build the
// tree below cds here, so what the simulator runs is what a channel runs.
//
// EDS or LOGICAL_DNS cluster:
//   [outlier_detection (A50, above the priorities as A75 places it)]
//     → priority (A56, one child per EDS priority, stable names)
//       → xds_cluster_impl (drops, circuit breaking: A37)
//         → xds_override_host (A55: always, right below cluster_impl so load reports count every call)
//           → the cluster's endpoint-picking policy (A52)
// Aggregate cluster: priority over one cds child per leaf cluster (A75 "Aggregate Cluster Changes").

import { type Endpoint, type Status, unavailable } from '../../core/index.js';
import { OUTLIER_DETECTION } from '../../policies/outlier-detection/config.js';
import { PRIORITY } from '../../policies/priority/index.js';
import type { JsonObject } from '../../protos/json.js';
import { CDS, XDS_CLUSTER_IMPL, XDS_OVERRIDE_HOST } from '../policy-names.js';
import type { LbConfigList } from '../resources/lb-policy-registry.js';
import type { XdsClusterConfig } from '../xds-config.js';
import type { PriorityTreeGenerator } from './priority-tree.js';

export { CDS };

/** The config of the policy below cds and the endpoints it gets. */
export interface ClusterChildTree {
  readonly config: LbConfigList;
  readonly endpoints: readonly Endpoint[];
  /** The priority child names, highest priority first ([] for an aggregate cluster). */
  readonly childNames: readonly string[];
}

/** The cluster cannot be used now: its calls fail with this status (A37, A88). */
export class ClusterUnusable extends Error {
  constructor(readonly status: Status) {
    super(status.details);
  }
}

/** The child config of an aggregate cluster: one cds child per leaf cluster, in priority order (A75). */
export function aggregatePriorityConfig(leafClusters: readonly string[]): LbConfigList {
  const children: JsonObject = {};
  for (const leaf of leafClusters) {
    children[leaf] = { config: [{ [CDS]: { cluster: leaf } }], ignoreReresolutionRequests: false };
  }
  return [{ [PRIORITY]: { children, priorities: [...leafClusters] } }];
}

/**
 * The tree below cds for cluster `name`. `priorities` keeps the priority child names stable from one call to
 * the next (one generator per cds instance, A56). Throws {@link ClusterUnusable} when the cluster has no
 * endpoints to balance.
 */
export function buildClusterChildTree(
  name: string,
  cluster: XdsClusterConfig,
  priorities: PriorityTreeGenerator,
): ClusterChildTree {
  const children = cluster.children;
  if (children.kind === 'aggregate') {
    if (children.leafClusters.length === 0) {
      throw new ClusterUnusable(unavailable(`aggregate cluster ${name} has no usable leaf clusters`));
    }
    return { config: aggregatePriorityConfig(children.leafClusters), endpoints: [], childNames: [] };
  }
  const note = children.resolutionNote;
  const endpoints = children.endpoints;
  if (endpoints === undefined) {
    throw new ClusterUnusable(unavailable(`cluster ${name}: no endpoints${note ? `: ${note}` : ''}`));
  }
  if (endpoints.priorities.length === 0) {
    throw new ClusterUnusable(unavailable(`cluster ${name} has no endpoints${note ? ` (${note})` : ''}`));
  }
  const endpointPolicy: LbConfigList = [
    {
      [XDS_CLUSTER_IMPL]: {
        clusterName: name,
        childPolicy: [{ [XDS_OVERRIDE_HOST]: { clusterName: name, childPolicy: cluster.cluster.lbPolicy } }],
      },
    },
  ];
  // A37: EDS priorities ignore re-resolution requests; a LOGICAL_DNS priority passes them to the resolver.
  const built = priorities.build(endpoints, endpointPolicy, {
    ignoreReresolutionRequests: cluster.cluster.discovery.kind === 'eds',
    keepDrainingEndpoints: true,
    backendService: name,
  });
  const outlier = cluster.cluster.outlierDetection;
  const config: LbConfigList =
    outlier === undefined
      ? built.config
      : [{ [OUTLIER_DETECTION]: { ...(outlier as unknown as JsonObject), childPolicy: built.config } }];
  return { config, endpoints: built.endpoints, childNames: built.childNames };
}
