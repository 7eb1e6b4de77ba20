import { type CallMetadata, childPath } from '../core/index.js';
import { requestHeaderValue } from './header-value.js';
import { RegexRewrite } from './regex-rewrite.js';
import { joinU64, splitU64 } from './u64.js';
import { Utf8Buffer } from './utf8.js';
import { xxh64Into } from './xxh64.js';

/** The one filter_state key gRPC supports (A42): a per-channel random id, the same for every call. */
export const CHANNEL_ID_FILTER_STATE_KEY = 'io.grpc.channel_id';

/** A42 "Hash Policy": hash a request header, optionally rewritten by an RE2 regex first. */
export interface HeaderHashPolicy {
  readonly type: 'header';
  readonly headerName: string;
  readonly regexRewrite?: { readonly pattern: string; readonly substitution: string };
  readonly terminal?: boolean;
}

/** A42: only the key `io.grpc.channel_id` produces a hash; any other key produces nothing. */
export interface FilterStateHashPolicy {
  readonly type: 'filter_state';
  readonly key: string;
  readonly terminal?: boolean;
}

/** Policy types a gRPC client cannot evaluate (A42): they never produce a hash, but `terminal` still counts. */
export interface UnsupportedHashPolicy {
  readonly type: 'cookie' | 'connection_properties' | 'query_parameter' | 'unknown';
  readonly terminal?: boolean;
}

/** One entry of an xDS RouteAction's `hash_policy` list, as gRPC understands it. */
export type HashPolicy = HeaderHashPolicy | FilterStateHashPolicy | UnsupportedHashPolicy;

/** A policy prepared for evaluation. */
interface Compiled {
  readonly kind: 'header' | 'channel_id' | 'none';
  readonly terminal: boolean;
  readonly headerName: string;
  readonly rewrite: RegexRewrite | null;
}

/**
 * Computes request hashes from a list of hash policies (A42 "Hash Policy"). A pure evaluator: the caller
 * (an xDS config selector, or any layer that sets `PickArgs.hash`) supplies the call's metadata, the
 * channel's random id and the random source.
 */
export class RequestHasher {
  private readonly policies: readonly Compiled[];
  /** Whether a policy reads a request header: only then does the hash depend on the call's metadata. */
  readonly readsHeaders: boolean;
  private readonly words = new Uint32Array(2);
  private readonly text = new Utf8Buffer();

  /** Throws a ConfigError (at `path`) when a header policy's regex rewrite is invalid. */
  constructor(policies: readonly HashPolicy[], path = '$') {
    this.policies = policies.map((p, i) => compile(p, childPath(path, i)));
    this.readsHeaders = this.policies.some((p) => p.kind === 'header');
  }

  /**
   * The request hash: each policy that produces a value is combined as gRPC and Envoy do (the running hash
   * rotated left by 1, XOR the new value); a terminal policy stops the walk once a hash exists. When no
   * policy produced anything, a random hash, so the call lands on a random endpoint.
   */
  hash(metadata: CallMetadata, channelId: bigint, random: () => number): bigint {
    return this.fromPolicies(metadata, channelId) ?? randomRequestHash(random);
  }

  /**
   * One call's hash, computed when first read (see {@link CallRequestHash}). Header policies are evaluated
   * now, on the headers the call was routed with (grpc-js's filters add headers to the same metadata before
   * the pick); what depends on nothing but the channel and the random source waits for a reader.
   */
  forCall(metadata: CallMetadata, channelId: bigint, random: () => number): CallRequestHash {
    return new CallRequestHash(this, metadata, channelId, random);
  }

