import {
  Code,
  type ConnectivityState,
  type FailPick,
  type PickArgs,
  type Picker,
  type PickResult,
  QUEUE,
} from '../../core/index.js';
// The hash files ring_hash needs, not hash/index.js: the request-hash evaluator there loads the RE2 engine,
// which picking never uses.
import { requestHeaderValue } from '../../hash/header-value.js';
import { splitU64 } from '../../hash/u64.js';
import { Utf8Buffer } from '../../hash/utf8.js';
import { xxh64Into } from '../../hash/xxh64.js';
import type { ArraySnapshot } from '../snapshot-array.js';
import type { Ring } from './ring.js';

// Endpoint states as the picker stores them: one byte per endpoint.
export const STATE_IDLE = 0;
export const STATE_CONNECTING = 1;
export const STATE_READY = 2;
export const STATE_TRANSIENT_FAILURE = 3;

export function stateCode(state: ConnectivityState): number {
  switch (state) {
    case 'READY':
      return STATE_READY;
    case 'CONNECTING':
      return STATE_CONNECTING;
    case 'TRANSIENT_FAILURE':
      return STATE_TRANSIENT_FAILURE;
    default:
      return STATE_IDLE;
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
 * The ring_hash picker (A61 "Ring Hash" picker, A76 request hash header): a snapshot of the ring and of every
 * endpoint's state and picker taken when it was built (O(1) snapshots of the policy's per-endpoint arrays). Used in every state, TRANSIENT_FAILURE included.
 * A pick hashes (or reads) the request hash, finds its place on the ring and walks from there.
 */
export class RingHashPicker implements Picker {
  /**
   * @param states     per endpoint (ring endpoint index): a STATE_* code
   * @param pickers    per endpoint: its pick_first child's latest picker
   * @param header     A76 request hash header, or '' to take `PickArgs.hash`
   * @param anyConnecting whether some endpoint is CONNECTING (A76 random-hash walk)
   * @param allFailed  whether every endpoint with ring entries is in TRANSIENT_FAILURE
   * @param connect    asks the policy to connect an endpoint; it must not act before this pick returns
   * @param random     the policy's random source, for calls without the header
   */
  constructor(
    private readonly ring: Ring,
    private readonly states: ArraySnapshot<number>,
    private readonly pickers: ArraySnapshot<Picker>,
    private readonly header: string,
    private readonly anyConnecting: boolean,
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
    const state = this.states.at(e);
    if (state === STATE_READY) return this.pickers.at(e).pick(args);
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
      const states = this.states;
      const n = ring.size;
      for (let i = 1, at = first + 1; i < n; i++, at++) {
        if (at === n) at = 0;
        const e = ring.endpointAt(at);
        const state = states.at(e);
        if (state === STATE_READY) return this.pickers.at(e).pick(args);
        if (state === STATE_IDLE) {
          this.connect(e);
          return QUEUE;
        }
        if (state === STATE_CONNECTING) return QUEUE;
      }
    }
    return this.pickers.at(ring.endpointAt(first)).pick(args);
  }

  /**
   * A76 random-hash walk: the first READY endpoint takes the call; on the way, at most one IDLE endpoint is
   * asked to connect, and none while some endpoint is already CONNECTING.
   */
  private walkRandom(first: number, args: PickArgs): PickResult {
    const ring = this.ring;
    const states = this.states;
    const n = ring.size;
    let requested = this.anyConnecting;
    for (let i = 0, at = first; i < n; i++) {
      const e = ring.endpointAt(at);
      const state = states.at(e);
      if (state === STATE_READY) return this.pickers.at(e).pick(args);
      if (!requested && state === STATE_IDLE) {
        this.connect(e);
        requested = true;
      }
      if (++at === n) at = 0;
    }
    if (requested) return QUEUE;
    return this.pickers.at(ring.endpointAt(first)).pick(args);
  }
}
