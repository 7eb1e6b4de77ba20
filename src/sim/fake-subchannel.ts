import {
  type Address,
  addressKey,
  type BackendMetricsListener,
  type CancelTimer,
  type Clock,
  type ConnectivityState,
  IDLE,
  OK_STATUS,
  OobMetricsStream,
  READY,
  type StateListener,
  type Status,
  type Subchannel,
  type SubchannelHealthWatcher,
  type SubchannelMetrics,
  type SubchannelStateWatcher,
  TRANSIENT_FAILURE,
  type Unwatch,
  unavailable,
  watchHealthWithListener,
  watchStateWithListener,
} from '../core/index.js';
import type { FakeOrcaServer } from './fake-orca-server.js';

/**
 * What every connection attempt on an address does (`sim.script`): connect (READY) or fail (TRANSIENT_FAILURE)
 * that long after the attempt starts, in virtual time, or hang in CONNECTING until the test changes the
 * subchannel itself (`setState`). An address with no script connects: READY 0 ms after each attempt starts.
 */
export type ConnectionScript =
  | { readonly connectAfterMs: number }
  | { readonly failAfterMs: number; readonly details?: string }
  | 'hang';

/**
 * What an attempt on an address with no script does: it is READY 0 ms after it starts, on a later turn of
 * the virtual clock (policies see it CONNECTING first; the operation that started it returns after that
 * turn), so `sim.update(endpoints, config)` alone gives a policy that serves.
 */
export const CONNECT_AT_ONCE: ConnectionScript = { connectAfterMs: 0 };

/** What the fake needs from the simulation that owns it. */
export interface FakeSubchannelHost {
  readonly clock: Clock;
  backoffMs(): number;
  scriptFor(key: string): ConnectionScript;
  onUnreferenced(fake: FakeSubchannel): void;
  /** Runs the work due now (the deliveries a hand-made change queued for the next clock turn). */
  flush(): void;
  /** The ORCA service of the backend at `key` (A51 out-of-band reports). */
  orcaFor(key: string): FakeOrcaServer;
  /** The simulation's seeded randomness (backoff jitter). */
  random(): number;
  trace(message: string): void;
}

/**
 * The one simulated connection to an address, shared by every handle a policy creates for it (as a real
 * subchannel pool shares them). Listeners hear about changes on the next turn of the virtual clock, never
 * from inside the call that caused them, the way a work serializer delivers them.
 */
export class FakeSubchannel {
  readonly key: string;
  state: ConnectivityState = IDLE;
  status: Status = OK_STATUS;
  /** Calls to requestConnection() from any handle. */
  connectionRequests = 0;
  /** Whether every handle has been released. */
  released = false;
  private healthOverride: { state: ConnectivityState; status: Status } | null = null;
  private readonly handles = new Set<SubchannelHandle>();
  private pending: CancelTimer | null = null;
  /** The one ORCA stream of this connection (A51), made on the first watch. */
  private metrics: OobMetricsStream | null = null;
  /** A94's metrics of this connection, when the simulation records metrics. */
  connectionMetrics: SubchannelMetrics | null = null;

  constructor(
    readonly address: Address,
    private readonly host: FakeSubchannelHost,
  ) {
    this.key = addressKey(address);
  }

  /** The A61 generic health state: the raw state, unless READY and a health mechanism says otherwise. */
  get health(): ConnectivityState {
    return this.state === READY ? (this.healthOverride?.state ?? READY) : this.state;
  }

  get healthStatus(): Status {
    return this.state === READY ? (this.healthOverride?.status ?? OK_STATUS) : this.status;
  }

  /** Handles currently holding this subchannel. */
  get refs(): number {
    return this.handles.size;
  }

  /**
   * Drives the connection by hand (cancels any scripted outcome in flight), then runs the work it causes, as
   * every simulator operation does: the change reaches the policies on the next clock turn (never inside the
   * call that made it), and that turn runs before this returns, so `sim.state` is current.
   */
  setState(state: ConnectivityState, status?: Status): void {
    this.cancelPending();
    this.transition(
      state,
      status ?? (state === TRANSIENT_FAILURE ? unavailable(`${this.key}: connection failed`) : OK_STATUS),
    );
    this.host.flush();
  }

  /**
   * Sets what health mechanisms say about this connection (reported while it is READY), then runs the work
   * it causes, as {@link setState} does.
   */
  setHealth(state: ConnectivityState, status?: Status): void {
    const before = this.health;
    const beforeStatus = this.healthStatus;
    this.healthOverride =
      state === READY ? null : { state, status: status ?? unavailable(`${this.key}: health check failed`) };
    this.notifyHealthIfChanged(before, beforeStatus);
    this.host.flush();
  }

  newHandle(): SubchannelHandle {
    const handle = new SubchannelHandle(this);
    this.handles.add(handle);
    return handle;
  }

  /** @internal A handle's out-of-band watch: every handle shares this connection's one stream. */
  watchBackendMetrics(periodMs: number, listener: BackendMetricsListener): Unwatch {
    if (this.metrics === null) {
      const server = this.host.orcaFor(this.key);
      this.metrics = new OobMetricsStream(
        server.openStream,
        this.host.clock,
        (message) => this.host.trace(`${this.key}: ${message}`),
        () => this.host.random(),
      );
      this.metrics.setReady(this.state === READY);
    }
    return this.metrics.watch(periodMs, listener);
  }

