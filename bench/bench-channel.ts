/**
 * The channel lbtree's benchmark harnesses run a policy under: cheap synchronous fake subchannels pooled by
 * address (as a real subchannel pool shares them), and the latest state and picker kept. The grpc-js
 * harness fakes the same things for grpc-js, so both sides are measured doing the same work.
 */
import {
  type Address,
  addressKey,
  type CancelTimer,
  type Clock,
  CONNECTING,
  type ConnectivityState,
  type Helper,
  hasWatcher,
  IDLE,
  isWatcherArray,
  OK_STATUS,
  type PickArgs,
  type Picker,
  parseAddress,
  queuePicker,
  READY,
  realClock,
  type StateListener,
  type Subchannel,
  type SubchannelHealthWatcher,
  type SubchannelStateWatcher,
  type Unwatch,
  type WatcherSet,
  watchHealthWithListener,
  watchStateWithListener,
  withoutWatcher,
  withWatcher,
} from 'lbtree';

/**
 * A fake subchannel that keeps its watchers as lbtree's grpc-js adapter does (GrpcSubchannelHandle): one
 * {@link WatcherSet} per kind, so the single watcher pick_first's attempt adds is a field write and a function-
 * form watch costs its own watcher and unwatch closure. A policy pays here what it pays on a real channel.
 * Not modelled: the adapter's one bound grpc-js listener per handle and kind (made on the first watcher, as
 * before this fake kept watchers this way), as the grpc-js harness does not model grpc-js's own per-subchannel
 * bookkeeping either.
 */
export class BenchSubchannel implements Subchannel {
  state: ConnectivityState = IDLE;
  private stateWatchers: WatcherSet<SubchannelStateWatcher> = null;
  private healthWatchers: WatcherSet<SubchannelHealthWatcher> = null;
  constructor(
    readonly address: Address,
    readonly key: string,
  ) {}
  get health(): ConnectivityState {
    return this.state;
  }
  transition(state: ConnectivityState): void {
    if (state === this.state) return;
    this.state = state;
    const watchers = this.stateWatchers;
    if (watchers === null) return;
    if (!isWatcherArray(watchers)) watchers.onSubchannelState(state, OK_STATUS);
    else
      for (const w of watchers) if (hasWatcher(this.stateWatchers, w)) w.onSubchannelState(state, OK_STATUS);
  }
  watchConnectivity(listener: StateListener): Unwatch {
    return watchStateWithListener(this, listener);
  }
  addStateWatcher(watcher: SubchannelStateWatcher): void {
    this.stateWatchers = withWatcher(this.stateWatchers, watcher);
  }
  removeStateWatcher(watcher: SubchannelStateWatcher): void {
    this.stateWatchers = withoutWatcher(this.stateWatchers, watcher);
  }
  /**
   * Health is constant (READY while connected, no health checks), so a health watcher is kept but never
   * called: as on a real channel without health checking, and as grpc-js's fake does.
   */
  watchHealth(listener: StateListener): Unwatch {
    return watchHealthWithListener(this, listener);
  }
  addHealthWatcher(watcher: SubchannelHealthWatcher): void {
    this.healthWatchers = withWatcher(this.healthWatchers, watcher);
  }
  removeHealthWatcher(watcher: SubchannelHealthWatcher): void {
    this.healthWatchers = withoutWatcher(this.healthWatchers, watcher);
  }
  requestConnection(): void {
    if (this.state === IDLE) this.transition(CONNECTING);
  }
  resetBackoff(): void {}
  release(): void {}
}

export class BenchChannel implements Helper {
  readonly pool = new Map<string, BenchSubchannel>();
  /** The pool's subchannels in the order they were created. */
  readonly created: BenchSubchannel[] = [];
  /** Pick arguments with no metadata and no hash, shared by every pick. */
  readonly pickArgs: PickArgs = { metadata: { get: () => [] } };
  private readonly interned = new Map<string, Address>();
  state: ConnectivityState = CONNECTING;
  picker: Picker = queuePicker;

  /** Subchannels are created READY, as from a pool whose connections are already up. */
  connected = false;

  constructor(readonly clock: Clock = realClock) {}

  createSubchannel(address: Address): Subchannel {
    const key = addressKey(address);
    let sub = this.pool.get(key);
    if (!sub) {
      sub = new BenchSubchannel(address, key);
      if (this.connected) sub.state = READY;
      this.pool.set(key, sub);
      this.created.push(sub);
    }
    return sub;
  }
  updateState(state: ConnectivityState, _status: unknown, picker: Picker): void {
    this.state = state;
    this.picker = picker;
  }
  requestReresolution(): void {}
  /** `Math.random` itself, as grpc-js's helper adapter has it (pickers call it directly). */
  readonly random: () => number = Math.random;
  trace(): void {}

  /** One Address object per text, as a resolver re-delivering a list keeps them (grpc-js harness alike). */
  intern(text: string): Address {
    let a = this.interned.get(text);
    if (!a) {
      a = parseAddress(text);
      this.interned.set(text, a);
    }
    return a;
  }

  /** Every subchannel created so far connects (CONNECTING, then READY), as a healthy backend would. */
  makeAllReady(): void {
    for (const sub of this.pool.values()) {
      sub.requestConnection();
      sub.transition(READY);
    }
  }

  /** Subchannels connect one by one until the policy reports READY. */
  makeFirstReady(): void {
    for (const sub of this.pool.values()) {
      if (this.state === READY) return;
      sub.requestConnection();
      sub.transition(READY);
    }
  }
}

interface Timer {
  fn: () => void;
  cancelled: boolean;
}

/**
 * Timers queued and run by hand (`runAll`), never on their own: ring_hash's pick-triggered connections hop
 * through a zero-delay timer, and no policy's backoff or Happy Eyeballs timer fires inside a timed region.
 */

export class ManualClock implements Clock {
  /**
   * The zero-delay timers: the first `zeroDelayCount` slots. Two arrays take turns and are written by index,
   * never emptied with `length = 0` (V8 then drops the backing store): the fake allocates no array per hop
   * (ring_hash makes one hop per endpoint in a storm).
   */
  private zeroDelay: (Timer | undefined)[] = [];
  private zeroDelayCount = 0;
  private spareZeroDelay: (Timer | undefined)[] = [];
  private later: Timer[] = [];
  now(): number {
    return performance.now();
  }
  setTimer(delayMs: number, fn: () => void): CancelTimer {
    const timer = { fn, cancelled: false };
    if (delayMs <= 0) this.zeroDelay[this.zeroDelayCount++] = timer;
    else this.later.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }
  /** Runs every queued timer (and those they queue), whatever its delay. */
  runAll(): void {
    while (this.zeroDelayCount > 0 || this.later.length > 0) {
      const due = [...(this.zeroDelay.slice(0, this.zeroDelayCount) as Timer[]), ...this.later];
      this.zeroDelay = [];
      this.zeroDelayCount = 0;
      this.later = [];
      for (const t of due) if (!t.cancelled) t.fn();
    }
  }
  /** Runs the zero-delay timers only (hops off the data path); the others stay queued and never run. */
  runZeroDelay(): void {
    while (this.zeroDelayCount > 0) {
      const due = this.zeroDelay;
      const count = this.zeroDelayCount;
      this.zeroDelay = this.spareZeroDelay;
      this.zeroDelayCount = 0;
      this.spareZeroDelay = due;
      for (let i = 0; i < count; i++) {
        const t = due[i]!;
        due[i] = undefined;
        if (!t.cancelled) t.fn();
      }
    }
  }
}
