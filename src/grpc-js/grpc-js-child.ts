import { type ChannelOptions, experimental, Metadata } from '@grpc/grpc-js';
import {
  type Address,
  Attributes,
  ConfigError,
  ENDPOINT_WEIGHT,
  type Endpoint,
  type Helper,
  HIERARCHICAL_PATH,
  type LbUpdate,
  LOCALITY_WEIGHT,
  type LoadBalancer,
  OK_STATUS,
  type PickArgs,
  type Picker,
  type PickResult,
  type PolicyFactory,
  parseAddress,
  QUEUE,
  TRANSIENT_FAILURE,
  unavailable,
} from '../core/index.js';
import { fromGrpcState } from './connectivity.js';
import { HASH_PICK_INFO_KEY } from './picker-adapter.js';
import { withoutFlightRecorder } from './recorded-channels.js';
import { GrpcSubchannelHandle } from './subchannel-adapter.js';

type TypedConfig = experimental.TypedLoadBalancingConfig;

const factories = new Map<string, PolicyFactory>();

/**
 * The lookup fallback the grpc-js adapter gives lbtree's parents: a name lbtree does not know but grpc-js's
 * registry does becomes that grpc-js policy (one factory per name, so a child keeps its instance).
 */
export function grpcJsOnlyPolicy(name: string): PolicyFactory | undefined {
  if (!experimental.isLoadBalancerNameRegistered(name)) return undefined;
  let factory = factories.get(name);
  if (!factory) {
    factory = grpcJsPolicyFactory(name) as PolicyFactory;
    factories.set(name, factory);
  }
  return factory;
}

/**
 * A policy only grpc-js's registry knows (grpc-js-xds's `cds` under an aggregate cluster's priority, grpc-js's
 * `outlier_detection` or `weighted_round_robin`, an application's grpc-js policy), run as a child of an
 * lbtree parent: grpc-js parses its config and runs it, over subchannels lbtree's helper chain creates.
 */
export function grpcJsPolicyFactory(name: string): PolicyFactory<TypedConfig> {
  return {
    name,
    parseConfig(json, path) {
      try {
        return experimental.parseLoadBalancingConfig({ [name]: json ?? {} } as never);
      } catch (e) {
        throw new ConfigError(path, `grpc-js rejected the config: ${(e as Error).message}`);
      }
    },
    create: (helper) => new GrpcJsChild(name, helper),
  };
}

/** A subchannel lbtree's helper created, lent to a grpc-js policy: its last unref releases lbtree's handle. */
class LentSubchannel extends experimental.BaseSubchannelWrapper {
  constructor(private readonly handle: GrpcSubchannelHandle) {
    super(handle.grpc);
  }
  protected override destroy(): void {
    super.destroy();
    this.handle.release();
  }
}

/** The grpc-js policy instance behind one lbtree child. */
class GrpcJsChild implements LoadBalancer<TypedConfig> {
  private readonly child: experimental.ChildLoadBalancerHandler;

  constructor(
    private readonly name: string,
    private readonly helper: Helper,
  ) {
    this.child = new experimental.ChildLoadBalancerHandler({
      createSubchannel: (address) => this.createSubchannel(address),
      updateState: (state, picker, errorMessage) => {
        const lbState = fromGrpcState(state);
        const status =
          lbState === TRANSIENT_FAILURE ? unavailable(errorMessage ?? `${name} failed`) : OK_STATUS;
        helper.updateState(lbState, status, new PickerOverGrpcJs(picker));
      },
      requestReresolution: () => helper.requestReresolution(),
      // Each subchannel is registered with channelz by the adapter's root helper already.
      addChannelzChild: () => {},
      removeChannelzChild: () => {},
    });
  }

  private createSubchannel(address: experimental.SubchannelAddress): experimental.SubchannelInterface {
    const subchannel = this.helper.createSubchannel(address as Address, Attributes.EMPTY);
    if (!(subchannel instanceof GrpcSubchannelHandle)) {
      subchannel.release();
      throw new Error(`grpc-js's ${this.name} cannot run under an lbtree policy that wraps subchannels`);
    }
    return new LentSubchannel(subchannel);
  }

