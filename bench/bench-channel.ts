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
  IDLE,
  OK_STATUS,
  type PickArgs,
  type Picker,
  parseAddress,
  queuePicker,
  READY,
  realClock,
  type StateListener,
  type Subchannel,
  type Unwatch,
} from 'lbtree';

const NO_UNWATCH: Unwatch = () => {};

/**
 * A fake subchannel. Its first listener sits in a field and only further ones in a Set (as in grpc-js's fake):
 * a policy watches each subchannel once, and a Set per subchannel was a large share of the heap a 10,000
 * endpoint run builds (every scavenge copies it), which is the fake's cost, not the policy's.
 */
export class BenchSubchannel implements Subchannel {
  state: ConnectivityState = IDLE;
  private listener: StateListener | null = null;
  private more: Set<StateListener> | null = null;
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
    this.listener?.(state, OK_STATUS);
    if (this.more !== null) for (const l of this.more) l(state, OK_STATUS);
  }
  watchConnectivity(listener: StateListener): Unwatch {
    if (listener === this.listener) return this.unwatch.bind(this, listener);
    if (this.listener === null && (this.more === null || this.more.size === 0)) this.listener = listener;
    else {
      this.more ??= new Set();
      this.more.add(listener);
    }
    return this.unwatch.bind(this, listener);
  }
  private unwatch(listener: StateListener): void {
    if (this.listener === listener) this.listener = null;
    else this.more?.delete(listener);
  }
  /**
   * Health is constant (READY while connected, no health checks), so a health watch never fires: as on a real
   * channel without health checking, and as grpc-js's fake does (its health watchers are no-ops too).
   */
  watchHealth(_listener: StateListener): Unwatch {
    return NO_UNWATCH;
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
  random(): number {
    return Math.random();
  }
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
