// The xds-channel benchmark's "grpc-js floor": a plain grpc-js channel, no xDS, whose resolver hands it the same
// addresses in the same order and whose LB policy does the least any policy must: one grpc-js subchannel per
// address (through the channel's helper, registered with channelz, as grpc-js's own pick_first and lbtree's
// helper do), every one asked to connect and reconnected when it goes IDLE, calls rotated over the READY ones.
// What this costs is what grpc-js's subchannels, transports and channelz cost by themselves: both xDS channels
// pay it, so each one's figure minus the floor is what its own resolver and policy tree add.

import { type ChannelOptions, connectivityState, experimental } from '@grpc/grpc-js';

const FLOOR_POLICY = 'lbtree_bench_floor';
export const FLOOR_SCHEME = 'lbtree-bench-floor';

type GrpcEndpoint = experimental.Endpoint;

function toEndpoint(address: string): GrpcEndpoint {
  const colon = address.lastIndexOf(':');
  return { addresses: [{ host: address.slice(0, colon), port: Number(address.slice(colon + 1)) }] };
}

/** The floor channel's resolver: the latest address list `pushAddresses` gave it (the same for every channel). */
let current: { addresses: readonly string[]; notify: (() => void) | null } = { addresses: [], notify: null };

/** Hands every floor channel a new address list (its "push"). */
export function pushAddresses(addresses: readonly string[]): void {
  current.addresses = addresses;
  current.notify?.();
}

class FloorResolver implements experimental.Resolver {
  constructor(
    _target: experimental.GrpcUri,
    private readonly listener: experimental.ResolverListener,
    _options: ChannelOptions,
  ) {
    current.notify = () => this.deliver();
  }

  updateResolution(): void {
    process.nextTick(() => this.deliver());
  }

  private deliver(): void {
    const serviceConfig = { loadBalancingConfig: [{ [FLOOR_POLICY]: {} }], methodConfig: [] };
    this.listener(
      experimental.statusOrFromValue(current.addresses.map(toEndpoint)),
      {},
      experimental.statusOrFromValue(serviceConfig as never),
      '',
    );
  }

  destroy(): void {
    current = { addresses: current.addresses, notify: null };
  }

  static getDefaultAuthority(): string {
    return 'floor';
  }
}

class FloorConfig implements experimental.TypedLoadBalancingConfig {
  getLoadBalancerName(): string {
    return FLOOR_POLICY;
  }
  toJsonObject(): object {
    return { [FLOOR_POLICY]: {} };
  }
  static createFromJson(): FloorConfig {
    return new FloorConfig();
  }
}

class RotatingPicker implements experimental.Picker {
  private next = 0;
  constructor(private readonly ready: readonly experimental.SubchannelInterface[]) {}
  pick(): experimental.PickResult {
    const subchannel = this.ready[this.next++ % this.ready.length]!;
    return {
      pickResultType: experimental.PickResultType.COMPLETE,
      subchannel,
      status: null,
      onCallStarted: null,
      onCallEnded: null,
    };
  }
}

const QUEUE: experimental.Picker = {
  pick: () => ({
    pickResultType: experimental.PickResultType.QUEUE,
    subchannel: null,
    status: null,
    onCallStarted: null,
    onCallEnded: null,
  }),
};

/** One subchannel per address, kept by address; the READY ones in a Set, a new picker when it changes. */
class FloorBalancer implements experimental.LoadBalancer {
  private readonly subchannels = new Map<string, experimental.SubchannelInterface>();
  private readonly ready = new Set<experimental.SubchannelInterface>();

  constructor(private readonly helper: experimental.ChannelControlHelper) {}

  updateAddressList(endpoints: experimental.StatusOr<GrpcEndpoint[]>): boolean {
    if (!endpoints.ok) return false;
    const wanted = new Set<string>();
    for (const endpoint of endpoints.value) {
      const address = endpoint.addresses[0]!;
      const key = experimental.subchannelAddressToString(address);
      wanted.add(key);
      if (this.subchannels.has(key)) continue;
      const subchannel = this.helper.createSubchannel(address, {});
      this.helper.addChannelzChild(subchannel.getChannelzRef());
      subchannel.ref();
      subchannel.addConnectivityStateListener((s, _previous, next) => this.onState(s, next));
      this.subchannels.set(key, subchannel);
      subchannel.startConnecting();
    }
    for (const [key, subchannel] of this.subchannels) {
      if (wanted.has(key)) continue;
      this.subchannels.delete(key);
      this.ready.delete(subchannel);
      this.helper.removeChannelzChild(subchannel.getChannelzRef());
      subchannel.unref();
    }
    this.report();
    return true;
  }

  private onState(subchannel: experimental.SubchannelInterface, next: connectivityState): void {
    if (next === connectivityState.IDLE) subchannel.startConnecting();
    const wasReady = this.ready.has(subchannel);
    if (next === connectivityState.READY) this.ready.add(subchannel);
    else this.ready.delete(subchannel);
    if (wasReady !== (next === connectivityState.READY)) this.report();
  }

  private report(): void {
    if (this.ready.size > 0) {
      this.helper.updateState(connectivityState.READY, new RotatingPicker([...this.ready]), null);
    } else {
      this.helper.updateState(connectivityState.CONNECTING, QUEUE, null);
    }
  }

  exitIdle(): void {}
  resetBackoff(): void {}
  destroy(): void {
    for (const subchannel of this.subchannels.values()) subchannel.unref();
    this.subchannels.clear();
  }
  getTypeName(): string {
    return FLOOR_POLICY;
  }
}

/** Registers the floor's resolver scheme and policy in this process's grpc-js. */
export function registerFloor(): void {
  experimental.registerResolver(FLOOR_SCHEME, FloorResolver);
  experimental.registerLoadBalancerType(FLOOR_POLICY, FloorBalancer, FloorConfig);
}
