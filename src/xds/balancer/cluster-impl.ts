// xds_cluster_impl_experimental (gRFC A37 "xds_cluster_impl_experimental LB Policy", with A74 "Changes in
// xds_cluster_impl and xds_override_host LB policies"): EDS drop_overloads and circuit breaking for one
// cluster, above the cluster's endpoint-picking policy. Per A74 its config keeps only the cluster name and the
// child policy; the drops and the request limit come from the cluster's entry in the XdsConfig attribute.
// It also puts the cluster's transport security (A29, A82) on the subchannels below it, and, for a cluster with
// lrs_server (A27 LRS, A64 / A85), counts each call in its locality's load counter and each drop in the cluster's
// load store (the locality is the endpoint attribute of the picked subchannel, found once per pick result).

import {
  type CallEndDetails,
  type Clock,
  CONNECTING,
  Code,
  type CompletePick,
  ConfigError,
  ConfigReader,
  childHelper,
  type DropPick,
  type Helper,
  type LbUpdate,
  type LoadBalancer,
  OK_STATUS,
  type ParsedLbConfig,
  type PickArgs,
  type Picker,
  type PickResult,
  type PolicyFactory,
  type PolicyLookup,
  type PolicyNode,
  randomOf,
  type Status,
  type Subchannel,
  unavailable,
} from '../../core/index.js';
import { ChildPolicy } from '../../policies/shared/child-policy.js';
import { SingleChildPolicy } from '../../policies/shared/single-child-policy.js';
import { XDS_LOCALITY_NAME } from '../attribute-keys.js';
import {
  type ClusterLoadStore,
  type LocalityLoadCounter,
  loadReportingOf,
  type XdsLoadReporting,
} from '../load-store.js';
import { XDS_CLUSTER_IMPL } from '../policy-names.js';
import {
  backendMetricPropagationKey,
  NO_BACKEND_METRIC_PROPAGATION,
  type XdsBackendMetricPropagation,
} from '../resources/backend-metric-propagation.js';
import type { XdsDropCategory, XdsLocalityName } from '../resources/cluster-load-assignment.js';
import { DEFAULT_MAX_CONCURRENT_REQUESTS } from '../resources/types.js';
import {
  type ClusterTransportSecurity,
  transportSecurityOf,
  XDS_TRANSPORT_SECURITY,
} from '../transport-security.js';
import { xdsClustersOf } from '../xds-config.js';
import {
  acquireClusterCallStats,
  type ClusterCallStats,
  releaseClusterCallStats,
} from './cluster-call-stats.js';

export { XDS_CLUSTER_IMPL };

const CIRCUIT_BREAKING = Object.freeze({ circuitBreaking: true as const });

export interface ClusterImplConfig {
  readonly clusterName: string;
  readonly childPolicy: ParsedLbConfig;
}

export function parseClusterImplConfig(
  json: unknown,
  path: string,
  registry: PolicyLookup,
): ClusterImplConfig {
  const reader = new ConfigReader(json, path);
  const name = reader.required('clusterName');
  if (typeof name.value !== 'string' || name.value === '') {
    throw new ConfigError(name.path, 'expected a non-empty cluster name');
  }
  const child = reader.required('childPolicy');
  return { clusterName: name.value, childPolicy: registry.parseLbConfigList(child.value, child.path) };
}

/** What the cluster's XdsConfig entry says about drops and limits. */
interface ClusterLimits {
  readonly edsServiceName: string;
  readonly maxRequests: number;
  readonly drops: readonly XdsDropCategory[];
  /** A27: lrs_server is set (self). */
  readonly lrsLoadReporting: boolean;
  readonly backendMetricPropagation: XdsBackendMetricPropagation;
}