  update(update: LbUpdate<TypedConfig>): boolean {
    const endpoints: experimental.StatusOr<experimental.Endpoint[]> = update.endpoints.ok
      ? experimental.statusOrFromValue(update.endpoints.value.map(toGrpcJsEndpoint))
      : experimental.statusOrFromError({
          code: update.endpoints.status.code as number,
          details: update.endpoints.status.details,
          metadata: new Metadata(),
        });
    return this.child.updateAddressList(
      endpoints,
      update.config,
      // The channel's flight recorder stays with lbtree's root: a policy below records nothing twice.
      withoutFlightRecorder(update.attributes as ChannelOptions),
      update.resolutionNote ?? '',
    );
  }
  exitIdle(): void {
    this.child.exitIdle();
  }
  resetBackoff(): void {
    this.child.resetBackoff();
  }
  destroy(): void {
    this.child.destroy();
  }
}

/** Ours → grpc-js's endpoint, with the fields grpc-js-xds's policies read. */
function toGrpcJsEndpoint(e: Endpoint): experimental.Endpoint {
  const path = e.attributes.get(HIERARCHICAL_PATH);
  const localityWeight = e.attributes.get(LOCALITY_WEIGHT);
  const endpointWeight = e.attributes.get(ENDPOINT_WEIGHT);
  return Object.assign(
    { addresses: e.addresses.map((a) => ({ ...a })) as experimental.SubchannelAddress[] },
    path ? { localityPath: [...path] } : {},
    localityWeight !== undefined ? { localityWeight } : {},
    endpointWeight !== undefined ? { endpointWeight } : {},
  );
}

/** A grpc-js picker as an lbtree picker; what it picks reaches grpc-js unchanged through the root adapter. */
class PickerOverGrpcJs implements Picker {
  private readonly picked = new WeakMap<experimental.SubchannelInterface, PickResult>();
  constructor(private readonly picker: experimental.Picker) {}

  pick(args: PickArgs): PickResult {
    const result = this.picker.pick({
      metadata: args.metadata as unknown as Metadata,
      extraPickInfo: extraPickInfoOf(args),
    });
    switch (result.pickResultType) {
      case experimental.PickResultType.COMPLETE: {
        const subchannel = result.subchannel!;
        const { onCallStarted, onCallEnded } = result;
        if (!onCallStarted && !onCallEnded) {
          let complete = this.picked.get(subchannel);
          if (!complete) {
            complete = Object.freeze({ type: 'complete', subchannel: pickedHandle(subchannel) });
            this.picked.set(subchannel, complete);
          }
          return complete;
        }
        return {
          type: 'complete',
          subchannel: pickedHandle(subchannel),
          ...(onCallStarted ? { onCallStarted } : {}),
          ...(onCallEnded
            ? { onCallEnded: (s) => onCallEnded(s.code as number, s.details, new Metadata()) }
            : {}),
        };
      }
      case experimental.PickResultType.QUEUE:
        return QUEUE;
      case experimental.PickResultType.DROP:
        return {
          type: 'drop',
          status: { code: result.status!.code as number, details: result.status!.details },
        };
      default:
        return {
          type: 'fail',
          status: { code: result.status!.code as number, details: result.status!.details },
        };
    }
  }
}

/** What the lbtree tree hands a grpc-js picker: the channel's pick info, or the request hash alone. */
function extraPickInfoOf(args: PickArgs): Record<string, string> {
  const fromChannel = (args as { extraPickInfo?: Record<string, string> }).extraPickInfo;
  if (fromChannel) return fromChannel;
  return args.hash === undefined ? {} : { [HASH_PICK_INFO_KEY]: args.hash.toString() };
}

const pickedHandles = new WeakMap<experimental.SubchannelInterface, GrpcSubchannelHandle>();

/**
 * The subchannel a grpc-js policy picked, as lbtree's result carries it: a handle holding no ref (the grpc-js
 * policy owns it), whose prebuilt complete result the root adapter gives grpc-js unchanged.
 */
function pickedHandle(subchannel: experimental.SubchannelInterface): GrpcSubchannelHandle {
  let handle = pickedHandles.get(subchannel);
  if (!handle) {
    handle = new GrpcSubchannelHandle(parseAddress(subchannel.getAddress()), subchannel, null);
    pickedHandles.set(subchannel, handle);
  }
  return handle;
}
