import type { BackendMetricsListener, Subchannel, Unwatch } from '../../core/index.js';
import { ForwardingSubchannel } from '../shared/forwarding-subchannel.js';

/**
 * A subchannel of one endpoint's pick_first child as weighted_round_robin hands it out: while out-of-band
 * reporting is on, it holds an ORCA watch (A51) feeding the endpoint's weight (A58 "OOB Load Reporting").
 * The watch can be started, restarted with a new period, or stopped on the live subchannel, as A58 asks when
 * enable_oob_load_report or oob_reporting_period change. Pick results carry `inner`, the channel's own.
 */
export class OobWatchedSubchannel extends ForwardingSubchannel {
  private unwatch: Unwatch | null = null;
  private periodMs = 0;

  constructor(
    inner: Subchannel,
    private readonly listener: BackendMetricsListener,
    private readonly onRelease: (subchannel: OobWatchedSubchannel) => void,
  ) {
    super(inner);
  }

  /** Watches out-of-band reports every `periodMs`, or stops with null; a new period restarts the watch. */
  setOobPeriod(periodMs: number | null): void {
    if (periodMs === null) {
      this.unwatch?.();
      this.unwatch = null;
      return;
    }
    if (this.unwatch !== null && periodMs === this.periodMs) return;
    this.unwatch?.();
    this.periodMs = periodMs;
    this.unwatch = this.inner.watchBackendMetrics?.(periodMs, this.listener) ?? null;
  }

  override release(): void {
    this.setOobPeriod(null);
    this.onRelease(this);
    this.inner.release();
  }
}
