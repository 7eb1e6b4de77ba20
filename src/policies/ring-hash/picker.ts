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

/**
 * What the picker keeps of an endpoint, one slot per endpoint: the child's own picker while it is READY, a
 * shared marker while it is IDLE or CONNECTING (their pickers are never asked: the walk queues there), and
 * the child's picker wrapped in a {@link FailedEndpoint} while it is in TRANSIENT_FAILURE. One slot (not a
 * state array beside a picker array) means one O(1) snapshot per picker and one write per child report.
 */
class EndpointMark implements Picker {
  constructor(readonly state: ConnectivityState) {}
  pick(): PickResult {
    return QUEUE;
  }
}

export const IDLE_ENDPOINT: Picker = new EndpointMark('IDLE');
export const CONNECTING_ENDPOINT: Picker = new EndpointMark('CONNECTING');

/** A TRANSIENT_FAILURE endpoint: walked past, its picker used only when every endpoint has failed (A61). */
export class FailedEndpoint implements Picker {
  constructor(readonly picker: Picker) {}
  pick(args: PickArgs): PickResult {
    return this.picker.pick(args);
  }
}

/** The picker's slot for an endpoint in `state` whose child reported `picker`. */
export function endpointSlot(state: ConnectivityState, picker: Picker): Picker {
  switch (state) {
    case 'READY':
      return picker;
    case 'CONNECTING':
      return CONNECTING_ENDPOINT;
    case 'TRANSIENT_FAILURE':
      return new FailedEndpoint(picker);
    default:
      return IDLE_ENDPOINT;
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
 * endpoint's slot ({@link endpointSlot}) taken when it was built (an O(1) snapshot of the policy's
 * per-endpoint array). Used in every state, TRANSIENT_FAILURE included.
 * A pick hashes (or reads) the request hash, finds its place on the ring and walks from there.
 */
export class RingHashPicker implements Picker {
  /**
   * @param endpoints  per endpoint (ring endpoint index): its {@link endpointSlot}
   * @param header     A76 request hash header, or '' to take `PickArgs.hash`
   * @param counts     the policy's live count of endpoints per state: whether some endpoint is CONNECTING now
   *                   (A76 random-hash walk; A42 lets a picker read state the policy keeps up to date)
   * @param allFailed  whether every endpoint with ring entries is in TRANSIENT_FAILURE
   * @param connect    asks the policy to connect an endpoint; it must not act before this pick returns
   * @param random     the policy's random source, for calls without the header
   */
  constructor(
    private readonly ring: Ring,
    private readonly endpoints: ArraySnapshot<Picker>,
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
    if (slot === CONNECTING_ENDPOINT) return QUEUE;
    if (slot === IDLE_ENDPOINT) {
      this.connect(e);
      return QUEUE;
    }
    if (slot instanceof FailedEndpoint) return this.walkPastFailures(first, args);
    return slot.pick(args);
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
        if (slot === CONNECTING_ENDPOINT) return QUEUE;
        if (slot === IDLE_ENDPOINT) {
          this.connect(e);
          return QUEUE;
        }
        if (!(slot instanceof FailedEndpoint)) return slot.pick(args);
      }
    }
    return this.endpoints.at(ring.endpointAt(first)).pick(args);
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
      if (slot === IDLE_ENDPOINT) {
        if (!requested) {
          this.connect(e);
          requested = true;
        }
      } else if (slot !== CONNECTING_ENDPOINT && !(slot instanceof FailedEndpoint)) {
        return slot.pick(args);
      }
      if (++at === n) at = 0;
    }
    if (requested) return QUEUE;
    return this.endpoints.at(ring.endpointAt(first)).pick(args);
  }
}