function limitsOf(update: LbUpdate<ClusterImplConfig>): ClusterLimits {
  const entry = xdsClustersOf(update.attributes)?.clusters.get(update.config.clusterName);
  if (entry === undefined || !entry.ok) {
    return {
      edsServiceName: '',
      maxRequests: DEFAULT_MAX_CONCURRENT_REQUESTS,
      drops: [],
      lrsLoadReporting: false,
      backendMetricPropagation: NO_BACKEND_METRIC_PROPAGATION,
    };
  }
  const { cluster, children } = entry.value;
  return {
    edsServiceName: cluster.discovery.kind === 'eds' ? cluster.discovery.edsServiceName : '',
    maxRequests: cluster.maxRequests,
    drops: children.kind === 'endpoints' ? (children.endpoints?.drops ?? []) : [],
    lrsLoadReporting: cluster.lrsLoadReporting,
    backendMetricPropagation: cluster.backendMetricPropagation ?? NO_BACKEND_METRIC_PROPAGATION,
  };
}

/** A call's locality when its subchannel has none (not an EDS endpoint): reported under the empty locality. */
const NO_LOCALITY: XdsLocalityName = Object.freeze({ region: '', zone: '', subZone: '' });

/** Load reporting of a cluster with lrs_server: its store, and the counter of a picked subchannel's locality. */
interface LoadCounting {
  readonly store: ClusterLoadStore;
  counterOf(subchannel: Subchannel): LocalityLoadCounter;
}

interface PreparedDrop {
  readonly category: string;
  readonly perMillion: number;
  readonly result: DropPick;
}

/**
 * Drops a call for each EDS drop category with that category's probability (one draw per category, in order),
 * then drops it when the cluster already carries `maxRequests` calls (in flight, or picked and not started yet),
 * then asks the child. A complete pick reserves its place at once (see cluster-call-stats.ts) and gets call
 * hooks that count the call in flight; the hooked result is built once per child result.
 */
export class ClusterImplPicker implements Picker {
  constructor(
    private readonly child: Picker,
    private readonly drops: readonly PreparedDrop[],
    private readonly stats: ClusterCallStats,
    private readonly maxRequests: number,
    private readonly overLimit: DropPick,
    private readonly random: () => number,
    private readonly hooked: WeakMap<CompletePick, CompletePick>,
    private readonly clock: Clock,
    private readonly load: LoadCounting | undefined,
  ) {}

  pick(args: PickArgs): PickResult {
    const drops = this.drops;
    for (let i = 0; i < drops.length; i++) {
      const drop = drops[i]!;
      if (this.random() * 1_000_000 < drop.perMillion) {
        this.stats.recordDrop(drop.category);
        this.load?.store.recordDrop(drop.category);
        return drop.result;
      }
    }
    const stats = this.stats;
    if (stats.outstandingForPick(this.clock) >= this.maxRequests) {
      stats.uncategorizedDrops++;
      this.load?.store.recordUncategorizedDrop();
      return this.overLimit;
    }
    const result = this.child.constantResult ?? this.child.pick(args);
    if (result.type !== 'complete') return result;
    let hooked = this.hooked.get(result);
    if (hooked === undefined) {
      const load = this.load;
      hooked =
        load === undefined
          ? withCallCounting(result, stats)
          : withLoadCounting(result, stats, load.counterOf(result.subchannel));
      this.hooked.set(result, hooked);
    }
    stats.reserve();
    return hooked;
  }
}

function withCallCounting(result: CompletePick, stats: ClusterCallStats): CompletePick {
  const started = result.onCallStarted;
  const ended = result.onCallEnded;
  return Object.freeze({
    type: 'complete',
    subchannel: result.subchannel,
    onCallStarted: () => {
      stats.callStarted();
      started?.();
    },
    // The details carry the call's per-call ORCA report (A51): a weighted_round_robin child reads it.
    onCallEnded: (s: Status, details?: CallEndDetails) => {
      stats.callEnded();
      ended?.(s, details);
    },
  });
}

/** withCallCounting, and the call counted in its locality's load (A27 LRS; its ORCA report for A64 / A85). */
function withLoadCounting(
  result: CompletePick,
  stats: ClusterCallStats,
  locality: LocalityLoadCounter,
): CompletePick {
  const started = result.onCallStarted;
  const ended = result.onCallEnded;
  return Object.freeze({
    type: 'complete',
    subchannel: result.subchannel,
    onCallStarted: () => {
      stats.callStarted();
      locality.callStarted();
      started?.();
    },
    onCallEnded: (s: Status, details?: CallEndDetails) => {
      stats.callEnded();
      locality.callEnded(s.code === Code.OK, details);
      ended?.(s, details);
    },
  });
}

