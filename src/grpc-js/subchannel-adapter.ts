import { experimental, type connectivityState as GrpcState } from '@grpc/grpc-js';
import {
  type Address,
  addressKey,
  type BackendMetricsListener,
  type ConnectivityState,
  hasWatcher,
  isWatcherArray,
  OK_STATUS,
  READY,
  type StateListener,
  type Subchannel,
  type SubchannelHealthWatcher,
  type SubchannelStateWatcher,
  TRANSIENT_FAILURE,
  type Unwatch,
  unavailable,
  type WatcherSet,
  watchHealthWithListener,
  watchStateWithListener,
  withoutWatcher,
  withWatcher,
} from '../core/index.js';
import { fromGrpcState } from './connectivity.js';
import { watchSubchannelBackendMetrics } from './orca-stream.js';

type GrpcSubchannel = experimental.SubchannelInterface;

/** Who hears that an owned handle was released (the helper adapter: channelz bookkeeping). */
export interface HandleOwner {
  handleReleased(handle: GrpcSubchannelHandle): void;
}

const NO_UNWATCH: Unwatch = () => {};

/**
 * One lbtree handle on a grpc-js subchannel. Holding it holds a grpc-js ref; `release()` gives it back. The
 * grpc-js complete-pick result for this subchannel is built on its first pick and kept, so picks do not
 * allocate. A channel holds one handle per endpoint, so its fields stay few and are made when first needed:
 * its watchers of each kind (pick_first's attempts hold the object form: no function per watch) share one
 * grpc-js listener, and a single watcher is kept without an array ({@link WatcherSet}).
 */
export class GrpcSubchannelHandle implements Subchannel {
  readonly key: string;
  private complete: experimental.PickResult | null = null;
  private stateWatchers: WatcherSet<SubchannelStateWatcher> = null;
  private grpcStateListener: experimental.ConnectivityStateListener | null = null;
  private healthWatchers: WatcherSet<SubchannelHealthWatcher> = null;
  private grpcHealthListener: experimental.HealthListener | null = null;
  private metricsWatches: Unwatch[] | null = null;
  private released = false;
  /** Complete picks that returned this handle (the live view's share of picks): an integer add per pick. */
  picks = 0;

  /**
   * With no `owner` the handle holds no ref and release() gives none back: a view of a subchannel that a
   * grpc-js policy picked (see grpc-js-child.ts), which that policy owns.
   */
  constructor(
    readonly address: Address,
    readonly grpc: GrpcSubchannel,
    private readonly owner: HandleOwner | null,
  ) {
    this.key = addressKey(address);
    if (owner) grpc.ref();
  }

  /** Reused by the picker adapter for every complete pick without call hooks. */
  get completeResult(): experimental.PickResult {
    this.complete ??= Object.freeze({
      pickResultType: experimental.PickResultType.COMPLETE,
      subchannel: this.grpc,
      status: null,
      onCallStarted: null,
      onCallEnded: null,
    });
    return this.complete;
  }

  get state(): ConnectivityState {
    return fromGrpcState(this.grpc.getConnectivityState());
  }

  /** A61 generic health: grpc-js's health flag (health checks, outlier detection) while READY. */
  get health(): ConnectivityState {
    const state = this.state;
    return state === READY && !this.grpc.isHealthy() ? TRANSIENT_FAILURE : state;
  }

  watchConnectivity(listener: StateListener): Unwatch {
    return watchStateWithListener(this, listener);
  }

  addStateWatcher(watcher: SubchannelStateWatcher): void {
    if (this.released) return;
    const before = this.stateWatchers;
    this.stateWatchers = withWatcher(before, watcher);
    if (before === null) {
      // Bound, not an arrow: no closure context per handle.
      this.grpcStateListener ??= this.onGrpcState.bind(this);
      this.grpc.addConnectivityStateListener(this.grpcStateListener);
    }
  }

