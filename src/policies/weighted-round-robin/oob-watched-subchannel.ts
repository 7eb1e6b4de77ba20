import type {
  Address,
  BackendMetricsListener,
  ConnectivityState,
  StateListener,
  Subchannel,
  Unwatch,
} from '../../core/index.js';

/**
 * A subchannel of one endpoint's pick_first child as weighted_round_robin hands it out: while out-of-band
 * reporting is on, it holds an ORCA watch (A51) feeding the endpoint's weight (A58 "OOB Load Reporting").
 * The watch can be started, restarted with a new period, or stopped on the live subchannel, as A58 asks when
 * enable_oob_load_report or oob_reporting_period change. Pick results carry `inner`, the channel's own.
 */
export class OobWatchedSubchannel implements Subchannel {
  private unwatch: Unwatch | null = null;
  private periodMs = 0;

  constructor(
    readonly inner: Subchannel,
    private readonly listener: BackendMetricsListener,
    private readonly onRelease: (subchannel: OobWatchedSubchannel) => void,
  ) {}

  get address(): Address {
    return this.inner.address;
  }
  get key(): string {
    return this.inner.key;
  }
  get state(): ConnectivityState {
    return this.inner.state;
  }
  get health(): ConnectivityState {
    return this.inner.health;
  }
  watchConnectivity(listener: StateListener): Unwatch {
    return this.inner.watchConnectivity(listener);
  }
  watchHealth(listener: StateListener): Unwatch {
    return this.inner.watchHealth(listener);
  }
  watchBackendMetrics(periodMs: number, listener: BackendMetricsListener): Unwatch {
    return this.inner.watchBackendMetrics?.(periodMs, listener) ?? (() => {});
  }
  requestConnection(): void {
    this.inner.requestConnection();
  }
  resetBackoff(): void {
    this.inner.resetBackoff();
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

  release(): void {
    this.setOobPeriod(null);
    this.onRelease(this);
    this.inner.release();
  }
}
