// A31 "Implementation for xDS RouteAction Support": a cluster stays in the LB config while anything can still
// route to it — the current config selector, or a call that an older selector routed and that has not finished
// its picks. The resolver removes a cluster only when its count falls to zero.

/** A cluster's count, changed in place: a call's ref and unref then cost one Map lookup each, no Map write. */
interface RefCount {
  count: number;
}

export class ClusterRefs {
  private readonly counts = new Map<string, RefCount>();

  /** `onUnused(name)` runs when a cluster's last reference is released. */
  constructor(private readonly onUnused: (cluster: string) => void) {}

  ref(cluster: string): void {
    const refs = this.counts.get(cluster);
    if (refs === undefined) this.counts.set(cluster, { count: 1 });
    else refs.count++;
  }

  unref(cluster: string): void {
    const refs = this.counts.get(cluster);
    if (refs === undefined) throw new Error(`cluster ${cluster} released more often than referenced`);
    if (--refs.count > 0) return;
    this.counts.delete(cluster);
    this.onUnused(cluster);
  }

  has(cluster: string): boolean {
    return this.counts.has(cluster);
  }

  /** Every cluster with at least one reference, in first-reference order. */
  names(): string[] {
    return [...this.counts.keys()];
  }
}
