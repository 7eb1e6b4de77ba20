// From a recorded update to a tree the simulator runs: a plain update as it was (or under another root
// config), an xDS update's cluster through the one builder cds uses (XdsClusterTreeGenerator), so the replay
// runs the tree the channel ran (or the same cluster under another endpoint-picking policy).

import { type ChannelArgs, parseAddress } from '../../core/index.js';
import type { RecordedCluster, UpdateEvent } from '../../recorder/index.js';
import type { PlainEndpoint } from '../../sim/index.js';
import { XdsClusterTreeGenerator } from '../../xds/balancer/cluster-tree.js';
import { toPlainEndpoints } from '../../xds/balancer/priority-tree.js';
import { localityKey, type XdsEndpointResource } from '../../xds/resources/cluster-load-assignment.js';
import type { XdsHealthStatus } from '../../xds/resources/health-status.js';
import type { LbConfigList } from '../../xds/resources/lb-policy-registry.js';
import type { XdsCluster, XdsOutlierDetectionConfig } from '../../xds/resources/types.js';

export interface ReplayTree {
  readonly config: unknown;
  readonly endpoints: readonly PlainEndpoint[];
  readonly attributes: ChannelArgs;
}

type RecordedClusterEntry = NonNullable<UpdateEvent['xdsClusters']>[number];

/** A recording the replay cannot run: the message says what to change. */
export class ReplayError extends Error {}

/** Builds the trees of one recording's updates, in order (priority child names stay stable, as in cds). */
export class ReplayTreeBuilder {
  private readonly generator = new XdsClusterTreeGenerator();
  private clusterName: string | undefined;
  /** Whether an xDS update named the replayed cluster yet. */
  private seen = false;

  /**
   * @param config another LB config: the root's for a plain recording, the cluster's endpoint-picking policy
   *   for an xDS one.
   * @param cluster the xDS cluster to replay when the channel had several.
   */
  constructor(
    private readonly config: unknown,
    cluster: string | undefined,
  ) {
    this.clusterName = cluster;
  }

  /** The tree for an update, or undefined when it leaves the replayed cluster as it was (a cluster error). */
  build(update: UpdateEvent): ReplayTree | undefined {
    const settings = update.settings ?? {};
    if (update.xdsClusters === undefined) {
      return {
        config: this.config ?? update.config,
        endpoints: (update.endpoints ?? []).map((e) => ({
          addresses: e.addresses,
          ...(e.attributes ? { attributes: e.attributes } : {}),
        })),
        attributes: settings,
      };
    }
    const recorded = this.pickCluster(update);
    if (recorded === undefined || 'error' in recorded || recorded.assignment === undefined) return undefined;
    const tree = this.generator.build(xdsCluster(recorded, this.config), xdsAssignment(recorded));
    return {
      config: tree.config,
      endpoints: toPlainEndpoints(tree.endpoints),
      attributes: { ...settings, ...tree.attributes },
    };
  }

  private pickCluster(update: UpdateEvent): RecordedClusterEntry | undefined {
    const clusters = update.xdsClusters!;
    if (this.clusterName === undefined) {
      const runnable = clusters.filter((c) => !('error' in c) && c.kind !== 'aggregate');
      if (runnable.length !== 1) {
        throw new ReplayError(
          runnable.length === 0
            ? `the recording's first xDS update has no EDS cluster to replay (clusters: ${clusters.map((c) => c.name).join(', ') || 'none'})`
            : `the channel used ${runnable.length} clusters (${runnable.map((c) => c.name).join(', ')}): choose one with --xds-cluster NAME`,
        );
      }
      this.clusterName = runnable[0]!.name;
    }
    const found = clusters.find((c) => c.name === this.clusterName);
    if (found === undefined && !this.seen) {
      throw new ReplayError(
        `the recording has no cluster "${this.clusterName}" (clusters: ${clusters.map((c) => c.name).join(', ') || 'none'})`,
      );
    }
    this.seen = true;
    if (found !== undefined && !('error' in found) && found.kind !== 'eds') {
      throw new ReplayError(
        `cluster ${found.name} is ${found.kind === 'aggregate' ? 'an aggregate' : 'a LOGICAL_DNS'} cluster; replay runs EDS clusters`,
      );
    }
    return found;
  }

  /** The replayed cluster's name (xDS recordings), once the first update chose it. */
  get cluster(): string | undefined {
    return this.clusterName;
  }
}

function xdsCluster(recorded: RecordedCluster, config: unknown): XdsCluster {
  return {
    name: recorded.name,
    discovery: { kind: 'eds', edsServiceName: recorded.name },
    lbPolicy: (config ?? recorded.lbPolicy) as LbConfigList,
    maxRequests: recorded.maxRequests,
    outlierDetection: recorded.outlierDetection as XdsOutlierDetectionConfig | undefined,
    lrsLoadReporting: false,
    overrideHostStatus: recorded.overrideHostStatus as XdsHealthStatus[],
    upstreamTls: undefined,
  };
}

function xdsAssignment(recorded: RecordedCluster): XdsEndpointResource {
  const a = recorded.assignment!;
  return {
    clusterName: '',
    priorities: a.priorities.map((localities) =>
      localities.map((l) => ({
        name: l.locality,
        key: localityKey(l.locality),
        weight: l.weight,
        endpoints: l.endpoints.map((e) => ({
          addresses: e.addresses.map((x) => parseAddress(x)),
          weight: e.weight,
          healthStatus: e.healthStatus,
          hashKey: e.hashKey,
          hostname: '',
        })),
      })),
    ),
    drops: a.drops,
  };
}
