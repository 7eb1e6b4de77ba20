import { type ChannelOptions, experimental, logVerbosity } from '@grpc/grpc-js';
import {
  type Address,
  type ConnectivityState,
  type Helper,
  type Picker,
  realClock,
  type Status,
  type Subchannel,
  type Trace,
} from '../core/index.js';
import { toGrpcState } from './connectivity.js';
import { GrpcPickerAdapter } from './picker-adapter.js';
import { GrpcSubchannelHandle, type HandleOwner } from './subchannel-adapter.js';

const TRACER = 'lbtree';
// grpc-js enables tracers from GRPC_TRACE at startup; we read it the same way, once, so that a disabled
// tracer costs one branch and builds no message.
const traceEnabled = (process.env.GRPC_TRACE ?? '').split(',').some((t) => t === TRACER || t === 'all');

/** lbtree's trace output (`GRPC_TRACE=lbtree`) through grpc-js's tracer, each line naming the policy. */
export function lbtreeTracer(policyName: string): Trace {
  return traceEnabled
    ? (message) => experimental.trace(logVerbosity.DEBUG, TRACER, `${policyName}: ${message()}`)
    : () => {};
}

/** grpc-js's channel-only arguments (the config selector, …): its InternalChannel drops only some of them. */
const GRPC_INTERNAL_PREFIX = 'grpc.internal.';

/**
 * The channel options a subchannel is created with: the update's, without grpc-js's internal ones and symbol
 * keys (lbtree's XdsConfig). The config selector is new with every resolution; handed to subchannels, it made
 * grpc-js's pool create a second subchannel (and connection) for an address it already had, and
 * GRPC_TRACE=subchannel fail every subchannel creation (its trace prints the options as JSON).
 */
export function subchannelOptions(options: ChannelOptions): ChannelOptions {
  const kept: ChannelOptions = {};
  for (const [key, value] of Object.entries(options)) {
    if (!key.startsWith(GRPC_INTERNAL_PREFIX)) kept[key] = value;
  }
  return kept;
}

/**
 * Our Helper on top of grpc-js's ChannelControlHelper: subchannels are created with the latest channel
 * options and registered with channelz; pickers are wrapped for grpc-js.
 */
export class GrpcHelperAdapter implements Helper, HandleOwner {
  readonly clock = realClock;
  /** Channel options of the latest update as `subchannelOptions` keeps them, passed on to new subchannels. */
  channelOptions: ChannelOptions = {};
  readonly trace: Trace;

  constructor(
    private readonly grpc: experimental.ChannelControlHelper,
    policyName: string,
  ) {
    this.trace = lbtreeTracer(policyName);
  }

  createSubchannel(address: Address): Subchannel {
    const grpcSubchannel = this.grpc.createSubchannel(address, this.channelOptions);
    this.grpc.addChannelzChild(grpcSubchannel.getChannelzRef());
    return new GrpcSubchannelHandle(address, grpcSubchannel, this);
  }

  /** @internal A handle this helper created was released. */
  handleReleased(handle: GrpcSubchannelHandle): void {
    this.grpc.removeChannelzChild(handle.grpc.getChannelzRef());
  }

  updateState(state: ConnectivityState, status: Status, picker: Picker): void {
    this.grpc.updateState(
      toGrpcState(state),
      new GrpcPickerAdapter(picker),
      status.code === 0 ? null : status.details,
    );
  }

  requestReresolution(): void {
    this.grpc.requestReresolution();
  }

  random(): number {
    return Math.random();
  }
}
