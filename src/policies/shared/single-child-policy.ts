// The forwarding every policy with one child repeats (cluster_impl, cluster_manager's per-cluster child,
// cds, xds_wrr_locality, outlier_detection, priority's child): exitIdle and resetBackoff go to the child;
// destroy marks the policy destroyed (late child reports are then ignored), runs the policy's own clean-up,
// and destroys the child.

/** What the one child must offer: a ChildPolicy, or any LoadBalancer. */
export interface ForwardingTarget {
  exitIdle(): void;
  resetBackoff(): void;
  destroy(): void;
}

export abstract class SingleChildPolicy {
  /** Set by destroy(); a subclass ignores child reports and updates once it is. */
  protected destroyed = false;
  protected abstract readonly child: ForwardingTarget;

  exitIdle(): void {
    this.child.exitIdle();
  }

  resetBackoff(): void {
    this.child.resetBackoff();
  }

  destroy(): void {
    this.destroyed = true;
    this.beforeChildDestroyed();
    this.child.destroy();
  }

  /** The policy's own clean-up (timers, shared counters), run by destroy() before the child is destroyed. */
  protected beforeChildDestroyed(): void {}
}