  removeStateWatcher(watcher: SubchannelStateWatcher): void {
    if (this.stateWatchers === null) return;
    this.stateWatchers = withoutWatcher(this.stateWatchers, watcher);
    if (this.stateWatchers === null && !this.released) {
      this.grpc.removeConnectivityStateListener(this.grpcStateListener!);
    }
  }

  private onGrpcState(
    _subchannel: GrpcSubchannel,
    _previous: GrpcState,
    next: GrpcState,
    _keepalive: number,
    errorMessage?: string,
  ): void {
    const watchers = this.stateWatchers;
    if (watchers === null) return;
    const state = fromGrpcState(next);
    const status =
      state === TRANSIENT_FAILURE
        ? unavailable(`${this.key}: ${errorMessage ?? 'connection failed'}`)
        : OK_STATUS;
    if (!isWatcherArray(watchers)) watchers.onSubchannelState(state, status);
    // A watcher removed by an earlier one during this dispatch is skipped.
    else for (const w of watchers) if (hasWatcher(this.stateWatchers, w)) w.onSubchannelState(state, status);
  }

  /** Reports health changes of a READY connection (pick_first watches health only while READY). */
  watchHealth(listener: StateListener): Unwatch {
    return watchHealthWithListener(this, listener);
  }

  addHealthWatcher(watcher: SubchannelHealthWatcher): void {
    if (this.released) return;
    const before = this.healthWatchers;
    this.healthWatchers = withWatcher(before, watcher);
    if (before === null) {
      this.grpcHealthListener ??= this.onGrpcHealth.bind(this);
      this.grpc.addHealthStateWatcher(this.grpcHealthListener);
    }
  }

  removeHealthWatcher(watcher: SubchannelHealthWatcher): void {
    if (this.healthWatchers === null) return;
    this.healthWatchers = withoutWatcher(this.healthWatchers, watcher);
    if (this.healthWatchers === null && !this.released) {
      this.grpc.removeHealthStateWatcher(this.grpcHealthListener!);
    }
  }

  private onGrpcHealth(healthy: boolean): void {
    const watchers = this.healthWatchers;
    if (watchers === null || this.state !== READY) return;
    const state = healthy ? READY : TRANSIENT_FAILURE;
    const status = healthy ? OK_STATUS : unavailable(`${this.key}: unhealthy`);
    if (!isWatcherArray(watchers)) watchers.onSubchannelHealth(state, status);
    else
      for (const w of watchers) if (hasWatcher(this.healthWatchers, w)) w.onSubchannelHealth(state, status);
  }

  /** A51 out-of-band reports: the ORCA stream on this connection, shared with every other handle on it. */
  watchBackendMetrics(periodMs: number, listener: BackendMetricsListener): Unwatch {
    if (this.released) return NO_UNWATCH;
    const stop = watchSubchannelBackendMetrics(this.grpc, periodMs, listener);
    this.metricsWatches ??= [];
    const watches = this.metricsWatches;
    watches.push(stop);
    return () => {
      const i = watches.indexOf(stop);
      if (i < 0) return;
      watches.splice(i, 1);
      stop();
    };
  }

  requestConnection(): void {
    if (!this.released) this.grpc.startConnecting();
  }

  resetBackoff(): void {
    if (!this.released) this.grpc.getRealSubchannel().resetBackoff();
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    if (this.stateWatchers !== null) this.grpc.removeConnectivityStateListener(this.grpcStateListener!);
    this.stateWatchers = null;
    if (this.healthWatchers !== null) this.grpc.removeHealthStateWatcher(this.grpcHealthListener!);
    this.healthWatchers = null;
    const metrics = this.metricsWatches;
    this.metricsWatches = null;
    if (metrics !== null) for (const stop of metrics.splice(0)) stop();
    if (this.owner) {
      this.owner.handleReleased(this);
      this.grpc.unref();
    }
  }
}
