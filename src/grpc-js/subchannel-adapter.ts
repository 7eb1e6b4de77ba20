import { experimental, type connectivityState as GrpcState } from '@grpc/grpc-js';
import {
  type Address,
  addressKey,
  type BackendMetricsListener,
  type ConnectivityState,
  hasWatcher,
  IDLE,
  isWatcherArray,
  OK_STATUS,
  READY,
  type StateListener,
  type Status,
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
  /**
   * The grpc-js subchannel of a handle made before it existed (see the helper adapter's per-turn limit), created
   * now: it attaches every handle waiting for it, this one included.
   */
  createNow(): void;
}

const NO_UNWATCH: Unwatch = () => {};

/**
 * One lbtree handle on a grpc-js subchannel. Holding it holds a grpc-js ref; `release()` gives it back. A handle
 * can exist before its grpc-js subchannel does (the helper adapter creates at most so many per event-loop turn):
 * until {@link attach} it is IDLE, keeps its watchers and remembers a connection request; anything that needs
 * the grpc-js subchannel itself ({@link grpc}) has it created at once. The
 * grpc-js complete-pick result for this subchannel is built on its first pick and kept, so picks do not
 * allocate. A channel holds one handle per endpoint, so its fields stay few and are made when first needed:
 * its watchers of each kind (pick_first's attempts hold the object form: no function per watch) share one
 * grpc-js listener, and a single watcher is kept without an array ({@link WatcherSet}).
 */
export class GrpcSubchannelHandle implements Subchannel {
  readonly key: string;
  private subchannel: GrpcSubchannel | null;
  private connectionRequested = false;
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
    grpc: GrpcSubchannel | null,
    private readonly owner: HandleOwner | null,
  ) {
    this.key = addressKey(address);
    this.subchannel = grpc;
    if (owner && grpc) grpc.ref();
  }

  /** The grpc-js subchannel, created now if it was still to be made. */
  get grpc(): GrpcSubchannel {
    if (this.subchannel === null) this.owner!.createNow();
    return this.subchannel!;
  }

  /** Whether the grpc-js subchannel exists yet. */
  get attached(): boolean {
    return this.subchannel !== null;
  }

  /**
   * @internal The grpc-js subchannel of a handle made before it: a state it is already in (a pooled one) is
   * reported to the watchers, then their grpc-js listeners are added and a connection requested meanwhile asked for.
   */
  attach(grpc: GrpcSubchannel): void {
    if (this.released || this.subchannel !== null) return;
    this.subchannel = grpc;
    if (this.owner) grpc.ref();
    const state = fromGrpcState(grpc.getConnectivityState());
    if (this.stateWatchers !== null) {
      this.grpcStateListener ??= this.onGrpcState.bind(this);
      grpc.addConnectivityStateListener(this.grpcStateListener);
    }
    if (this.healthWatchers !== null) {
      this.grpcHealthListener ??= this.onGrpcHealth.bind(this);
      grpc.addHealthStateWatcher(this.grpcHealthListener);
    }
    if (state !== IDLE) this.dispatchState(state, OK_STATUS);
    // Not during a backoff (a pooled subchannel another channel connected): grpc-js would then reconnect by
    // itself when the backoff ends, outside the connection pacer; pick_first asks again when it goes IDLE.
    if (this.connectionRequested && !this.released && state !== TRANSIENT_FAILURE) grpc.startConnecting();
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
    return this.subchannel === null ? IDLE : fromGrpcState(this.subchannel.getConnectivityState());
  }

  /** A61 generic health: grpc-js's health flag (health checks, outlier detection) while READY. */
  get health(): ConnectivityState {
    const state = this.state;
    return state === READY && !this.subchannel!.isHealthy() ? TRANSIENT_FAILURE : state;
  }

  watchConnectivity(listener: StateListener): Unwatch {
    return watchStateWithListener(this, listener);
  }

  addStateWatcher(watcher: SubchannelStateWatcher): void {
    if (this.released) return;
    const before = this.stateWatchers;
    this.stateWatchers = withWatcher(before, watcher);
    if (before === null && this.subchannel !== null) {
      // Bound, not an arrow: no closure context per handle.
      this.grpcStateListener ??= this.onGrpcState.bind(this);
      this.subchannel.addConnectivityStateListener(this.grpcStateListener);
    }
  }

  removeStateWatcher(watcher: SubchannelStateWatcher): void {
    if (this.stateWatchers === null) return;
    this.stateWatchers = withoutWatcher(this.stateWatchers, watcher);
    if (this.stateWatchers === null && !this.released && this.subchannel !== null) {
      this.subchannel.removeConnectivityStateListener(this.grpcStateListener!);
    }
  }

  private onGrpcState(
    _subchannel: GrpcSubchannel,
    _previous: GrpcState,
    next: GrpcState,
    _keepalive: number,
    errorMessage?: string,
  ): void {
    const state = fromGrpcState(next);
    const status =
      state === TRANSIENT_FAILURE
        ? unavailable(`${this.key}: ${errorMessage ?? 'connection failed'}`)
        : OK_STATUS;
    this.dispatchState(state, status);
  }

  private dispatchState(state: ConnectivityState, status: Status): void {
    const watchers = this.stateWatchers;
    if (watchers === null) return;
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
    if (before === null && this.subchannel !== null) {
      this.grpcHealthListener ??= this.onGrpcHealth.bind(this);
      this.subchannel.addHealthStateWatcher(this.grpcHealthListener);
    }
  }

  removeHealthWatcher(watcher: SubchannelHealthWatcher): void {
    if (this.healthWatchers === null) return;
    this.healthWatchers = withoutWatcher(this.healthWatchers, watcher);
    if (this.healthWatchers === null && !this.released && this.subchannel !== null) {
      this.subchannel.removeHealthStateWatcher(this.grpcHealthListener!);
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
    if (this.released) return;
    if (this.subchannel === null) this.connectionRequested = true;
    else this.subchannel.startConnecting();
  }

  /** A subchannel still to be created has no backoff to reset. */
  resetBackoff(): void {
    if (!this.released) this.subchannel?.getRealSubchannel().resetBackoff();
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    const grpc = this.subchannel;
    if (grpc !== null && this.stateWatchers !== null)
      grpc.removeConnectivityStateListener(this.grpcStateListener!);
    this.stateWatchers = null;
    if (grpc !== null && this.healthWatchers !== null)
      grpc.removeHealthStateWatcher(this.grpcHealthListener!);
    this.healthWatchers = null;
    const metrics = this.metricsWatches;
    this.metricsWatches = null;
    if (metrics !== null) for (const stop of metrics.splice(0)) stop();
    if (this.owner) {
      this.owner.handleReleased(this);
      grpc?.unref();
    }
  }
}
