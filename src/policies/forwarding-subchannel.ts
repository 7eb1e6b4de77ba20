import type {
  Address,
  BackendMetricsListener,
  ConnectivityState,
  StateListener,
  Subchannel,
  Unwatch,
} from '../core/index.js';

/**
 * A subchannel a parent policy hands to its child in place of the channel's own (to watch or alter it):
 * everything passes through to `inner` unless a subclass overrides it. Pick results should carry `inner`.
 */
export class ForwardingSubchannel implements Subchannel {
  constructor(readonly inner: Subchannel) {}

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
  release(): void {
    this.inner.release();
  }
}
