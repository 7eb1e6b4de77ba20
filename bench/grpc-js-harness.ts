/**
 * Benchmark harness that drives @grpc/grpc-js's own `round_robin` policy with no channel and no network.
 *
 * The LB tree is exactly what a real grpc-js channel runs below its ResolvingLoadBalancer:
 * ChildLoadBalancerHandler -> round_robin -> one LeafLoadBalancer (pick_first) per endpoint. Only the
 * channel-facing parts are faked (ChannelControlHelper and subchannels), and the fakes are synchronous
 * and allocation-light so that timings reflect grpc-js's LB code rather than the harness.
 */
import {
  connectivityState as ConnectivityState,
  experimental,
  type LoadBalancingConfig,
  Metadata,
} from '@grpc/grpc-js';

type SubchannelInterface = experimental.SubchannelInterface;
type ConnectivityStateListener = experimental.ConnectivityStateListener;
type ConnectivityStateValue = ReturnType<SubchannelInterface['getConnectivityState']>;
type SubchannelAddress = experimental.SubchannelAddress;
// Types grpc-js does not re-export from its public entry point; derived so no deep imports are needed.
type RealSubchannel = ReturnType<SubchannelInterface['getRealSubchannel']>;
type SubchannelRef = ReturnType<SubchannelInterface['getChannelzRef']>;

export interface GrpcJsRoundRobinHarness {
  /** Deliver an endpoint list: each inner array is one endpoint's addresses as 'host:port' strings (IPv4 only is fine). */
  update(endpoints: readonly (readonly string[])[]): void;
  /** Converts an endpoint list to grpc-js's form, outside any timed region. */
  prepare(endpoints: readonly (readonly string[])[]): unknown;
  /** Delivers a prepared list: the part a benchmark times. */
  apply(prepared: unknown): void;
  /** Drive every fake subchannel created so far to READY (and notify listeners) so the LB builds a READY picker. */
  makeAllReady(): void;
  /** Latest picker's pick for a unary call with empty metadata; returns the raw grpc-js PickResult. */
  pick(): unknown;
  /** Latest connectivity state the LB reported, as grpc-js's enum name string, e.g. 'READY'. */
  readonly state: string;
  /** Number of fake subchannels created so far. */
  readonly subchannelsCreated: number;
  /** The policy instance itself (grpc-js's own object), for sections that time one of its methods. */
  readonly policy: unknown;
  destroy(): void;
}

// Channelz is never enabled here; one shared ref keeps createSubchannel allocation-free beyond the fake itself.
const CHANNELZ_REF = { kind: 'subchannel', id: -1, name: 'fake' } as unknown as SubchannelRef;

/**
 * Minimal stand-in for grpc-js's Subchannel. Transitions notify listeners synchronously (the real one
 * defers startConnecting via process.nextTick), and health is constant, so health watchers never fire.
 */
export class FakeSubchannel implements SubchannelInterface {
  private state: ConnectivityStateValue = ConnectivityState.IDLE;
  // The first listener in a field, further ones in a Set iterated in place like the real Subchannel's (so
  // add/remove during notify behaves the same): a policy watches each subchannel once, and a Set per fake
  // subchannel was a large share of the heap a 10,000-endpoint run builds (the fake's cost, not the policy's).
  private listener: ConnectivityStateListener | null = null;
  private more: Set<ConnectivityStateListener> | null = null;
  /** LB-held references; kept for inspection only (see ref/unref). */
  refcount = 0;

  private readonly address: string;

  constructor(address: string) {
    this.address = address;
  }

  /** Move to newState and notify, mirroring Subchannel.transitionToState (no-op if unchanged). */
  transition(newState: ConnectivityStateValue): void {
    const previous = this.state;
    if (previous === newState) return;
    this.state = newState;
    this.listener?.(this, previous, newState, -1);
    if (this.more !== null) for (const listener of this.more) listener(this, previous, newState, -1);
  }

  getConnectivityState(): ConnectivityStateValue {
    return this.state;
  }
  addConnectivityStateListener(listener: ConnectivityStateListener): void {
    if (listener === this.listener) return;
    if (this.listener === null && (this.more === null || this.more.size === 0)) this.listener = listener;
    else {
      this.more ??= new Set();
      this.more.add(listener);
    }
  }
  removeConnectivityStateListener(listener: ConnectivityStateListener): void {
    if (this.listener === listener) this.listener = null;
    else this.more?.delete(listener);
  }
  startConnecting(): void {
    // Only IDLE starts a connection attempt; CONNECTING/READY ignore it, as in the real Subchannel.
    if (this.state === ConnectivityState.IDLE) this.transition(ConnectivityState.CONNECTING);
  }
  getAddress(): string {
    return this.address;
  }
  throttleKeepalive(): void {}
  // Refcount is tracked for inspection only: the pool below holds its own reference (as grpc-js's
  // subchannel pool does), so an LB dropping to zero refs never tears the connection down.
  ref(): void {
    this.refcount++;
  }
  unref(): void {
    this.refcount--;
  }
  getChannelzRef(): SubchannelRef {
    return CHANNELZ_REF;
  }
  isHealthy(): boolean {
    return true;
  }
  addHealthStateWatcher(): void {}
  removeHealthStateWatcher(): void {}
  addDataWatcher(): never {
    throw new Error('FakeSubchannel: data watchers (ORCA) are not supported');
  }
  getRealSubchannel(): RealSubchannel {
    // The fake is its own "real" subchannel; nothing on the round_robin path dereferences it.
    return this as unknown as RealSubchannel;
  }
  realSubchannelEquals(other: SubchannelInterface): boolean {
    return other === this || other.getRealSubchannel() === this.getRealSubchannel();
  }
  getCallCredentials(): never {
    throw new Error('FakeSubchannel: no call credentials (no real channel)');
  }
  getChannel(): never {
    throw new Error('FakeSubchannel: no channel');
  }
}

