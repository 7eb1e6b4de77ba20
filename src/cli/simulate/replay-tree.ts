// From a recorded update to a tree the simulator runs. A plain update runs as it was (or under another root
// config). An xDS update runs the channel's own tree: its root config (xds_cluster_manager over one cds child per
// cluster the routes name) with the recorded clusters as the XdsConfig (A74) the cds policies read, so every
// cluster is built as a channel builds it — EDS and LOGICAL_DNS clusters (A37, A61) below their priorities,
// aggregate clusters (A75) as a priority over their leaf clusters. `--xds-cluster NAME` runs cds for that
// one cluster; `--config` replaces every cluster's endpoint-picking policy.

import { type ChannelArgs, ok, parseAddress, type StatusOr, status } from '../../core/index.js';
import type { RecordedCluster, RecordedEvent, UpdateEvent } from '../../recorder/index.js';
import type { PlainEndpoint } from '../../sim/index.js';
import { CDS } from '../../xds/policy-names.js';
import { localityKey, type XdsEndpointResource } from '../../xds/resources/cluster-load-assignment.js';
import type { XdsHealthStatus } from '../../xds/resources/health-status.js';
import type { LbConfigList } from '../../xds/resources/lb-policy-registry.js';
import type {
  XdsCluster,
  XdsClusterDiscovery,
  XdsOutlierDetectionConfig,
} from '../../xds/resources/types.js';
import { XDS_CONFIG_ATTRIBUTE, type XdsClusterConfig, type XdsClusters } from '../../xds/xds-config.js';
import type { EndpointInfo } from './run-scenario.js';

export interface ReplayTree {
  readonly config: unknown;
  readonly endpoints: readonly PlainEndpoint[];
  readonly attributes: ChannelArgs;
  /** Every address the tree may connect to (an xDS update's are in its clusters, not in `endpoints`). */
  readonly addresses: readonly string[];
  /** xDS: each endpoint of the clusters replayed, with its cluster, priority and locality. */
  readonly endpointInfos?: readonly EndpointInfo[];
  /** xDS, every routed cluster replayed: the only cluster the channel routed to, if one. */
  readonly routing?: { readonly onlyCluster?: string };
  /** xDS: each replayed cluster's endpoint-picking policy. */
  readonly clusterPolicies?: Readonly<Record<string, unknown>>;
}

type RecordedClusterEntry = NonNullable<UpdateEvent['xdsClusters']>[number];

/** A recording the replay cannot run: the message says what to change. */
export class ReplayError extends Error {}

/** The root config of a recorded xDS channel: xds_cluster_manager's children, `cluster:NAME` → cds of NAME. */
function clusterManagerChildren(config: unknown): Map<string, string> {
  const children = new Map<string, string>();
  const root = (Array.isArray(config) ? config[0] : config) as Record<string, unknown> | undefined;
  const manager = Object.values(root ?? {})[0] as { children?: Record<string, unknown> } | undefined;
  for (const [child, value] of Object.entries(manager?.children ?? {})) {
    const policy = (value as { childPolicy?: unknown[] }).childPolicy?.[0] as
      | Record<string, unknown>
      | undefined;
    const cds = policy?.[CDS] as { cluster?: unknown } | undefined;
    if (typeof cds?.cluster === 'string') children.set(child, cds.cluster);
  }
  return children;
}

/** Builds the trees of one recording's updates, in order. */
export class ReplayTreeBuilder {
  private chosen: string | undefined;
  /** Whether an xDS update was built yet (the first one is checked against `--xds-cluster`). */
  private seen = false;

  /**
   * @param config another LB config: the root's for a plain recording, every cluster's endpoint-picking policy
   *   for an xDS one.
   * @param cluster the one xDS cluster to replay (`--xds-cluster`), or every cluster the channel routed to.
   */
  constructor(
    private readonly config: unknown,
    cluster: string | undefined,
  ) {
    this.chosen = cluster;
  }

  /** The tree for an update. */
  build(update: UpdateEvent): ReplayTree {
    const settings = update.settings ?? {};
    if (update.xdsClusters === undefined) {
      const endpoints = (update.endpoints ?? []).map((e) => ({
        addresses: e.addresses,
        ...(e.attributes ? { attributes: e.attributes } : {}),
      }));
      return {
        config: this.config ?? update.config,
        endpoints,
        attributes: settings,
        addresses: endpoints.flatMap((e) => e.addresses),
      };
    }
    const recorded = update.xdsClusters;
    const names = () => recorded.map((c) => c.name).join(', ') || 'none';
    if (!this.seen) {
      this.seen = true;
      if (this.chosen !== undefined && !recorded.some((c) => c.name === this.chosen))
        throw new ReplayError(`the recording has no cluster "${this.chosen}" (clusters: ${names()})`);
      if (this.chosen === undefined && update.xdsRoutes === undefined) {
        // A recording without routes cannot say which cluster each call went to: one cluster, or choose one.
        const used = [...new Set(clusterManagerChildren(update.config).values())];
        if (used.length > 1)
          throw new ReplayError(
            `the channel used ${used.length} clusters (${used.join(', ')}) and the recording has no routes: choose one with --xds-cluster NAME`,
          );
      }
    }
    const clusters = new Map<string, StatusOr<XdsClusterConfig>>();
    const policies: Record<string, unknown> = {};
    for (const entry of recorded) {
      clusters.set(entry.name, this.clusterConfig(entry));
      if (!('error' in entry) && entry.kind !== 'aggregate')
        policies[entry.name] = this.config ?? entry.lbPolicy;
    }
    const xdsClusters: XdsClusters = { clusters };
    const scope = this.scope(recorded, update.config);
    const infos = endpointInfos(recorded, scope);
    const routed = [...new Set(clusterManagerChildren(update.config).values())];
    return {
      config: this.chosen === undefined ? update.config : [{ [CDS]: { cluster: this.chosen } }],
      endpoints: [],
      attributes: { ...settings, [XDS_CONFIG_ATTRIBUTE]: xdsClusters },
      addresses: infos.flatMap((e) => e.addresses),
      endpointInfos: infos,
      ...(this.chosen === undefined && {
        routing: routed.length === 1 ? { onlyCluster: routed[0]! } : {},
      }),
      clusterPolicies: Object.fromEntries(Object.entries(policies).filter(([name]) => scope.has(name))),
    };
  }

