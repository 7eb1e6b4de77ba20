/**
 * Drives lbtree's round_robin with the same cheap, synchronous fake subchannels the grpc-js harness uses, so
 * the two are measured doing the same work: a root policy under a do-nothing channel, one pick_first child
 * per endpoint, subchannels pooled by address and never torn down.
 */
import {
  type Address,
  Attributes,
  addressKey,
  CONNECTING,
  type ConnectivityState,
  type Endpoint,
  type Helper,
  IDLE,
  NO_CHANNEL_ARGS,
  OK_STATUS,
  ok,
  type PickArgs,
  type Picker,
  parseAddress,
  queuePicker,
  READY,
  RoundRobin,
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

export interface LbtreeRoundRobinHarness {
  update(endpoints: readonly (readonly string[])[]): void;
  prepare(endpoints: readonly (readonly string[])[]): unknown;
  apply(prepared: unknown): void;
  makeAllReady(): void;
  pick(): unknown;
  readonly state: string;
  readonly subchannelsCreated: number;
  destroy(): void;
}

export function createLbtreeRoundRobin(): LbtreeRoundRobinHarness {
  const interned = new Map<string, Address>();
  const pool = new Map<Address, BenchSubchannel>();
  let state: ConnectivityState = CONNECTING;
  let picker: Picker = queuePicker;
  const helper: Helper = {
    // Pooled by address object, as the grpc-js harness does: the harness interns addresses.
    createSubchannel(address) {
      let sub = pool.get(address);
      if (!sub) {
        sub = new BenchSubchannel(address, addressKey(address));
        pool.set(address, sub);
      }
      return sub;
    },
    updateState(s, _status, p) {
      state = s;
      picker = p;
    },
    requestReresolution() {},
    clock: realClock,
    random: Math.random,
    trace() {},
  };
  const lb = new RoundRobin(helper);
  const pickArgs: PickArgs = { metadata: { get: () => [] } };
  const intern = (text: string): Address => {
    let a = interned.get(text);
    if (!a) {
      a = parseAddress(text);
      interned.set(text, a);
    }
    return a;
  };
  return {
    prepare(endpoints) {
      return endpoints.map(
        (addresses): Endpoint => ({ addresses: addresses.map(intern), attributes: Attributes.EMPTY }),
      );
    },
    apply(prepared) {
      lb.update({ endpoints: ok(prepared as Endpoint[]), config: {}, attributes: NO_CHANNEL_ARGS });
    },
    update(endpoints) {
      this.apply(this.prepare(endpoints));
    },
    makeAllReady() {
      for (const sub of pool.values()) {
        sub.requestConnection();
        sub.transition(READY);
      }
    },
    pick: () => picker.pick(pickArgs),
    get state() {
      return state;
    },
    get subchannelsCreated() {
      return pool.size;
    },
    destroy: () => lb.destroy(),
  };
}
