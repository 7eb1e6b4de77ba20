// A31 "Implementation for xDS RouteAction Support": a cluster stays in the LB config while anything can still
// route to it — the current config selector, or a call that an older selector routed and that has not finished
// its picks. The resolver removes a cluster only when its count falls to zero.

export class ClusterRefs {
  private readonly counts = new Map<string, number>();

  /** `onUnused(name)` runs when a cluster's last reference is released. */
  constructor(private readonly onUnused: (cluster: string) => void) {}

  ref(cluster: string): void {
    this.counts.set(cluster, (this.counts.get(cluster) ?? 0) + 1);
  }

  unref(cluster: string): void {
    const count = this.counts.get(cluster);
    if (count === undefined) throw new Error(`cluster ${cluster} released more often than referenced`);
    if (count > 1) {
      this.counts.set(cluster, count - 1);
      return;
    }
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
