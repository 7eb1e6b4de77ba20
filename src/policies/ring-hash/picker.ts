import {
  Code,
  type ConnectivityState,
  type FailPick,
  type PickArgs,
  type Picker,
  type PickResult,
  QUEUE,
  queuePicker,
} from '../../core/index.js';
// The hash files ring_hash needs, not hash/index.js: the request-hash evaluator there loads the RE2 engine,
// which picking never uses.
import { requestHeaderValue } from '../../hash/header-value.js';
import { splitU64 } from '../../hash/u64.js';
import { Utf8Buffer } from '../../hash/utf8.js';
import { xxh64Into } from '../../hash/xxh64.js';
import type { ArraySnapshot } from '../snapshot-array.js';
import type { Ring } from './ring.js';

// Endpoint states as the picker reads them.
export const STATE_IDLE = 0;
export const STATE_CONNECTING = 1;
export const STATE_READY = 2;
export const STATE_TRANSIENT_FAILURE = 3;

/**
 * What the picker keeps of an endpoint: its state and its child's picker, in one immutable object per slot (not
 * a state array beside a picker array), so a picker takes one O(1) snapshot and a child report makes one
 * write. IDLE and CONNECTING endpoints share one object each (the walk queues there; their pickers are never
 * asked); one class, so every read of `state` is monomorphic.
 */
export class EndpointSlot {
  constructor(
    readonly state: number,
    readonly picker: Picker,
  ) {}
}

const IDLE_SLOT = new EndpointSlot(STATE_IDLE, queuePicker);
const CONNECTING_SLOT = new EndpointSlot(STATE_CONNECTING, queuePicker);

/** The slot for an endpoint in `state` whose child reported `picker`. */
export function endpointSlot(state: ConnectivityState, picker: Picker): EndpointSlot {
  switch (state) {
    case 'READY':
      return new EndpointSlot(STATE_READY, picker);
    case 'CONNECTING':
      return CONNECTING_SLOT;
    case 'TRANSIENT_FAILURE':
      return new EndpointSlot(STATE_TRANSIENT_FAILURE, picker);
    default:
      return IDLE_SLOT;
  }
}

/** A76: without a header to hash and without a hash from an upper layer, a pick cannot be placed on the ring. */
export const MISSING_HASH: FailPick = Object.freeze({
  type: 'fail',
  status: Object.freeze({
    code: Code.INTERNAL,
    details:
      'ring_hash_experimental: the call has no request hash. Set "requestHashHeader" in the ' +
      'ring_hash_experimental config to hash a request header (gRFC A76), or use ring_hash under an xDS ' +
      'route whose hash_policy computes one (gRFC A42).',
  }),
});

const words = new Uint32Array(2);
const text = new Utf8Buffer();

/**
 * The ring_hash picker (A61 "Ring Hash" picker, A76 request hash header): the ring and a snapshot of every
 * endpoint's {@link EndpointSlot} taken when it was built (an O(1) snapshot of the policy's
 * per-endpoint array). Used in every state, TRANSIENT_FAILURE included.
 * A pick hashes (or reads) the request hash, finds its place on the ring and walks from there.
 */
export class RingHashPicker implements Picker {
  /**
   * @param endpoints  per endpoint (ring endpoint index): its state and its child's latest picker
   * @param header     A76 request hash header, or '' to take `PickArgs.hash`
   * @param counts     the policy's live count of endpoints per state: whether some endpoint is CONNECTING now
   *                   (A76 random-hash walk; A42 lets a picker read state the policy keeps up to date)
   * @param allFailed  whether every endpoint with ring entries is in TRANSIENT_FAILURE
   * @param connect    asks the policy to connect an endpoint; it must not act before this pick returns
   * @param random     the policy's random source, for calls without the header
   */
  constructor(
    private readonly ring: Ring,
    private readonly endpoints: ArraySnapshot<EndpointSlot>,
    private readonly header: string,
    private readonly counts: Readonly<Record<ConnectivityState, number>>,
    private readonly allFailed: boolean,
    private readonly connect: (endpoint: number) => void,
    private readonly random: () => number,
  ) {}

  pick(args: PickArgs): PickResult {
    // Kept small so the whole hot path (read the hash, find its entry, one READY endpoint) inlines.
    if (this.header !== '') return this.pickByHeader(args);
    // Set by an upper layer: the xDS config selector's hash policies (A42).
    const hash = args.hash;
    if (typeof hash !== 'bigint') return MISSING_HASH;
    splitU64(hash, words);
    return this.walk(this.ring.find(words[0]!, words[1]!), args);
  }

  /** A76: the request hash is the XXH64 of the configured header; a call without it gets a random hash. */
  private pickByHeader(args: PickArgs): PickResult {
    const value = requestHeaderValue(args.metadata, this.header);
    if (value === undefined) {
      const high = Math.floor(this.random() * 0x100000000);
      const low = Math.floor(this.random() * 0x100000000);
      return this.walkRandom(this.ring.find(high, low), args);
    }
    text.set(value);
    xxh64Into(text.bytes, text.length, words);
    return this.walk(this.ring.find(words[0]!, words[1]!), args);
  }

  /**
   * A61: from the hash's entry, the first READY endpoint takes the call; an IDLE one is asked to connect
   * and a CONNECTING one is waited for (the call queues); TRANSIENT_FAILURE ones are walked past. When every
   * endpoint has failed, the call gets the first entry's failure.
   */
  private walk(first: number, args: PickArgs): PickResult {
    const ring = this.ring;
    const e = ring.endpointAt(first);
    const slot = this.endpoints.at(e);
    const state = slot.state;
    if (state === STATE_READY) return slot.picker.pick(args);
    if (state === STATE_CONNECTING) return QUEUE;
    if (state === STATE_IDLE) {
      this.connect(e);
      return QUEUE;
    }
    return this.walkPastFailures(first, args);
  }

  /** The rest of the A61 walk, once the first entry's endpoint is in TRANSIENT_FAILURE. */
  private walkPastFailures(first: number, args: PickArgs): PickResult {
    const ring = this.ring;
    if (!this.allFailed) {
      const endpoints = this.endpoints;
      const n = ring.size;
      for (let i = 1, at = first + 1; i < n; i++, at++) {
        if (at === n) at = 0;
        const e = ring.endpointAt(at);
        const slot = endpoints.at(e);
        const state = slot.state;
        if (state === STATE_READY) return slot.picker.pick(args);
        if (state === STATE_IDLE) {
          this.connect(e);
          return QUEUE;
        }
        if (state === STATE_CONNECTING) return QUEUE;
      }
    }
    return this.endpoints.at(ring.endpointAt(first)).picker.pick(args);
  }

  /**
   * A76 random-hash walk: the first READY endpoint takes the call; on the way, at most one IDLE endpoint is
   * asked to connect, and none while some endpoint is already CONNECTING.
   */
  private walkRandom(first: number, args: PickArgs): PickResult {
    const ring = this.ring;
    const endpoints = this.endpoints;
    const n = ring.size;
    let requested = this.counts.CONNECTING > 0;
    for (let i = 0, at = first; i < n; i++) {
      const e = ring.endpointAt(at);
      const slot = endpoints.at(e);
      if (slot.state === STATE_READY) return slot.picker.pick(args);
      if (slot.state === STATE_IDLE && !requested) {
        this.connect(e);
        requested = true;
      }
      if (++at === n) at = 0;
    }
    if (requested) return QUEUE;
    return this.endpoints.at(ring.endpointAt(first)).picker.pick(args);
  }
}
