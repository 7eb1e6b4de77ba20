import type { CancelTimer, Clock } from '../../core/index.js';

/**
 * A56 "Child Lifetime Management" (and A28's removed targets): a deactivated child is kept for a while so it
 * can be reused, then destroyed unless it is chosen again first.
 */
export class RetentionTimer {
  private cancel: CancelTimer | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly onExpired: () => void,
  ) {}

  /** Whether the child is deactivated and waiting out its retention. */
  get running(): boolean {
    return this.cancel !== null;
  }

  /** Starts retention; a running timer keeps its original deadline. Returns whether it started. */
  start(ms: number): boolean {
    if (this.cancel !== null) return false;
    this.cancel = this.clock.setTimer(ms, () => {
      this.cancel = null;
      this.onExpired();
    });
    return true;
  }

  /** Stops retention (the child is reactivated or destroyed). Returns whether it was running. */
  stop(): boolean {
    if (this.cancel === null) return false;
    this.cancel();
    this.cancel = null;
    return true;
  }
}
