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
        subchannel: attemptSubchannel(result.subchannel!, attempt),
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

/** `subchannel` for one attempt: the same in every respect, and the attempt learns when its stream is created. */
function attemptSubchannel(
  subchannel: experimental.SubchannelInterface,
  attempt: CallAttempt,
): experimental.SubchannelInterface {
  return Object.create(subchannel, {
    getRealSubchannel: {
      value: () => {
        attempt.creatingStream();
        return subchannel.getRealSubchannel();
      },
    },
  }) as experimental.SubchannelInterface;
}

/** A dynamic filter telling `tracer` that its call ended: grpc-js ends every call through its filters' trailers. */
export function callEndFilter(tracer: CallRetryTracer): experimental.FilterFactory<experimental.Filter> {
  return { createFilter: () => new CallEndFilter(tracer) };
}

class CallEndFilter extends experimental.BaseFilter {
  constructor(private readonly tracer: CallRetryTracer) {
    super();
  }

  override receiveTrailers(status: StatusObject): StatusObject {
    this.tracer.callEnded();
    return status;
  }
}
