/**
 * The channel lbtree's benchmark harnesses run a policy under: cheap synchronous fake subchannels pooled by
 * address (as a real subchannel pool shares them), and the latest state and picker kept. The grpc-js
 * harness fakes the same things for grpc-js, so both sides are measured doing the same work.
 */
import {
  type Address,
  addressKey,
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
} from 'lbtree';

export class BenchSubchannel implements Subchannel {
  state: ConnectivityState = IDLE;
  private readonly listeners = new Set<StateListener>();
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
    for (const l of this.listeners) l(state, OK_STATUS);
  }
  watchConnectivity(listener: StateListener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  watchHealth(listener: StateListener) {
    return this.watchConnectivity(listener);
  }
  requestConnection(): void {
    if (this.state === IDLE) this.transition(CONNECTING);
  }
  resetBackoff(): void {}
  release(): void {}
}

export class BenchChannel implements Helper {
  readonly pool = new Map<string, BenchSubchannel>();
  /** Pick arguments with no metadata and no hash, shared by every pick. */
  readonly pickArgs: PickArgs = { metadata: { get: () => [] } };
  private readonly interned = new Map<string, Address>();
  state: ConnectivityState = CONNECTING;
  picker: Picker = queuePicker;

  constructor(readonly clock: Clock = realClock) {}

  createSubchannel(address: Address): Subchannel {
    const key = addressKey(address);
    let sub = this.pool.get(key);
    if (!sub) {
      sub = new BenchSubchannel(address, key);
      this.pool.set(key, sub);
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
