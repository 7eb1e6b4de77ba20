import { Code, type FailPick, type PickArgs, type Picker, type PickResult, QUEUE } from '../../core/index.js';
// The hash files ring_hash needs, not hash/index.js: the request-hash evaluator there loads the RE2 engine,
// which picking never uses.
import { requestHeaderValue } from '../../hash/header-value.js';
import { splitU64 } from '../../hash/u64.js';
import { Utf8Buffer } from '../../hash/utf8.js';
import { xxh64Into } from '../../hash/xxh64.js';
import { type RingView, STATE_CONNECTING, STATE_IDLE, STATE_READY } from './ring-view.js';

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
 * The ring_hash picker (A61 "Ring Hash" picker, A76 request hash header), used in every state, TRANSIENT_FAILURE
 * included. It reads the ring and every endpoint's state and picker from the policy's {@link RingView}, which
 * the policy keeps current (A42 "Picker" allows this instead of a snapshot per state change), so a new picker
 * per report is one small object. A pick hashes (or reads) the request hash, finds its place on the ring and
 * walks from there.
 */
export class RingHashPicker implements Picker {
  constructor(private readonly view: RingView) {}

  pick(args: PickArgs): PickResult {
    // Kept small so the whole hot path (read the hash, find its entry, one READY endpoint) inlines.
    const view = this.view;
    if (view.header !== '') return this.pickByHeader(view, args);
    // Set by an upper layer: the xDS config selector's hash policies (A42).
    const hash = args.hash;
    if (typeof hash !== 'bigint') return MISSING_HASH;
    splitU64(hash, words);
    return this.walk(view, view.ring.find(words[0]!, words[1]!), args);
  }

  /** A76: the request hash is the XXH64 of the configured header; a call without it gets a random hash. */
  private pickByHeader(view: RingView, args: PickArgs): PickResult {
    const value = requestHeaderValue(args.metadata, view.header);
    if (value === undefined) {
      const high = Math.floor(view.random() * 0x100000000);
      const low = Math.floor(view.random() * 0x100000000);
      return this.walkRandom(view, view.ring.find(high, low), args);
    }
    text.set(value);
    xxh64Into(text.bytes, text.length, words);
    return this.walk(view, view.ring.find(words[0]!, words[1]!), args);
  }

  /**
   * A61: from the hash's entry, the first READY endpoint takes the call; an IDLE one is asked to connect
   * and a CONNECTING one is waited for (the call queues); TRANSIENT_FAILURE ones are walked past. When every
   * endpoint has failed, the call gets the first entry's failure.
   */
  private walk(view: RingView, first: number, args: PickArgs): PickResult {
    const e = view.ring.endpointAt(first);
    const state = view.states[e];
    if (state === STATE_READY) return view.pickers[e]!.pick(args);
    if (state === STATE_CONNECTING) return QUEUE;
    if (state === STATE_IDLE) {
      view.connect(e);
      return QUEUE;
    }
    return this.walkPastFailures(view, first, args);
  }

  /** The rest of the A61 walk, once the first entry's endpoint is in TRANSIENT_FAILURE. */
  private walkPastFailures(view: RingView, first: number, args: PickArgs): PickResult {
    const ring = view.ring;
    if (!view.allFailed) {
      const states = view.states;
      const n = ring.size;
      for (let i = 1, at = first + 1; i < n; i++, at++) {
        if (at === n) at = 0;
        const e = ring.endpointAt(at);
        const state = states[e];
        if (state === STATE_READY) return view.pickers[e]!.pick(args);
        if (state === STATE_IDLE) {
          view.connect(e);
          return QUEUE;
        }
        if (state === STATE_CONNECTING) return QUEUE;
      }
    }
    return view.pickers[ring.endpointAt(first)]!.pick(args);
  }

  /**
   * A76 random-hash walk: the first READY endpoint takes the call; on the way, at most one IDLE endpoint is
   * asked to connect, and none while some endpoint is already CONNECTING.
   */
  private walkRandom(view: RingView, first: number, args: PickArgs): PickResult {
    const ring = view.ring;
    const states = view.states;
    const n = ring.size;
    let requested = view.counts.CONNECTING > 0;
    for (let i = 0, at = first; i < n; i++) {
      const e = ring.endpointAt(at);
      const state = states[e];
      if (state === STATE_READY) return view.pickers[e]!.pick(args);
      if (state === STATE_IDLE && !requested) {
        view.connect(e);
        requested = true;
      }
      if (++at === n) at = 0;
    }
    if (requested) return QUEUE;
    return view.pickers[ring.endpointAt(first)]!.pick(args);
  }
}
