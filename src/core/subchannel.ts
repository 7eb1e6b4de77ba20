import type { Address } from './address.js';
import type { BackendMetricsListener } from './backend-metrics.js';
import type { ConnectivityState } from './connectivity-state.js';
import type { Status } from './status.js';

/** Receives state changes; `status` explains TRANSIENT_FAILURE (and is OK otherwise). */
export type StateListener = (state: ConnectivityState, status: Status) => void;

/** Stops a watch; harmless to call twice. */
export type Unwatch = () => void;

/**
 * The object form of a connectivity watch: the watching object is the registration, so a watch costs no
 * function and no unwatch closure (a channel holds one watch per endpoint, tens of thousands).
 */
export interface SubchannelStateWatcher {
  onSubchannelState(state: ConnectivityState, status: Status): void;
}

/** The object form of a health watch (A61 generic health reporting); see {@link SubchannelStateWatcher}. */
export interface SubchannelHealthWatcher {
  onSubchannelHealth(state: ConnectivityState, status: Status): void;
}

/**
 * One connection to one address. A policy owns the handles it creates and must `release()` each one.
 * Listeners are called only on changes, never re-entrantly from `requestConnection()` in the simulator.
 */
export interface Subchannel {
  readonly address: Address;
  /** `addressKey(address)`, computed once. */
  readonly key: string;
  /** The raw connectivity state. */
  readonly state: ConnectivityState;
  /**
   * A61 generic health reporting: the state health mechanisms (client-side health checks, outlier detection)
   * give this connection. Equals `state` unless the connection is READY and a mechanism says otherwise.
   */
  readonly health: ConnectivityState;
  watchConnectivity(listener: StateListener): Unwatch;
  watchHealth(listener: StateListener): Unwatch;
  /**
   * The object forms of the two watches, optional: a watcher hears what a listener would, through its method.
   * A watcher object is added at most once per kind (adding it again does nothing) and `remove…` of one not
   * added does nothing. Policies call `watchSubchannelState` / `watchSubchannelHealth` (core), which fall back
   * to the function forms on a subchannel without these.
   */
  addStateWatcher?(watcher: SubchannelStateWatcher): void;
  removeStateWatcher?(watcher: SubchannelStateWatcher): void;
  addHealthWatcher?(watcher: SubchannelHealthWatcher): void;
  removeHealthWatcher?(watcher: SubchannelHealthWatcher): void;
  /**
   * A51 out-of-band backend metrics: hears the ORCA reports this connection's server streams, asking for one
   * every `periodMs` (the connection runs one stream for all its watchers, at the smallest period, while
   * READY). Absent where the channel cannot stream them; a wrapping subchannel passes it on.
   */
  watchBackendMetrics?(periodMs: number, listener: BackendMetricsListener): Unwatch;
  /**
   * Complete picks that returned this handle, where the channel counts them (the grpc-js adapter, the
   * simulator): the live view's share of picks. A wrapping subchannel passes it on.
   */
  readonly picks?: number;
  /** Starts connecting if IDLE; otherwise does nothing. */
  requestConnection(): void;
  resetBackoff(): void;
  /** Gives the handle back; no listener of this handle is called afterwards. */
  release(): void;
}