export class ClusterImplLb extends SingleChildPolicy implements LoadBalancer<ClusterImplConfig> {
  protected readonly child: ChildPolicy;
  private readonly random: () => number;
  /** Hooked results per child result; replaced when load counting changes (the hooks hold its counters). */
  private hooked = new WeakMap<CompletePick, CompletePick>();
  /** The locality of each subchannel created below (the endpoint attribute), for load reporting. */
  private readonly localities = new WeakMap<Subchannel, XdsLocalityName>();
  /** The cluster's load store while it has lrs_server and the resolver offers load reporting. */
  private load: { reporting: XdsLoadReporting; counting: LoadCounting } | null = null;
  private propagation: XdsBackendMetricPropagation = NO_BACKEND_METRIC_PROPAGATION;
  /** A new CDS version parses a new propagation object: compared by content, so an equal one changes nothing. */
  private propagationKey = '';
  private stats: ClusterCallStats | null = null;
  private drops: readonly PreparedDrop[] = [];
  private maxRequests = DEFAULT_MAX_CONCURRENT_REQUESTS;
  private overLimit: DropPick = Object.freeze({ type: 'drop', status: unavailable('') });
  /** The child's latest report, re-wrapped whenever drops or limits change. */
  private last: { state: Parameters<Helper['updateState']>[0]; status: Status; picker: Picker } | null = null;
  /** While an update runs, child reports are only recorded; the update reports once at its end. */
  private updating = false;
  /** A29 / A82: a TLS cluster's transport security (from cds), put on every subchannel created below. */
  private security: ClusterTransportSecurity | undefined = undefined;

  constructor(
    private readonly helper: Helper,
    registry: PolicyLookup,
  ) {
    super();
    this.random = randomOf(helper);
    this.child = new ChildPolicy(
      childHelper(helper, {
        // One child: whether its exitIdle() would wake anything is ours to say too.
        updateWakeable: (wakeable) => helper.updateWakeable?.(wakeable),
        updateState: (state, s, picker) => {
          if (this.destroyed) return;
          this.last = { state, status: s, picker };
          if (!this.updating) this.report();
        },
        createSubchannel: (address, attributes) => {
          const subchannel = helper.createSubchannel(
            address,
            this.security === undefined ? attributes : attributes.with(XDS_TRANSPORT_SECURITY, this.security),
          );
          const locality = attributes.get(XDS_LOCALITY_NAME);
          if (locality !== undefined) this.localities.set(subchannel, locality);
          return subchannel;
        },
      }),
      registry,
    );
  }

  update(update: LbUpdate<ClusterImplConfig>): boolean {
    if (this.destroyed) return false;
    const { clusterName, childPolicy } = update.config;
    const limits = limitsOf(update);
    // Only a cluster with an UpstreamTlsContext tags its subchannels: a plaintext cluster's connections use the
    // fallback credentials anyway, and untagged subchannels cost no Attributes or options object each.
    const security = transportSecurityOf(update.attributes);
    this.security = security?.upstreamTls === undefined ? undefined : security;
    if (
      this.stats === null ||
      this.stats.cluster !== clusterName ||
      this.stats.edsServiceName !== limits.edsServiceName
    ) {
      const previous = this.stats;
      this.stats = acquireClusterCallStats(clusterName, limits.edsServiceName);
      if (previous !== null) releaseClusterCallStats(previous);
    }
    this.updateLoadReporting(
      clusterName,
      limits,
      limits.lrsLoadReporting ? loadReportingOf(update.attributes) : undefined,
    );
    this.maxRequests = limits.maxRequests;
    this.overLimit = Object.freeze({
      type: 'drop',
      status: unavailable(
        `cluster ${clusterName}: circuit breaking, ${limits.maxRequests} requests in flight`,
      ),
      dropReason: CIRCUIT_BREAKING,
    });
    this.drops = limits.drops
      .filter((d) => d.perMillion > 0)
      .map((d) => ({
        category: d.category,
        perMillion: d.perMillion,
        result: Object.freeze({
          type: 'drop',
          status: unavailable(`EDS-configured drop: ${d.category} (cluster ${clusterName})`),
          dropReason: Object.freeze({ category: d.category }),
        }) as DropPick,
      }));
    this.updating = true;
    let accepted: boolean;
    try {
      accepted = this.child.update(childPolicy, update.endpoints, update.attributes, update.resolutionNote);
    } finally {
      this.updating = false;
    }
    // New drops or limits apply at once, even when the child did not report during the update.
    this.report();
    return accepted;
  }

