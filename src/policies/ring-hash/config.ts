import { type ChannelArgs, ConfigError, ConfigReader } from '../../core/index.js';

export const RING_HASH = 'ring_hash_experimental';

export const DEFAULT_MIN_RING_SIZE = 1024;
export const DEFAULT_MAX_RING_SIZE = 4096;
/** A42: larger values are rejected, as Envoy does. */
export const MAX_RING_SIZE_LIMIT = 8_388_608;

/**
 * Channel setting (update attribute) for the client-side cap on ring size (A42 "LB Policy Config"): both
 * `minRingSize` and `maxRingSize` are clamped to it, so a control plane cannot make a client build huge
 * rings. Default 4096; raise it to let configs ask for more (up to 8,388,608). gRPC C-core calls the same
 * channel argument `grpc.lb.ring_hash.ring_size_cap`, and so does @grpc/grpc-js-xds.
 */
export const RING_SIZE_CAP_ARG = 'grpc.lb.ring_hash.ring_size_cap';
export const DEFAULT_RING_SIZE_CAP = 4096;

export interface RingHashConfig {
  readonly minRingSize: number;
  readonly maxRingSize: number;
  /** A76: the header whose value is the request hash key; '' when the hash comes from an upper layer (xDS). */
  readonly requestHashHeader: string;
}

/**
 * Parses a ring_hash_experimental config (A42 fields, A76 `requestHashHeader`), with JSON or proto field
 * names. Sizes are integers in [1, 8388608] with min <= max; the header must be a valid, non-binary header
 * name. Errors name the JSON path.
 */
export function parseRingHashConfig(json: unknown, path: string): RingHashConfig {
  const reader = new ConfigReader(json, path);
  const minRingSize = reader.optionalInteger('minRingSize', 1, MAX_RING_SIZE_LIMIT) ?? DEFAULT_MIN_RING_SIZE;
  const maxRingSize = reader.optionalInteger('maxRingSize', 1, MAX_RING_SIZE_LIMIT) ?? DEFAULT_MAX_RING_SIZE;
  if (minRingSize > maxRingSize) {
    const at = reader.field('maxRingSize')?.path ?? reader.field('minRingSize')!.path;
    throw new ConfigError(at, `maxRingSize (${maxRingSize}) is smaller than minRingSize (${minRingSize})`);
  }
  const header = reader.optionalString('requestHashHeader') ?? '';
  if (header !== '') {
    const at = reader.field('requestHashHeader')!.path;
    const problem = headerNameProblem(header);
    if (problem) throw new ConfigError(at, problem);
  }
  // gRPC metadata keys are case-insensitive and travel in lower case.
  return { minRingSize, maxRingSize, requestHashHeader: header.toLowerCase() };
}

/** Why `name` cannot be a request hash header (A76), or null when it can. */
function headerNameProblem(name: string): string | null {
  // gRPC's Header-Name (PROTOCOL-HTTP2.md "Custom-Metadata"): digits, letters, "_", "-", "." (keys are
  // case-insensitive, so upper case is accepted and lowered). Pseudo-headers (":path") are not metadata.
  if (!/^[0-9A-Za-z_.-]+$/.test(name)) {
    return `"${name}" is not a valid header name`;
  }
  if (name.toLowerCase().endsWith('-bin')) {
    return `"${name}" is a binary header; a request hash header must be a text header`;
  }
  return null;
}

/** The ring size bounds in force: the config's, clamped to the channel's cap (A42). */
export function effectiveRingSizes(
  config: RingHashConfig,
  attributes: ChannelArgs,
): { minRingSize: number; maxRingSize: number } {
  const raw = attributes[RING_SIZE_CAP_ARG];
  const cap =
    typeof raw === 'number' && Number.isFinite(raw)
      ? Math.min(Math.max(Math.floor(raw), 1), MAX_RING_SIZE_LIMIT)
      : DEFAULT_RING_SIZE_CAP;
  return { minRingSize: Math.min(config.minRingSize, cap), maxRingSize: Math.min(config.maxRingSize, cap) };
}