  requestConnection(): void {
    this.connectionRequests++;
    if (this.state !== IDLE || this.released) return;
    this.transition('CONNECTING', OK_STATUS);
    const script = this.host.scriptFor(this.key);
    if (script === 'hang') return;
    if ('connectAfterMs' in script) {
      this.pending = this.host.clock.setTimer(script.connectAfterMs, () => {
        this.pending = null;
        this.transition(READY, OK_STATUS);
      });
    } else {
      this.pending = this.host.clock.setTimer(script.failAfterMs, () => {
        this.pending = null;
        this.transition(TRANSIENT_FAILURE, unavailable(script.details ?? `${this.key}: connection refused`));
      });
    }
  }

  resetBackoff(): void {
    if (this.state === TRANSIENT_FAILURE && this.pending) {
      this.cancelPending();
      this.transition(IDLE, OK_STATUS);
    }
  }

  /** @internal */
  dropHandle(handle: SubchannelHandle): void {
    this.handles.delete(handle);
    if (this.handles.size === 0 && !this.released) {
      this.released = true;
      this.cancelPending();
      this.metrics?.shutdown();
      this.connectionMetrics?.shutdown();
      this.host.onUnreferenced(this);
    }
  }

  private transition(state: ConnectivityState, status: Status): void {
    const before = this.health;
    const beforeStatus = this.healthStatus;
    if (state === this.state && status === this.status) return;
    this.state = state;
    this.status = status;
    this.metrics?.setReady(state === READY);
    this.connectionMetrics?.onState(state, status.details);
    for (const h of this.handles) h.deliverConnectivity(state, status);
    this.notifyHealthIfChanged(before, beforeStatus);
    if (state === TRANSIENT_FAILURE) {
      // Real subchannels back off after a failure, then go IDLE and wait to be asked again.
      this.pending = this.host.clock.setTimer(this.host.backoffMs(), () => {
        this.pending = null;
        this.transition(IDLE, OK_STATUS);
      });
    }
  }

  private notifyHealthIfChanged(before: ConnectivityState, beforeStatus: Status): void {
    const health = this.health;
    const status = this.healthStatus;
    if (health === before && status === beforeStatus) return;
    for (const h of this.handles) h.deliverHealth(health, status);
  }

  private cancelPending(): void {
    this.pending?.();
    this.pending = null;
  }

  /** @internal */
  get clock(): Clock {
    return this.host.clock;
  }
}

/** What a policy holds: one reference to a {@link FakeSubchannel}. */
export class SubchannelHandle implements Subchannel {
  private readonly stateWatchers = new Set<SubchannelStateWatcher>();
  private readonly healthWatchers = new Set<SubchannelHealthWatcher>();
  private readonly metricsWatches = new Set<Unwatch>();
  private released = false;
  /** Complete picks `Simulation.pick` made that returned this handle (what `describe()` reports). */
  picks = 0;

  constructor(readonly fake: FakeSubchannel) {}

  get address(): Address {
    return this.fake.address;
  }
  get key(): string {
    return this.fake.key;
  }
  get state(): ConnectivityState {
    return this.fake.state;
  }
  get health(): ConnectivityState {
    return this.fake.health;
  }
  /** How many watchers of each kind this handle has (tests check that a policy stops watching). */
  get watcherCounts(): { readonly state: number; readonly health: number } {
    return { state: this.stateWatchers.size, health: this.healthWatchers.size };
  }

  watchConnectivity(listener: StateListener): Unwatch {
    return watchStateWithListener(this, listener);
  }

  watchHealth(listener: StateListener): Unwatch {
    return watchHealthWithListener(this, listener);
  }

  addStateWatcher(watcher: SubchannelStateWatcher): void {
    if (!this.released) this.stateWatchers.add(watcher);
  }

  removeStateWatcher(watcher: SubchannelStateWatcher): void {
    this.stateWatchers.delete(watcher);
  }

  addHealthWatcher(watcher: SubchannelHealthWatcher): void {
    if (!this.released) this.healthWatchers.add(watcher);
  }

  removeHealthWatcher(watcher: SubchannelHealthWatcher): void {
    this.healthWatchers.delete(watcher);
  }

  watchBackendMetrics(periodMs: number, listener: BackendMetricsListener): Unwatch {
    if (this.released) return () => {};
    const stop = this.fake.watchBackendMetrics(periodMs, listener);
    this.metricsWatches.add(stop);
    return () => {
      if (this.metricsWatches.delete(stop)) stop();
    };
  }

  requestConnection(): void {
    if (!this.released) this.fake.requestConnection();
  }

  resetBackoff(): void {
    if (!this.released) this.fake.resetBackoff();
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.stateWatchers.clear();
    this.healthWatchers.clear();
    for (const stop of this.metricsWatches) stop();
    this.metricsWatches.clear();
    this.fake.dropHandle(this);
  }

  // Delivered on the next turn of the clock, to the watchers there then: the policy never hears of a change
  // inside its own call, and a watcher removed before the turn hears nothing.

  /** @internal */
  deliverConnectivity(state: ConnectivityState, status: Status): void {
    if (this.stateWatchers.size === 0) return;
    this.fake.clock.setTimer(0, () => {
      for (const w of this.stateWatchers) w.onSubchannelState(state, status);
    });
  }

  /** @internal */
  deliverHealth(state: ConnectivityState, status: Status): void {
    if (this.healthWatchers.size === 0) return;
    this.fake.clock.setTimer(0, () => {
      for (const w of this.healthWatchers) w.onSubchannelHealth(state, status);
    });
  }
}
