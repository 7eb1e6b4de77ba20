import { ConfigReader } from '../../core/index.js';

export const PICK_FIRST = 'pick_first';

/** A62 config. */
export interface PickFirstConfig {
  readonly shuffleAddressList: boolean;
}

export function parsePickFirstConfig(json: unknown, path: string): PickFirstConfig {
  const reader = new ConfigReader(json, path);
  return { shuffleAddressList: reader.optionalBoolean('shuffleAddressList') ?? false };
}

/** Channel setting for the A61 Connection Attempt Delay, in ms (C-core's name for the same knob). */
export const CONNECTION_ATTEMPT_DELAY_ARG = 'grpc.happy_eyeballs_connection_attempt_delay_ms';
export const DEFAULT_CONNECTION_ATTEMPT_DELAY_MS = 250;
/** RFC 8305 section 5 bounds that A61 requires the setting to be clamped to. */
export const MIN_CONNECTION_ATTEMPT_DELAY_MS = 100;
export const MAX_CONNECTION_ATTEMPT_DELAY_MS = 2000;

/**
 * A61 generic health reporting: set by petiole parents on their pick_first children. A symbol, so neither a
 * service config nor a channel option (string keys only) can turn it on.
 */
export const HEALTH_WATCH_ARG: unique symbol = Symbol('lbtree.pick_first.enable_health_watch');
