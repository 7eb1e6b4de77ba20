// A96's retry metrics on grpc-js channels. grpc-js runs the retries itself (its RetryingCall); lbtree sees a
// call through the config selector of the resolvers it owns and every pick of every attempt through its picker.
// The config selector gives each call a tracer, in the call's pick information: grpc-js hands every pick of the
// call that very object, so the call's attempts are told apart without anything sent on the wire. The picker
// adapter feeds the tracer each pick and the attempt's stream hooks; a dynamic filter tells it the call ended.

import { experimental, type Metadata, type StatusObject } from '@grpc/grpc-js';
import type { CallAttempt, CallRetryTracer } from '../metrics/index.js';

/** The pick information key of a call's tracer (a symbol: grpc-js never reads or copies it). */
export const CALL_RETRY_TRACER: unique symbol = Symbol('lbtree.callRetryTracer');

export type TrackedPickInfo = { readonly [CALL_RETRY_TRACER]?: CallRetryTracer };

/** grpc-js's header for the number of earlier retry or hedging attempts (A6); a transparent retry keeps it. */
const PREVIOUS_ATTEMPTS = 'grpc-previous-rpc-attempts';

function previousAttempts(metadata: Metadata): number {
  const value = metadata.get(PREVIOUS_ATTEMPTS)[0];
  if (value === undefined) return 0;
  const n = Number(value);
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

/**
 * The pick result grpc-js gets for a pick of a tracked call: `result`, with the attempt told of its stream.
 * A complete result gets its own subchannel view, whose `getRealSubchannel()` grpc-js calls only to create the
 * stream (load-balancing-call.js): a pick of the call after that, without the stream started, is the transparent
 * retry of a stream that could not be created — whereas a pick whose subchannel was no longer ready is picked
 * again without it.
 */
export function trackAttempt(
  tracer: CallRetryTracer,
  metadata: Metadata,
  result: experimental.PickResult,
): experimental.PickResult {
  const attempt = tracer.attemptFor(previousAttempts(metadata));
  switch (result.pickResultType) {
    case experimental.PickResultType.COMPLETE: {
      const { onCallStarted, onCallEnded } = result;
      return {
        pickResultType: experimental.PickResultType.COMPLETE,
        subchannel: new AttemptSubchannel(result.subchannel!, attempt),
        status: null,
        onCallStarted: () => {
          attempt.streamStarted();
          onCallStarted?.();
        },
        onCallEnded: (code, details, trailers) => {
          attempt.ended();
          onCallEnded?.(code, details, trailers);
        },
      };
    }
    case experimental.PickResultType.TRANSIENT_FAILURE:
      // A wait-for-ready call waits for the next picker instead (the same attempt).
      if (!metadata.getOptions().waitForReady) attempt.ended();
      return result;
    case experimental.PickResultType.DROP:
      attempt.ended();
      return result;
    default:
      return result;
  }
}

/**
 * `subchannel` for one attempt: every method is the subchannel's own, and the attempt learns when its stream is
 * created. A class of its own rather than an object made per call with `subchannel` as its prototype: such
 * objects cost several times more to make, and their shapes differ per subchannel where grpc-js calls them.
 */
class AttemptSubchannel implements experimental.SubchannelInterface {
  constructor(
    private readonly subchannel: experimental.SubchannelInterface,
    private readonly attempt: CallAttempt,
  ) {}
  getRealSubchannel(): ReturnType<experimental.SubchannelInterface['getRealSubchannel']> {
    this.attempt.creatingStream();
    return this.subchannel.getRealSubchannel();
  }
  getConnectivityState(): ReturnType<experimental.SubchannelInterface['getConnectivityState']> {
    return this.subchannel.getConnectivityState();
  }
  addConnectivityStateListener(listener: experimental.ConnectivityStateListener): void {
    this.subchannel.addConnectivityStateListener(listener);
  }
  removeConnectivityStateListener(listener: experimental.ConnectivityStateListener): void {
    this.subchannel.removeConnectivityStateListener(listener);
  }
  startConnecting(): void {
    this.subchannel.startConnecting();
  }
  getAddress(): string {
    return this.subchannel.getAddress();
  }
  throttleKeepalive(newKeepaliveTime: number): void {
    this.subchannel.throttleKeepalive(newKeepaliveTime);
  }
  ref(): void {
    this.subchannel.ref();
  }
  unref(): void {
    this.subchannel.unref();
  }
  getChannelzRef(): ReturnType<experimental.SubchannelInterface['getChannelzRef']> {
    return this.subchannel.getChannelzRef();
  }
  isHealthy(): boolean {
    return this.subchannel.isHealthy();
  }
  addHealthStateWatcher(listener: (healthy: boolean) => void): void {
    this.subchannel.addHealthStateWatcher(listener);
  }
  removeHealthStateWatcher(listener: (healthy: boolean) => void): void {
    this.subchannel.removeHealthStateWatcher(listener);
  }
  addDataWatcher(dataWatcher: Parameters<experimental.SubchannelInterface['addDataWatcher']>[0]): void {
    this.subchannel.addDataWatcher(dataWatcher);
  }
  realSubchannelEquals(other: experimental.SubchannelInterface): boolean {
    return this.subchannel.realSubchannelEquals(other);
  }
  getCallCredentials(): ReturnType<experimental.SubchannelInterface['getCallCredentials']> {
    return this.subchannel.getCallCredentials();
  }
  getChannel(): ReturnType<experimental.SubchannelInterface['getChannel']> {
    return this.subchannel.getChannel();
  }
}

/**
 * The dynamic filter telling `tracer` that its call ended: grpc-js ends every call through its filters'
 * trailers. It is its own factory (grpc-js asks a call's factory for one filter), and it passes what it does not
 * look at through as it came: grpc-js's `BaseFilter` would wrap each metadata and message in a promise of its own.
 */
export function callEndFilter(tracer: CallRetryTracer): experimental.FilterFactory<experimental.Filter> {
  return new CallEndFilter(tracer);
}

type Filter = experimental.Filter;

class CallEndFilter implements Filter, experimental.FilterFactory<Filter> {
  constructor(private readonly tracer: CallRetryTracer) {}

  createFilter(): Filter {
    return this;
  }

  sendMetadata(metadata: Parameters<Filter['sendMetadata']>[0]): ReturnType<Filter['sendMetadata']> {
    return metadata;
  }
  receiveMetadata(metadata: Metadata): Metadata {
    return metadata;
  }
  sendMessage(message: Parameters<Filter['sendMessage']>[0]): ReturnType<Filter['sendMessage']> {
    return message;
  }
  receiveMessage(message: Parameters<Filter['receiveMessage']>[0]): ReturnType<Filter['receiveMessage']> {
    return message;
  }
  receiveTrailers(status: StatusObject): StatusObject {
    this.tracer.callEnded();
    return status;
  }
}