  /** The chosen cluster (`--xds-cluster`), or undefined when every cluster the channel routed to is replayed. */
  get cluster(): string | undefined {
    return this.chosen;
  }

  /** The leaf clusters replayed: the chosen one's (itself, or an aggregate's leaves), or every routed one's. */
  private scope(recorded: readonly RecordedClusterEntry[], rootConfig: unknown): Set<string> {
    const byName = new Map(recorded.map((c) => [c.name, c]));
    const roots =
      this.chosen !== undefined ? [this.chosen] : [...clusterManagerChildren(rootConfig).values()];
    const leaves = new Set<string>();
    for (const name of roots) {
      const c = byName.get(name);
      if (c !== undefined && !('error' in c) && c.kind === 'aggregate') {
        for (const leaf of c.leafClusters ?? []) leaves.add(leaf);
      } else leaves.add(name);
    }
    return leaves;
  }

  private clusterConfig(entry: RecordedClusterEntry): StatusOr<XdsClusterConfig> {
    if ('error' in entry) return { ok: false, status: status(entry.error.code, entry.error.details) };
    const cluster = xdsCluster(entry, entry.kind === 'aggregate' ? undefined : this.config);
    if (entry.kind === 'aggregate')
      return ok({ cluster, children: { kind: 'aggregate', leafClusters: entry.leafClusters ?? [] } });
    return ok({
      cluster,
      children: {
        kind: 'endpoints',
        endpoints: entry.assignment === undefined ? undefined : xdsAssignment(entry),
        resolutionNote: entry.resolutionNote ?? '',
      },
    });
  }
}

function discoveryOf(recorded: RecordedCluster): XdsClusterDiscovery {
  switch (recorded.kind) {
    case 'aggregate':
      return { kind: 'aggregate', clusters: recorded.leafClusters ?? [] };
    case 'logical_dns':
      return { kind: 'logical_dns', hostname: recorded.dns?.hostname ?? '', port: recorded.dns?.port ?? 0 };
    case 'eds':
      return { kind: 'eds', edsServiceName: recorded.name };
  }
}

function xdsCluster(recorded: RecordedCluster, config: unknown): XdsCluster {
  return {
    name: recorded.name,
    discovery: discoveryOf(recorded),
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

/**
 * The endpoints of the replayed leaf clusters, in report form: priorities named `priority N` when one cluster
 * is replayed, `CLUSTER priority N` when several are. An address in two clusters counts for the first.
 */
function endpointInfos(
  recorded: readonly RecordedClusterEntry[],
  scope: ReadonlySet<string>,
): EndpointInfo[] {
  const infos: EndpointInfo[] = [];
  const named = new Set<string>();
  const several = scope.size > 1;
  for (const c of recorded) {
    if ('error' in c || c.kind === 'aggregate' || !scope.has(c.name) || c.assignment === undefined) continue;
    c.assignment.priorities.forEach((localities, p) => {
      const priority = several ? `${c.name} priority ${p}` : `priority ${p}`;
      for (const l of localities) {
        const { region, zone, subZone } = l.locality;
        const locality = [region, zone, subZone].filter(Boolean).join('/') || '(default)';
        for (const e of l.endpoints) {
          const name = e.addresses[0]!;
          if (named.has(name)) continue;
          named.add(name);
          infos.push({
            name,
            addresses: e.addresses,
            locality,
            priority,
            priorityChild: priority,
            cluster: c.name,
          });
        }
      }
    });
  }
  return infos;
}

/**
 * Every address of cluster `name` (of its leaf clusters, for an aggregate) in any update of the recording: the
 * calls a replay of that one cluster takes from the recording.
 */
export function addressesOfCluster(events: readonly RecordedEvent[], name: string): Set<string> {
  const addresses = new Set<string>();
  for (const e of events) {
    if (e.type !== 'update' || e.xdsClusters === undefined) continue;
    const byName = new Map(e.xdsClusters.map((c) => [c.name, c]));
    const top = byName.get(name);
    const leaves =
      top !== undefined && !('error' in top) && top.kind === 'aggregate' ? (top.leafClusters ?? []) : [name];
    for (const leaf of leaves) {
      const c = byName.get(leaf);
      if (c === undefined || 'error' in c) continue;
      for (const localities of c.assignment?.priorities ?? [])
        for (const l of localities)
          for (const ep of l.endpoints) for (const a of ep.addresses) addresses.add(a);
    }
  }
  return addresses;
}
