/**
 * Channel-level settings that travel with every update (grpc-js channel options, sim update attributes).
 * String keys are the documented public names; symbol keys are internal to lbtree and cannot be set by an
 * application through channel options or a service config.
 */
export type ChannelArgs = Readonly<Record<string | symbol, unknown>>;

export const NO_CHANNEL_ARGS: ChannelArgs = Object.freeze({});

/** Reads a numeric setting; a missing or non-finite value gives the default. */
export function numberArg(args: ChannelArgs, name: string | symbol, defaultValue: number): number {
  const value = args[name];
  return typeof value === 'number' && Number.isFinite(value) ? value : defaultValue;
}

/** Reads a boolean setting; accepts the strings "true"/"false" as environment variables and CLIs give them. */
export function booleanArg(args: ChannelArgs, name: string | symbol, defaultValue: boolean): boolean {
  const value = args[name];
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  return defaultValue;
}

export function clamp(value: number, min: number, max: number): number {
  return Math.min(Math.max(value, min), max);
}

/** Shallow equality of two settings objects (string and symbol keys). */
export function sameChannelArgs(a: ChannelArgs, b: ChannelArgs): boolean {
  if (a === b) return true;
  const keysA = Reflect.ownKeys(a);
  if (keysA.length !== Reflect.ownKeys(b).length) return false;
  for (const k of keysA) if (!Object.hasOwn(b, k) || !Object.is(a[k], b[k])) return false;
  return true;
}