/** Parse 'host:port' (IPv4 or hostname) into grpc-js's TCP address shape. */
function parseAddress(hostPort: string): SubchannelAddress {
  const colon = hostPort.lastIndexOf(':');
  if (colon <= 0) throw new Error(`expected 'host:port', got '${hostPort}'`);
  const port = Number(hostPort.slice(colon + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad port in '${hostPort}'`);
  return { host: hostPort.slice(0, colon), port };
}

export function createGrpcJsRoundRobin(): GrpcJsRoundRobinHarness {
  return createGrpcJsPolicyHarness({ round_robin: {} });
}

/**
 * The same harness for any policy registered in grpc-js, e.g. `{ lbtree_round_robin: {} }` after lbtree's
 * register(): lbtree then runs behind its grpc-js adapter, as on a real channel.
 */
export interface PolicyHarnessOptions {
  /**
   * Subchannels are created READY, as from a pool whose connections are already up: the policy sees its
   * whole list connected in one update instead of n connections completing one by one.
   */
  readonly connected?: boolean;
  /** The channel options the policy gets with each update (default none). */
  readonly channelOptions?: Record<string, unknown>;
}

export function createGrpcJsPolicyHarness(
  lbConfig: Record<string, unknown>,
  options: PolicyHarnessOptions = {},
): GrpcJsRoundRobinHarness {
  // Each distinct 'host:port' string is parsed once into an interned address object; grpc-js passes
  // those same objects to createSubchannel, so the pool below is keyed by object identity and a
  // re-delivered list costs the fake no parsing, allocation or string hashing.
  const interned = new Map<string, SubchannelAddress>();
  // Subchannels are pooled by address like a real channel's subchannel pool, so re-delivering an
  // address reuses the same (possibly already READY) subchannel instead of starting from IDLE.
  // Entries are never evicted, so pool.size is also the number of fakes ever created.
  const pool = new Map<SubchannelAddress, FakeSubchannel>();
  let latestState: ConnectivityStateValue = ConnectivityState.IDLE;
  let latestPicker: experimental.Picker | null = null;
  let destroyed = false;

  const intern = (hostPort: string): SubchannelAddress => {
    let address = interned.get(hostPort);
    if (address === undefined) {
      address = parseAddress(hostPort);
      interned.set(hostPort, address);
    }
    return address;
  };

  const helper: experimental.ChannelControlHelper = {
    createSubchannel(address) {
      let subchannel = pool.get(address);
      if (subchannel === undefined) {
        const name = 'path' in address ? address.path : `${address.host}:${address.port}`;
        subchannel = new FakeSubchannel(name);
        if (options.connected) {
          subchannel.startConnecting();
          subchannel.transition(ConnectivityState.READY);
        }
        pool.set(address, subchannel);
      }
      return subchannel;
    },
    updateState(state, picker) {
      latestState = state;
      latestPicker = picker;
    },
    // No resolver behind the harness, and channelz is off: these are deliberate no-ops.
    requestReresolution() {},
    addChannelzChild() {},
    removeChannelzChild() {},
  };

  // ChildLoadBalancerHandler is grpc-js's public way to instantiate a registered policy by config
  // (createLoadBalancer itself is not exported from `experimental`); it is also the exact wrapper a
  // real channel puts above round_robin, and it drops updates from the policy once destroyed.
  const lb = new experimental.ChildLoadBalancerHandler(helper);
  const config = experimental.parseLoadBalancingConfig(lbConfig as LoadBalancingConfig);
  const channelOptions = options.channelOptions ?? {};
  // One reusable PickArgs: the round_robin/pick_first pickers never read or mutate it.
  const pickArgs: experimental.PickArgs = { metadata: new Metadata(), extraPickInfo: {} };

  const assertLive = (): void => {
    if (destroyed) throw new Error('grpc-js round_robin harness used after destroy()');
  };

  return {
    prepare(endpoints) {
      return endpoints.map((addresses) => ({ addresses: addresses.map(intern) }));
    },
    apply(prepared) {
      assertLive();
      const endpointList = prepared as experimental.Endpoint[];
      lb.updateAddressList(experimental.statusOrFromValue(endpointList), config, channelOptions, '');
    },
    update(endpoints) {
      this.apply(this.prepare(endpoints));
    },
    makeAllReady() {
      assertLive();
      // Go through CONNECTING first: a real subchannel only reaches READY from CONNECTING, and
      // pick_first reacts to both notifications.
      for (const subchannel of pool.values()) {
        subchannel.startConnecting();
        subchannel.transition(ConnectivityState.READY);
      }
    },
    pick() {
      assertLive();
      if (latestPicker === null) throw new Error('no picker yet: call update() first');
      return latestPicker.pick(pickArgs);
    },
    get state() {
      return ConnectivityState[latestState];
    },
    get subchannelsCreated() {
      return pool.size;
    },
    get policy() {
      // ChildLoadBalancerHandler keeps the policy it created here (not part of grpc-js's typed API).
      return (lb as unknown as { currentChild: unknown }).currentChild;
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      lb.destroy();
      pool.clear();
      interned.clear();
      latestPicker = null;
    },
  };
}
