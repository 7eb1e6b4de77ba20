// A96's retry metrics on grpc-js channels. grpc-js runs the retries itself (its RetryingCall); lbtree sees a
// call through the config selector of the resolvers it owns and every pick of every attempt through its picker.
// The config selector gives each call a tracer, in the call's pick information: grpc-js hands every pick of the
// call that very object, so the call's attempts are told apart without anything sent on the wire. The picker
// adapter feeds the tracer each pick and the attempt's stream hooks; a dynamic filter tells it the call ended.

import { experimental, type Metadata, type StatusObject, status } from '@grpc/grpc-js';
import { type CallAttempt, CallRetryTracer } from '../metrics/index.js';

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
  // A call's first pick is its first attempt's, which grpc-js sends without the header (it adds it from the first
  // retry or hedge on): only the later picks read it, so a call picked once does not.
  const attempt = tracer.attemptFor(tracer.started ? previousAttempts(metadata) : 0);
  switch (result.pickResultType) {
    case experimental.PickResultType.COMPLETE:
      return new TrackedPick(result, attempt);
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

type SubchannelInterface = experimental.SubchannelInterface;

/**
 * A complete pick of a tracked call: the pick result grpc-js gets and, as its `subchannel`, the attempt's view
 * of the picked subchannel — one object per pick, as every call pays for it (grpc-js reads the subchannel only
 * through the result). Every subchannel method is the picked subchannel's own, and the attempt learns when its
 * stream is created. grpc-js calls `onCallStarted` on the result itself and `onCallEnded` on its own call
 * object, so only the latter needs a closure.
 */
class TrackedPick implements experimental.PickResult, SubchannelInterface {
  readonly pickResultType = experimental.PickResultType.COMPLETE;
  readonly subchannel: SubchannelInterface = this;
  readonly status = null;
  readonly onCallEnded: experimental.PickResult['onCallEnded'];
  private readonly picked: SubchannelInterface;

  constructor(
    private readonly result: experimental.PickResult,
    private readonly attempt: CallAttempt,
  ) {
    this.picked = result.subchannel!;
    const onCallEnded = result.onCallEnded;
    this.onCallEnded = (code, details, trailers) => {
      if (code === status.OK) attempt.succeeded();
      else attempt.ended();
      onCallEnded?.(code, details, trailers);
    };
  }

  onCallStarted(): void {
    this.attempt.streamStarted();
    this.result.onCallStarted?.();
  }

  getRealSubchannel(): ReturnType<SubchannelInterface['getRealSubchannel']> {
    this.attempt.creatingStream();
    return this.picked.getRealSubchannel();
  }
  getConnectivityState(): ReturnType<SubchannelInterface['getConnectivityState']> {
    return this.picked.getConnectivityState();
  }
  addConnectivityStateListener(listener: experimental.ConnectivityStateListener): void {
    this.picked.addConnectivityStateListener(listener);
  }
  removeConnectivityStateListener(listener: experimental.ConnectivityStateListener): void {
    this.picked.removeConnectivityStateListener(listener);
  }
  startConnecting(): void {
    this.picked.startConnecting();
  }
  getAddress(): string {
    return this.picked.getAddress();
  }
  throttleKeepalive(newKeepaliveTime: number): void {
    this.picked.throttleKeepalive(newKeepaliveTime);
  }
  ref(): void {
    this.picked.ref();
  }
  unref(): void {
    this.picked.unref();
  }
  getChannelzRef(): ReturnType<SubchannelInterface['getChannelzRef']> {
    return this.picked.getChannelzRef();
  }
  isHealthy(): boolean {
    return this.picked.isHealthy();
  }
  addHealthStateWatcher(listener: (healthy: boolean) => void): void {
    this.picked.addHealthStateWatcher(listener);
  }
  removeHealthStateWatcher(listener: (healthy: boolean) => void): void {
    this.picked.removeHealthStateWatcher(listener);
  }
  addDataWatcher(dataWatcher: Parameters<SubchannelInterface['addDataWatcher']>[0]): void {
    this.picked.addDataWatcher(dataWatcher);
  }
  realSubchannelEquals(other: SubchannelInterface): boolean {
    return this.picked.realSubchannelEquals(other);
  }
  getCallCredentials(): ReturnType<SubchannelInterface['getCallCredentials']> {
    return this.picked.getCallCredentials();
  }
  getChannel(): ReturnType<SubchannelInterface['getChannel']> {
    return this.picked.getChannel();
  }
}

type Filter = experimental.Filter;

/**
 * A call's tracer that is also the dynamic filter telling it the call ended (grpc-js ends every call through its
 * filters' trailers), and that filter's factory (grpc-js asks a call's factory for one filter): one object per
 * call. It passes what it does not look at through as it came: grpc-js's `BaseFilter` would wrap each metadata
 * and message in a promise of its own.
 */
export class TrackedCall extends CallRetryTracer implements Filter, experimental.FilterFactory<Filter> {
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
    this.callEnded();
    return status;
  }
}
