import type { CallEndedHook } from './backend-metrics.js';
import type { Status } from './status.js';
import type { Subchannel } from './subchannel.js';

/** Call metadata as a picker sees it (grpc-js `Metadata` fits this shape). */
export interface CallMetadata {
  get(key: string): ReadonlyArray<string | Uint8Array>;
}

/**
 * Per-call values set above the LB tree, by key: the cluster an xDS config selector chose (A31), session
 * affinity cookies and the like. A `ReadonlyMap` fits; an adapter may expose a view instead of a map.
 */
export interface CallAttributes {
  get(key: unknown): unknown;
}

export interface PickArgs {
  readonly metadata: CallMetadata;
  /** The request hash (A42), when a hash policy produced one. */
  readonly hash?: bigint;
  /** Per-call attributes set by a config selector or filters. */
  readonly callAttributes?: CallAttributes;
}

export interface CompletePick {
  readonly type: 'complete';
  readonly subchannel: Subchannel;
  readonly onCallStarted?: () => void;
  /** Hears how the call ended; `details` carries the backend metrics the call's trailers reported. */
  readonly onCallEnded?: CallEndedHook;
}
export interface QueuePick {
  readonly type: 'queue';
}
/**
 * Fails the call, unless it is wait-for-ready and the status is UNAVAILABLE (no backend can take it yet), in
 * which case the channel queues it. Any other status says waiting cannot help (ring_hash without a request
 * hash: INTERNAL), so wait-for-ready calls fail at once too.
 */
export interface FailPick {
  readonly type: 'fail';
  readonly status: Status;
}
/** Fails the call even when it is wait-for-ready (load-balancer drops). */
export interface DropPick {
  readonly type: 'drop';
  readonly status: Status;
  /** Why, when a load report or a timeline counts it: an EDS drop category, or circuit breaking (A37). */
  readonly dropReason?: { readonly category: string } | { readonly circuitBreaking: true };
}
export type PickResult = CompletePick | QueuePick | FailPick | DropPick;

/** An immutable snapshot of a policy's routing decision. Picks must be cheap and allocation-free. */
export interface Picker {
  pick(args: PickArgs): PickResult;
  /**
   * Set when every pick returns this same result: a parent may return it without calling `pick`, saving
   * a call and a few cache misses per pick when it rotates over thousands of children.
   */
  readonly constantResult?: PickResult;
}

export const QUEUE: QueuePick = Object.freeze({ type: 'queue' });

/** Queues every call (CONNECTING). */
export const queuePicker: Picker = { pick: () => QUEUE };

/** Queues every call and, on the first pick, asks the policy to leave IDLE. */
export class IdlePicker implements Picker {
  private triggered = false;
  constructor(private readonly exitIdle: () => void) {}
  pick(): PickResult {
    if (!this.triggered) {
      this.triggered = true;
      this.exitIdle();
    }
    return QUEUE;
  }
}

/** Fails every call with one status (TRANSIENT_FAILURE). */
export class FailPicker implements Picker {
  private result: FailPick | null = null;
  constructor(readonly status: Status) {}
  /**
   * Built on first use: a channel holds a failing picker per unreachable endpoint, and most are never picked
   * (a parent with a READY child picks among the READY ones).
   */
  get constantResult(): FailPick {
    if (this.result === null) this.result = Object.freeze({ type: 'fail', status: this.status });
    return this.result;
  }
  pick(): PickResult {
    return this.constantResult;
  }
}

/**
 * Completes every call on one subchannel (pick_first's READY picker). It is its own pick result: a channel
 * holds one per READY endpoint, and a second object per endpoint was that much more for every scavenge to copy.
 */
export class SubchannelPicker implements Picker, CompletePick {
  readonly type = 'complete';
  readonly constantResult: CompletePick = this;
  constructor(readonly subchannel: Subchannel) {}
  pick(): PickResult {
    return this;
  }
}
