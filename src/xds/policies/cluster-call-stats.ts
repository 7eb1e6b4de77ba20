// A37 "Use Global Circuit Breaking Atomic": the in-flight call count of a cluster is shared by every
// xds_cluster_impl instance for it (a cluster used alone and through an aggregate cluster, several priority
// children, several channels), so max_requests limits the cluster as a whole. The same object records drops
// by category, which is what load reporting would read.

/** Calls and drops of one cluster (keyed by cluster name and EDS service name, as A37 says). */
export class ClusterCallStats {
  inFlight = 0;
  /** Drops per EDS drop category. */
  readonly drops = new Map<string, number>();
  /** Calls dropped by circuit breaking (no category). */
  uncategorizedDrops = 0;
  /** @internal instances holding this object */
  refs = 0;

  constructor(
    readonly cluster: string,
    readonly edsServiceName: string,
  ) {}

  recordDrop(category: string): void {
    this.drops.set(category, (this.drops.get(category) ?? 0) + 1);
  }
}

const registry = new Map<string, ClusterCallStats>();

function keyOf(cluster: string, edsServiceName: string): string {
  return JSON.stringify([cluster, edsServiceName]);
}

/** The shared stats of a cluster; every acquire is paired with one {@link releaseClusterCallStats}. */
export function acquireClusterCallStats(cluster: string, edsServiceName: string): ClusterCallStats {
  const key = keyOf(cluster, edsServiceName);
  let stats = registry.get(key);
  if (stats === undefined) {
    stats = new ClusterCallStats(cluster, edsServiceName);
    registry.set(key, stats);
  }
  stats.refs++;
  return stats;
}

export function releaseClusterCallStats(stats: ClusterCallStats): void {
  if (--stats.refs > 0) return;
  const key = keyOf(stats.cluster, stats.edsServiceName);
  // Calls still in flight keep the object alive through their hooks; a new acquire starts a fresh count.
  if (registry.get(key) === stats) registry.delete(key);
}

/** The shared stats of a cluster if some xds_cluster_impl holds them (for tests and diagnostics). */
export function findClusterCallStats(cluster: string, edsServiceName: string): ClusterCallStats | undefined {
  return registry.get(keyOf(cluster, edsServiceName));
}
