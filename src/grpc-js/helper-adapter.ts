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
import { GrpcSubchannelHandle } from './subchannel-adapter.js';

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

/**
 * Our Helper on top of grpc-js's ChannelControlHelper: subchannels are created with the latest channel
 * options and registered with channelz; pickers are wrapped for grpc-js.
 */
export class GrpcHelperAdapter implements Helper {
  readonly clock = realClock;
  /** Channel options of the latest update, passed on to new subchannels. */
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
    return new GrpcSubchannelHandle(address, grpcSubchannel, (h) =>
      this.grpc.removeChannelzChild(h.grpc.getChannelzRef()),
    );
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
