import { experimental, type status as GrpcStatus, Metadata } from '@grpc/grpc-js';
import {
  type CallAttributes,
  type CallEndedHook,
  Code,
  type DropPick,
  type FailPick,
  type PickArgs,
  type Picker,
  type PickResult,
  type Status,
} from '../core/index.js';
import { CallRequestHash } from '../hash/index.js';
import { XDS_CLUSTER_CALL_ATTRIBUTE, XDS_OVERRIDE_HOST_CALL_ATTRIBUTE } from '../xds/call-attributes.js';
import { GrpcCallEnd } from './backend-metrics.js';
import { CALL_RETRY_TRACER, type TrackedPickInfo, trackAttempt } from './call-retry-tracking.js';
import type { ChannelRecording } from './channel-recording.js';
import type { GrpcSubchannelHandle } from './subchannel-adapter.js';

/**
 * `extraPickInfo` key a config selector uses to hand the request hash down: a decimal string (grpc-js-xds's
 * config selector), or lbtree's xds resolver's {@link CallRequestHash}, computed when first read.
 */
export const HASH_PICK_INFO_KEY = 'hash';

const QUEUE_RESULT: experimental.PickResult = Object.freeze({
  pickResultType: experimental.PickResultType.QUEUE,
  subchannel: null,
  status: null,
  onCallStarted: null,
  onCallEnded: null,
});

/**
 * Our PickArgs over grpc-js's, reused for every pick of one picker (picks are synchronous). The request
 * hash is read from `extraPickInfo` only if a picker asks for it, so other trees never pay for it.
 */
class AdaptedPickArgs implements PickArgs {
  metadata: PickArgs['metadata'] = undefined as never;
  extraPickInfo: Readonly<Record<string, string>> = {};
  /**
   * The config selector's pick information (the xDS cluster, A31; the A55 session object), read without copying
   * and untyped: grpc-js declares string values, but the xds resolver's session state is an object.
   */
  readonly callAttributes: CallAttributes = new PickInfoAttributes(this);
  get hash(): bigint | undefined {
    const hash: unknown = this.extraPickInfo[HASH_PICK_INFO_KEY];
    if (hash === undefined) return undefined;
    if (typeof hash === 'string') return parseHash(hash);
    return hash instanceof CallRequestHash ? hash.value : undefined;
  }
}

/**
 * The pick information as call attributes. The two keys an xDS tree reads on every pick (xds_cluster_manager's
 * cluster, xds_override_host's session) are read each at a site of its own, so neither read looks up a property
 * by a name that changes from call to call; any other key is read as it comes.
 */
class PickInfoAttributes implements CallAttributes {
  constructor(private readonly args: AdaptedPickArgs) {}

  get(key: unknown): unknown {
    const info: Readonly<Record<string, unknown>> = this.args.extraPickInfo;
    if (key === XDS_CLUSTER_CALL_ATTRIBUTE) return info[XDS_CLUSTER_CALL_ATTRIBUTE];
    if (key === XDS_OVERRIDE_HOST_CALL_ATTRIBUTE) return info[XDS_OVERRIDE_HOST_CALL_ATTRIBUTE];
    return typeof key === 'string' ? info[key] : undefined;
  }
}

/**
 * Presents an lbtree picker to grpc-js. Fail, drop and hook-carrying results are converted once per result
 * object and cached; complete results without call hooks reuse the handle's prebuilt result, so picks do not
 * allocate.
 */
export class GrpcPickerAdapter implements experimental.Picker {
  private readonly args = new AdaptedPickArgs();
  private readonly converted = new WeakMap<PickResult, experimental.PickResult>();

  /** With `recording`, each call's end and each failed pick is also counted in the channel's flight recorder. */
  constructor(
    readonly picker: Picker,
    private readonly recording: ChannelRecording | null = null,
  ) {}

  pick(pickArgs: experimental.PickArgs): experimental.PickResult {
    const result = this.pickFor(pickArgs);
    // A96: a call the config selector gave a tracer (its channel records retry metrics).
    const tracer = (pickArgs.extraPickInfo as TrackedPickInfo)[CALL_RETRY_TRACER];
    return tracer === undefined ? result : trackAttempt(tracer, pickArgs.metadata, result);
  }

  private pickFor(pickArgs: experimental.PickArgs): experimental.PickResult {
    const args = this.args;
    args.metadata = pickArgs.metadata as unknown as PickArgs['metadata'];
    args.extraPickInfo = pickArgs.extraPickInfo;
    const result = this.picker.pick(args);
    // The route the call took (xDS channels), counted for every pick the recorder counts: all but queued ones.
    if (this.recording !== null && result.type !== 'queue')
      this.recording.routePicked(args.extraPickInfo, args.metadata);
    if (result.type === 'complete') {
      const handle = result.subchannel as GrpcSubchannelHandle;
      handle.picks++;
      const recorded = this.recording?.picked(handle);
      if (result.onCallStarted === undefined && result.onCallEnded === undefined)
        return recorded ?? handle.completeResult;
      // Results with call hooks (least_request's counters) are stable per endpoint: convert each once.
      let hooked = this.converted.get(result);
      if (!hooked) {
        hooked = withHooks(handle, result.onCallStarted, result.onCallEnded, this.recording);
        this.converted.set(result, hooked);
      }
      return hooked;
    }
    if (result.type === 'queue') return QUEUE_RESULT;
    this.recording?.pickFailed(result.type === 'drop');
    let converted = this.converted.get(result);
    if (!converted) {
      converted = failure(failsWaitForReady(result), result.status);
      this.converted.set(result, converted);
    }
    return converted;
  }
}

/**
 * Whether a failed pick also fails wait-for-ready calls: a drop does, and so does a failure for a reason
 * waiting cannot fix — any status but UNAVAILABLE (ring_hash with no request hash is INTERNAL). Only
 * UNAVAILABLE says "no backend can take the call yet", which a wait-for-ready call waits out.
 */
export function failsWaitForReady(result: FailPick | DropPick): boolean {
  return result.type === 'drop' || result.status.code !== Code.UNAVAILABLE;
}

function parseHash(text: string): bigint | undefined {
  try {
    return BigInt.asUintN(64, BigInt(text));
  } catch {
    return undefined;
  }
}

function failure(failWaitForReady: boolean, status: Status): experimental.PickResult {
  return {
    pickResultType: failWaitForReady
      ? experimental.PickResultType.DROP
      : experimental.PickResultType.TRANSIENT_FAILURE,
    subchannel: null,
    status: { code: status.code as number as GrpcStatus, details: status.details, metadata: new Metadata() },
    onCallStarted: null,
    onCallEnded: null,
  };
}

function withHooks(
  handle: GrpcSubchannelHandle,
  onCallStarted: (() => void) | undefined,
  onCallEnded: CallEndedHook | undefined,
  recording: ChannelRecording | null,
): experimental.PickResult {
  const policyHook = onCallEnded
    ? (code: GrpcStatus, details: string, trailers: Metadata) => {
        const end = new GrpcCallEnd(code as number, details, trailers);
        onCallEnded(end, end);
      }
    : null;
  return {
    pickResultType: experimental.PickResultType.COMPLETE,
    subchannel: handle.grpc,
    status: null,
    onCallStarted: onCallStarted ?? null,
    onCallEnded: recording === null ? policyHook : recording.callEnded(handle.key, policyHook),
  };
}
