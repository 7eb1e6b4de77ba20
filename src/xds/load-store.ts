// Load reporting's counters (gRFC A27 "LRS", A64 / A85 backend metrics): what xds_cluster_impl counts and an
// LRS stream reports. One store per LRS server; in it one ClusterLoadStore per cluster and EDS service name
// (drops by category) holding one LocalityLoadCounter per locality and backend metric propagation (A85 makes
// the propagation part of the key). cluster_impl finds a locality's counter once per endpoint pick result, so a
// call costs a few integer additions and no allocation; a snapshot reads and resets the counters of an interval.
// The resolver hands cluster_impl the stores of its xDS client through XDS_LOAD_REPORTING_ARG (src/xds/lrs holds
// the client that owns them and streams their reports).

import type { BackendMetricReport, CallEndDetails, Clock } from '../core/index.js';
import {
  backendMetricPropagationKey,
  propagatesBackendMetrics,
  type XdsBackendMetricPropagation,
} from './resources/backend-metric-propagation.js';
// Types only: the resolver imports this file when grpc-js registers it, before any xds: channel loads the protos.
import type { XdsLocalityName } from './resources/cluster-load-assignment.js';

/** A metric summed over the calls whose report carried it (LRS `num_requests_finished_with_metric`, `total_metric_value`). */
export interface MetricSum {
  readonly requests: number;
  readonly total: number;
}

class MetricAccumulator implements MetricSum {
  requests = 0;
  total = 0;

  add(value: number): void {
    this.requests++;
    this.total += value;
  }

  /** The interval's sum, and a fresh start. */
  take(): MetricSum {
    const sum = { requests: this.requests, total: this.total };
    this.requests = 0;
    this.total = 0;
    return sum;
  }
}

/** One locality's counters over an interval. */
export interface LocalityLoadSnapshot {
  readonly locality: XdsLocalityName;
  readonly issued: number;
  readonly succeeded: number;
  readonly errored: number;
  /** Not reset by a report: the calls still running when it was taken. */
  readonly inProgress: number;
  /** A85: set when propagated and some call reported it. */
  readonly cpuUtilization?: MetricSum;
  readonly memUtilization?: MetricSum;
  readonly applicationUtilization?: MetricSum;
  /** A64 / A85 named metrics with their LRS names, in first-seen order. */
  readonly namedMetrics: readonly (MetricSum & { readonly name: string })[];
}

/** The calls of one locality of one cluster, with one backend metric propagation. */
export class LocalityLoadCounter {
  issued = 0;
  succeeded = 0;
  errored = 0;
  inProgress = 0;
  private readonly wantsMetrics: boolean;
  private readonly cpu = new MetricAccumulator();
  private readonly mem = new MetricAccumulator();
  private readonly application = new MetricAccumulator();
  /** By LRS name; entries stay (and are zeroed) across reports, so a steady metric allocates nothing per call. */
  private readonly named = new Map<string, MetricAccumulator>();

  constructor(
    readonly locality: XdsLocalityName,
    readonly propagation: XdsBackendMetricPropagation,
  ) {
    this.wantsMetrics = propagatesBackendMetrics(propagation);
  }

  /** A call picked through this locality started (A27 total_issued_requests, total_requests_in_progress). */
  callStarted(): void {
    this.issued++;
    this.inProgress++;
  }

  /**
   * The call ended: OK counts as successful, any other status as an error. Its per-call ORCA report (A51) is
   * read (and decoded) only when the cluster propagates some of it.
   */
  callEnded(ok: boolean, details: CallEndDetails | undefined): void {
    this.inProgress--;
    if (ok) this.succeeded++;
    else this.errored++;
    if (!this.wantsMetrics || details === undefined) return;
    const report = details.backendMetrics;
    if (report !== undefined) this.addReport(report);
  }

  /** A64 "Aggregation": each report is one request; each metric's values are added, with its own count. */
  private addReport(report: BackendMetricReport): void {
    const p = this.propagation;
    if (p.cpuUtilization) this.cpu.add(report.cpuUtilization);
    if (p.memUtilization) this.mem.add(report.memUtilization);
    if (p.applicationUtilization) this.application.add(report.applicationUtilization);
    if (p.allNamedMetrics) {
      for (const key in report.namedMetrics) this.addNamed(key, report.namedMetrics[key]!);
    } else if (p.namedMetricKeys.size > 0) {
      for (const key of p.namedMetricKeys) {
        const value = report.namedMetrics[key];
        if (value !== undefined) this.addNamed(key, value);
      }
    }
  }

