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
  // A parent hands one pair (this update's settings, the last one's) to each of its thousands of petioles in
  // a row, so the last answer is kept: settings objects are never changed once made (Readonly).
  if (a === lastA && b === lastB) return lastSame;
  const keysA = Reflect.ownKeys(a);
  let same = keysA.length === Reflect.ownKeys(b).length;
  for (let i = 0; same && i < keysA.length; i++) {
    const k = keysA[i]!;
    same = Object.hasOwn(b, k) && Object.is(a[k], b[k]);
  }
  lastA = a;
  lastB = b;
  lastSame = same;
  return same;
}
let lastA: ChannelArgs = NO_CHANNEL_ARGS;
let lastB: ChannelArgs = NO_CHANNEL_ARGS;
let lastSame = true;