  /** Acquires the cluster's load store when reporting starts or the store's key changes; releases the old one. */
  private updateLoadReporting(
    clusterName: string,
    limits: ClusterLimits,
    reporting: XdsLoadReporting | undefined,
  ): void {
    const current = this.load;
    if (current === null && reporting === undefined) return;
    // ClusterStats.cluster_service_name is the Cluster's eds_service_name as configured, empty when unset (what
    // gRPC C-core, grpc-go and grpc-js-xds report); the EDS resource name then defaults to the cluster name.
    const serviceName = limits.edsServiceName === clusterName ? '' : limits.edsServiceName;
    const sameStore =
      current !== null &&
      current.reporting === reporting &&
      current.counting.store.cluster === clusterName &&
      current.counting.store.edsServiceName === serviceName;
    const propagationKey = backendMetricPropagationKey(limits.backendMetricPropagation);
    if (sameStore && this.propagationKey === propagationKey) return;
    // The hooked results hold the old counters: build them again.
    this.hooked = new WeakMap();
    this.propagation = limits.backendMetricPropagation;
    this.propagationKey = propagationKey;
    if (sameStore) {
      this.load = { reporting: current.reporting, counting: this.counting(current.counting.store) };
      return;
    }
    if (current !== null) current.reporting.releaseClusterLoad(current.counting.store);
    this.load =
      reporting === undefined
        ? null
        : {
            reporting,
            counting: this.counting(reporting.acquireClusterLoad(clusterName, serviceName)),
          };
  }

  private counting(store: ClusterLoadStore): LoadCounting {
    const propagation = this.propagation;
    const localities = this.localities;
    return {
      store,
      counterOf: (subchannel) => store.locality(localities.get(subchannel) ?? NO_LOCALITY, propagation),
    };
  }

  protected override beforeChildDestroyed(): void {
    if (this.stats !== null) releaseClusterCallStats(this.stats);
    this.stats = null;
    if (this.load !== null) this.load.reporting.releaseClusterLoad(this.load.counting.store);
    this.load = null;
  }

  /** The live view: the cluster's drops (per million) and circuit breaking, and the child below. */
  describe(): PolicyNode {
    const last = this.last;
    const stats = this.stats;
    const drops: string[] = this.drops.map((d) => `${d.category}: ${d.perMillion} per million`);
    const child = this.child.describe(last?.state ?? CONNECTING, last?.status ?? OK_STATUS);
    return {
      policy: XDS_CLUSTER_IMPL,
      state: child.state,
      ...(child.status !== undefined && { status: child.status }),
      facts: {
        ...(stats !== null && { cluster: stats.cluster, outstandingRequests: stats.outstanding }),
        maxConcurrentRequests: this.maxRequests,
        drops,
      },
      children: [{ name: 'child', node: child }],
    };
  }

  private report(): void {
    const last = this.last;
    if (last === null || this.stats === null) return;
    const picker = new ClusterImplPicker(
      last.picker,
      this.drops,
      this.stats,
      this.maxRequests,
      this.overLimit,
      this.random,
      this.hooked,
      this.helper.clock,
      this.load?.counting,
    );
    this.helper.updateState(last.state, last.status, picker);
  }
}

export const clusterImplFactory: PolicyFactory<ClusterImplConfig> = {
  name: XDS_CLUSTER_IMPL,
  parseConfig: (json, path, registry) => parseClusterImplConfig(json, path, registry),
  create: (helper, registry) => new ClusterImplLb(helper, registry),
};