  private addNamed(key: string, value: number): void {
    let sum = this.named.get(key);
    if (sum === undefined) {
      sum = new MetricAccumulator();
      this.named.set(key, sum);
    }
    sum.add(value);
  }

  /** Whether the interval saw nothing: no call issued or ended, none running. */
  get idle(): boolean {
    return this.issued === 0 && this.succeeded === 0 && this.errored === 0 && this.inProgress === 0;
  }

  /** The interval's counts (in-progress is a level, not reset); the metrics that had no report are dropped. */
  take(): LocalityLoadSnapshot {
    const namedMetrics: (MetricSum & { name: string })[] = [];
    for (const [key, accumulator] of this.named) {
      if (accumulator.requests === 0) {
        this.named.delete(key);
        continue;
      }
      namedMetrics.push({ name: this.propagation.namedMetricPrefix + key, ...accumulator.take() });
    }
    const snapshot: LocalityLoadSnapshot = {
      locality: this.locality,
      issued: this.issued,
      succeeded: this.succeeded,
      errored: this.errored,
      inProgress: this.inProgress,
      ...(this.cpu.requests > 0 && { cpuUtilization: this.cpu.take() }),
      ...(this.mem.requests > 0 && { memUtilization: this.mem.take() }),
      ...(this.application.requests > 0 && { applicationUtilization: this.application.take() }),
      namedMetrics,
    };
    this.issued = 0;
    this.succeeded = 0;
    this.errored = 0;
    return snapshot;
  }
}

/** One cluster's load over an interval (an LRS ClusterStats). */
export interface ClusterLoadSnapshot {
  readonly cluster: string;
  readonly edsServiceName: string;
  /** The localities that issued, ended or still run calls, one entry per locality (propagations merged). */
  readonly localities: readonly LocalityLoadSnapshot[];
  /** Every drop: by category and by circuit breaking (which has no category). */
  readonly totalDrops: number;
  readonly drops: readonly { readonly category: string; readonly count: number }[];
  /** The interval measured on the clock since the cluster's previous snapshot (or its creation). */
  readonly intervalMs: number;
}

/** The load of one cluster and EDS service name on one LRS server. */
export class ClusterLoadStore {
  private readonly dropsByCategory = new Map<string, number>();
  private uncategorizedDrops = 0;
  private readonly localities = new Map<string, LocalityLoadCounter>();
  private lastSnapshotAt: number;
  /** @internal cluster_impl instances holding it */
  refs = 0;

  constructor(
    readonly cluster: string,
    readonly edsServiceName: string,
    now: number,
  ) {
    this.lastSnapshotAt = now;
  }

  /** A call dropped by an EDS drop_overload category. */
  recordDrop(category: string): void {
    this.dropsByCategory.set(category, (this.dropsByCategory.get(category) ?? 0) + 1);
  }

  /** A call dropped by circuit breaking: in total_dropped_requests, in no category. */
  recordUncategorizedDrop(): void {
    this.uncategorizedDrops++;
  }

  /** The counter of `locality` under `propagation` (created on first use, kept while the store lives). */
  locality(locality: XdsLocalityName, propagation: XdsBackendMetricPropagation): LocalityLoadCounter {
    const key = `${localityIdentity(locality)}\n${backendMetricPropagationKey(propagation)}`;
    let counter = this.localities.get(key);
    if (counter === undefined) {
      counter = new LocalityLoadCounter(locality, propagation);
      this.localities.set(key, counter);
    }
    return counter;
  }

  /** The interval's load, and a fresh interval from `now`. */
  take(now: number): ClusterLoadSnapshot {
    const merged = new Map<string, LocalityLoadSnapshot>();
    for (const counter of this.localities.values()) {
      if (counter.idle) continue;
      const snapshot = counter.take();
      const key = localityIdentity(counter.locality);
      const earlier = merged.get(key);
      merged.set(key, earlier === undefined ? snapshot : mergeLocality(earlier, snapshot));
    }
    const drops = [...this.dropsByCategory].map(([category, count]) => ({ category, count }));
    const totalDrops = drops.reduce((sum, d) => sum + d.count, this.uncategorizedDrops);
    this.dropsByCategory.clear();
    this.uncategorizedDrops = 0;
    const intervalMs = now - this.lastSnapshotAt;
    this.lastSnapshotAt = now;
    return {
      cluster: this.cluster,
      edsServiceName: this.edsServiceName,
      localities: [...merged.values()],
      totalDrops,
      drops,
      intervalMs,
    };
  }
}

/** One key per locality (a region may, in theory, contain any character). */
function localityIdentity(l: XdsLocalityName): string {
  return JSON.stringify([l.region, l.zone, l.subZone]);
}

