import { experimental } from '@grpc/grpc-js';
import {
  type Address,
  addressKey,
  type BackendMetricsListener,
  type ConnectivityState,
  OK_STATUS,
  READY,
  type StateListener,
  type Subchannel,
  TRANSIENT_FAILURE,
  type Unwatch,
  unavailable,
} from '../core/index.js';
import { fromGrpcState } from './connectivity.js';
import { watchSubchannelBackendMetrics } from './orca-stream.js';

type GrpcSubchannel = experimental.SubchannelInterface;

/**
 * One lbtree handle on a grpc-js subchannel. Holding it holds a grpc-js ref; `release()` gives it back. The
 * grpc-js complete-pick result for this subchannel is built once here, so a pick allocates nothing.
 */
export class GrpcSubchannelHandle implements Subchannel {
  readonly key: string;
  /** Reused by the picker adapter for every complete pick without call hooks. */
  readonly completeResult: experimental.PickResult;
  private readonly listeners = new Set<experimental.ConnectivityStateListener>();
  private readonly healthListeners = new Set<experimental.HealthListener>();
  private readonly metricsWatches = new Set<Unwatch>();
  private released = false;

  /**
   * With `owned` false the handle holds no ref and release() gives none back: a view of a subchannel that a
   * grpc-js policy picked (see grpc-js-child.ts), which that policy owns.
   */
  constructor(
    readonly address: Address,
    readonly grpc: GrpcSubchannel,
    private readonly onRelease: (handle: GrpcSubchannelHandle) => void,
    private readonly owned = true,
  ) {
    this.key = addressKey(address);
    if (owned) grpc.ref();
    this.completeResult = Object.freeze({
      pickResultType: experimental.PickResultType.COMPLETE,
      subchannel: grpc,
      status: null,
      onCallStarted: null,
      onCallEnded: null,
    });
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
    if (this.released) return () => {};
    const grpcListener: experimental.ConnectivityStateListener = (
      _sub,
      _prev,
      next,
      _keepalive,
      errorMessage,
    ) => {
      const state = fromGrpcState(next);
      listener(
        state,
        state === TRANSIENT_FAILURE
          ? unavailable(`${this.key}: ${errorMessage ?? 'connection failed'}`)
          : OK_STATUS,
      );
    };
    this.listeners.add(grpcListener);
    this.grpc.addConnectivityStateListener(grpcListener);
    return () => {
      if (this.listeners.delete(grpcListener)) this.grpc.removeConnectivityStateListener(grpcListener);
    };
  }

  /** Reports health changes of a READY connection (pick_first watches health only while READY). */
  watchHealth(listener: StateListener): Unwatch {
    if (this.released) return () => {};
    const grpcListener: experimental.HealthListener = (healthy) => {
      if (this.state !== READY) return;
      listener(
        healthy ? READY : TRANSIENT_FAILURE,
        healthy ? OK_STATUS : unavailable(`${this.key}: unhealthy`),
      );
    };
    this.healthListeners.add(grpcListener);
    this.grpc.addHealthStateWatcher(grpcListener);
    return () => {
      if (this.healthListeners.delete(grpcListener)) this.grpc.removeHealthStateWatcher(grpcListener);
    };
  }

  /** A51 out-of-band reports: the ORCA stream on this connection, shared with every other handle on it. */
  watchBackendMetrics(periodMs: number, listener: BackendMetricsListener): Unwatch {
    if (this.released) return () => {};
    const stop = watchSubchannelBackendMetrics(this.grpc, periodMs, listener);
    this.metricsWatches.add(stop);
    return () => {
      if (this.metricsWatches.delete(stop)) stop();
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
    for (const l of this.listeners) this.grpc.removeConnectivityStateListener(l);
    for (const l of this.healthListeners) this.grpc.removeHealthStateWatcher(l);
    this.listeners.clear();
    this.healthListeners.clear();
    for (const stop of this.metricsWatches) stop();
    this.metricsWatches.clear();
    this.onRelease(this);
    if (this.owned) this.grpc.unref();
  }
}
