import {
  type Address,
  type BackendMetricsListener,
  type ConnectivityState,
  type StateListener,
  type Subchannel,
  type SubchannelHealthWatcher,
  type SubchannelStateWatcher,
  type Unwatch,
  unwatchSubchannelHealth,
  unwatchSubchannelState,
  watchHealthWithListener,
  watchStateWithListener,
  watchSubchannelHealth,
  watchSubchannelState,
} from '../../core/index.js';

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
  /** Picks return `inner`, which is where the channel counts them. */
  get picks(): number | undefined {
    return this.inner.picks;
  }
  // The function forms go through this wrapper's object forms, so a subclass that changes what watchers hear
  // overrides only those.
  watchConnectivity(listener: StateListener): Unwatch {
    return watchStateWithListener(this, listener);
  }
  watchHealth(listener: StateListener): Unwatch {
    return watchHealthWithListener(this, listener);
  }
  addStateWatcher(watcher: SubchannelStateWatcher): void {
    watchSubchannelState(this.inner, watcher);
  }
  removeStateWatcher(watcher: SubchannelStateWatcher): void {
    unwatchSubchannelState(this.inner, watcher);
  }
  addHealthWatcher(watcher: SubchannelHealthWatcher): void {
    watchSubchannelHealth(this.inner, watcher);
  }
  removeHealthWatcher(watcher: SubchannelHealthWatcher): void {
    unwatchSubchannelHealth(this.inner, watcher);
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