function mergeSum(a: MetricSum | undefined, b: MetricSum | undefined): MetricSum | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return { requests: a.requests + b.requests, total: a.total + b.total };
}

/** Two propagations of one locality (channels of one cluster seeing different CDS versions) make one entry. */
function mergeLocality(a: LocalityLoadSnapshot, b: LocalityLoadSnapshot): LocalityLoadSnapshot {
  const named = new Map<string, MetricSum & { name: string }>();
  for (const m of [...a.namedMetrics, ...b.namedMetrics]) {
    const sum = mergeSum(named.get(m.name), m)!;
    named.set(m.name, { name: m.name, requests: sum.requests, total: sum.total });
  }
  const cpuUtilization = mergeSum(a.cpuUtilization, b.cpuUtilization);
  const memUtilization = mergeSum(a.memUtilization, b.memUtilization);
  const applicationUtilization = mergeSum(a.applicationUtilization, b.applicationUtilization);
  return {
    locality: a.locality,
    issued: a.issued + b.issued,
    succeeded: a.succeeded + b.succeeded,
    errored: a.errored + b.errored,
    inProgress: a.inProgress + b.inProgress,
    ...(cpuUtilization && { cpuUtilization }),
    ...(memUtilization && { memUtilization }),
    ...(applicationUtilization && { applicationUtilization }),
    namedMetrics: [...named.values()],
  };
}

/**
 * The cluster stores of one LRS server. A store stays while some cluster_impl holds it; a released one stays
 * until one more snapshot has reported what it counted.
 */
export class LoadStore {
  private readonly clusters = new Map<string, ClusterLoadStore>();

  constructor(private readonly clock: Clock) {}

  /** The store of `cluster` / `edsServiceName`; every acquire is paired with one {@link release}. */
  acquire(cluster: string, edsServiceName: string): ClusterLoadStore {
    const key = JSON.stringify([cluster, edsServiceName]);
    let store = this.clusters.get(key);
    if (store === undefined) {
      store = new ClusterLoadStore(cluster, edsServiceName, this.clock.now());
      this.clusters.set(key, store);
    }
    store.refs++;
    return store;
  }

  release(store: ClusterLoadStore): void {
    if (store.refs > 0) store.refs--;
  }

  /** Whether some cluster_impl holds a store. */
  get held(): boolean {
    for (const store of this.clusters.values()) if (store.refs > 0) return true;
    return false;
  }

  /** Whether any store (held, or released and not reported yet) is left. */
  get size(): number {
    return this.clusters.size;
  }

  /**
   * The load of the clusters named (every cluster when `names` is undefined: send_all_clusters) since their
   * previous snapshot; names no store has are skipped. Released stores are dropped once reported.
   */
  take(names: ReadonlySet<string> | undefined): ClusterLoadSnapshot[] {
    const now = this.clock.now();
    const snapshots: ClusterLoadSnapshot[] = [];
    for (const [key, store] of this.clusters) {
      if (names !== undefined && !names.has(store.cluster)) continue;
      snapshots.push(store.take(now));
      if (store.refs === 0) this.clusters.delete(key);
    }
    return snapshots;
  }

  /** Forgets the released stores (nothing will report them: the stream is stopping). */
  dropReleased(): void {
    for (const [key, store] of this.clusters) if (store.refs === 0) this.clusters.delete(key);
  }
}

/** What xds_cluster_impl reaches its cluster's load store through (the resolver sets it per xDS client). */
export interface XdsLoadReporting {
  /**
   * The store of `cluster` / `edsServiceName` on the LRS server of the cluster: today the xDS server the client
   * talks to (A27: lrs_server is `self`). Paired with one {@link releaseClusterLoad}; the first starts the LRS
   * stream, and the stream stops once the last is released and reported.
   */
  acquireClusterLoad(cluster: string, edsServiceName: string): ClusterLoadStore;
  releaseClusterLoad(store: ClusterLoadStore): void;
}

/** The update attribute (channel args) under which the resolver hands the tree its client's XdsLoadReporting. */
export const XDS_LOAD_REPORTING_ARG = Symbol('lbtree.xds.load_reporting');

export function loadReportingOf(
  args: Readonly<Record<string | symbol, unknown>>,
): XdsLoadReporting | undefined {
  const value = args[XDS_LOAD_REPORTING_ARG] as Partial<XdsLoadReporting> | undefined;
  return value !== undefined && typeof value.acquireClusterLoad === 'function'
    ? (value as XdsLoadReporting)
    : undefined;
}