  /** The policies' combined hash, or undefined when none produced one. */
  fromPolicies(metadata: CallMetadata, channelId: bigint): bigint | undefined {
    let found = false;
    let high = 0;
    let low = 0;
    const words = this.words;
    for (const p of this.policies) {
      if (this.evaluate(p, metadata, channelId)) {
        if (found) {
          // rotl(hash, 1) ^ new
          const rotatedHigh = (high << 1) | (low >>> 31);
          low = ((low << 1) | (high >>> 31)) ^ words[1]!;
          high = rotatedHigh ^ words[0]!;
        } else {
          high = words[0]!;
          low = words[1]!;
          found = true;
        }
      }
      if (p.terminal && found) break;
    }
    return found ? joinU64(high >>> 0, low >>> 0) : undefined;
  }

  /** Writes the policy's hash to `this.words`; false when it produces none. */
  private evaluate(p: Compiled, metadata: CallMetadata, channelId: bigint): boolean {
    if (p.kind === 'channel_id') {
      // The id is already uniformly random: like gRPC Go, it is the hash itself.
      splitU64(channelId, this.words);
      return true;
    }
    if (p.kind !== 'header') return false;
    let value = requestHeaderValue(metadata, p.headerName);
    if (value === undefined) return false;
    if (p.rewrite) value = p.rewrite.apply(value);
    const text = this.text.set(value);
    xxh64Into(text.bytes, text.length, this.words);
    return true;
  }
}

function compile(p: HashPolicy, path: string): Compiled {
  const terminal = p.terminal ?? false;
  switch (p.type) {
    case 'header': {
      const headerName = p.headerName.toLowerCase();
      // A28/A42: binary headers are treated as absent.
      if (headerName.endsWith('-bin')) return { kind: 'none', terminal, headerName: '', rewrite: null };
      const rr = p.regexRewrite;
      const rewrite = rr
        ? new RegexRewrite(
            rr.pattern,
            rr.substitution,
            `${path}.regexRewrite.pattern`,
            `${path}.regexRewrite.substitution`,
          )
        : null;
      return { kind: 'header', terminal, headerName, rewrite };
    }
    case 'filter_state':
      return {
        kind: p.key === CHANNEL_ID_FILTER_STATE_KEY ? 'channel_id' : 'none',
        terminal,
        headerName: '',
        rewrite: null,
      };
    default:
      return { kind: 'none', terminal, headerName: '', rewrite: null };
  }
}

/** Metadata for a hasher that reads no header. */
const NO_HEADERS: CallMetadata = { get: () => [] };

/**
 * One call's request hash (A42), computed the first time something reads `value` — a ring_hash picker, or a
 * grpc-js policy handed it — and the same on every later read, so each pick of the call (a re-pick after a
 * new picker, a retry attempt) hashes the same (A42: "the call's hash will be the same when it is
 * re-attempted"). A call no hash-based policy picks for never pays for the random hash.
 */
export class CallRequestHash {
  private computed: bigint | undefined;
  /** The route's hasher when none of its policies reads a header (evaluated on first read), else null. */
  private readonly hasher: RequestHasher | null;

  /** Header policies are evaluated now, on `metadata`; what depends on nothing else waits for a reader. */
  constructor(
    hasher: RequestHasher,
    metadata: CallMetadata,
    private readonly channelId: bigint,
    private readonly random: () => number,
  ) {
    if (hasher.readsHeaders) {
      this.computed = hasher.fromPolicies(metadata, channelId);
      this.hasher = null;
    } else {
      this.computed = undefined;
      this.hasher = hasher;
    }
  }

  get value(): bigint {
    if (this.computed === undefined) {
      this.computed =
        this.hasher === null
          ? randomRequestHash(this.random)
          : this.hasher.hash(NO_HEADERS, this.channelId, this.random);
    }
    return this.computed;
  }
}

/** 64 uniformly random bits from a [0, 1) source (used for a call no policy could hash). */
export function randomRequestHash(random: () => number): bigint {
  return joinU64(Math.floor(random() * 0x100000000) >>> 0, Math.floor(random() * 0x100000000) >>> 0);
}

/** A new `io.grpc.channel_id` value: A42 asks for a uniformly distributed random number per channel. */
export function newChannelId(random: () => number): bigint {
  return randomRequestHash(random);
}
