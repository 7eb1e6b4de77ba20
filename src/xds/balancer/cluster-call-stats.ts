// A37 "Use Global Circuit Breaking Atomic": the in-flight call count of a cluster is shared by every
// xds_cluster_impl instance for it (a cluster used alone and through an aggregate cluster, several priority
// children, several channels), so max_requests limits the cluster as a whole. The same object records drops
// by category, which is what load reporting would read.
//
// A picked call counts at once, not only when it starts: grpc-js starts a call after its pick (once the call
// credentials are ready), so every call picked in one turn — a burst, or the queue drained when a picker
// arrives — would pass the limit together if only started calls counted. A pick that has not started yet is a
// reservation; it becomes an in-flight call when the call starts, and the reservations still open when the
// turn's timer fires are dropped (a pick whose call never starts — re-picked, cancelled — must not leak).
// The timer is set only by a pick that finds a reservation still open: when calls come one at a time, each
// starts before the next pick and no timer is needed (a timer per call was about 0.9 % of a channel process's
// CPU profile). The price: a lone pick whose call never starts still counts during the turn of the next pick,
// which sets the timer.

import type { Clock } from '../../core/index.js';

/** Calls and drops of one cluster (keyed by cluster name and EDS service name, as A37 says). */
export class ClusterCallStats {
  /** Calls started and not yet ended. */
  inFlight = 0;
  /** Calls picked in this turn whose start has not been seen yet. */
  reserved = 0;
  /** Calls started through this cluster, ever (what load reporting's total_issued_requests would read). */
  issued = 0;
  /** Whether the timer that drops the open reservations is set. */
  private expiring = false;
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

  /** Calls that count against max_requests: in flight, and picked but not started yet. */
  get outstanding(): number {
    return this.inFlight + this.reserved;
  }

  recordDrop(category: string): void {
    this.drops.set(category, (this.drops.get(category) ?? 0) + 1);
  }

  /**
   * What a pick compares with max_requests: {@link outstanding}. A reservation it finds open sets the timer
   * that drops the reservations still open when `clock`'s turn ends.
   */
  outstandingForPick(clock: Clock): number {
    if (this.reserved > 0 && !this.expiring) {
      this.expiring = true;
      // One function for every turn's timer, not a closure per turn.
      clock.setTimer(0, this.expireReservations);
    }
    return this.inFlight + this.reserved;
  }

  /** A call was picked (admitted by {@link outstandingForPick}); it counts until its start is seen. */
  reserve(): void {
    this.reserved++;
  }

  private readonly expireReservations = (): void => {
    this.expiring = false;
    this.reserved = 0;
  };

  /** A picked call started (its reservation, if still open, becomes the in-flight call). */
  callStarted(): void {
    if (this.reserved > 0) this.reserved--;
    this.inFlight++;
    this.issued++;
  }

  callEnded(): void {
    this.inFlight--;
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
