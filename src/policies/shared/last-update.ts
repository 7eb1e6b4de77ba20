import {
  type ChannelArgs,
  type Endpoint,
  NO_CHANNEL_ARGS,
  sameChannelArgs,
  sameEndpointList,
} from '../../core/index.js';

/**
 * A policy's last accepted update (list, config, settings, note), kept to tell when the next one repeats it:
 * a resolver re-delivers the same list (DNS re-resolution, an xDS push of an unchanged resource), and a
 * policy whose state already follows its children has nothing to do for it. Telling costs O(n) comparisons
 * and allocates nothing ({@link sameEndpointList}); the list kept is the one the children were given, so it
 * keeps nothing alive that they do not. Configs are compared by value ({@link sameConfig}): a channel parses
 * its service config again with each resolution.
 */
export class LastUpdate<Config> {
  private endpoints: readonly Endpoint[] | null = null;
  private config: Config | null = null;
  private attributes: ChannelArgs = NO_CHANNEL_ARGS;
  private note: string | undefined = undefined;

  /** Whether an update of this list, config, settings and note repeats the last accepted one. */
  repeats(
    endpoints: readonly Endpoint[],
    config: Config,
    attributes: ChannelArgs,
    note: string | undefined,
  ): boolean {
    const last = this.endpoints;
    return (
      last !== null &&
      sameConfig(config, this.config) &&
      note === this.note &&
      sameChannelArgs(attributes, this.attributes) &&
      sameEndpointList(last, endpoints)
    );
  }

  /**
   * Keeps an update that was accepted; forgets the last one when `accepted` is false (a rejected update, e.g.
   * an empty list, is always applied again: it fails and asks for re-resolution each time). Returns `accepted`.
   */
  keep(
    accepted: boolean,
    endpoints: readonly Endpoint[],
    config: Config,
    attributes: ChannelArgs,
    note: string | undefined,
  ): boolean {
    if (!accepted) {
      this.forget();
      return false;
    }
    this.endpoints = endpoints;
    this.config = config;
    this.attributes = attributes;
    this.note = note;
    return true;
  }

  /** After anything but an accepted list (a resolver error): the next list is applied in full. */
  forget(): void {
    this.endpoints = null;
    this.config = null;
    this.attributes = NO_CHANNEL_ARGS;
    this.note = undefined;
  }
}

/** How deep {@link sameConfig} looks before it calls two configs different (configs are shallow trees). */
const MAX_CONFIG_DEPTH = 32;

/**
 * Whether two parsed configs are equal: the same value (`Object.is`), or arrays, Maps (in order) and plain
 * objects of equal values. Any other object (a policy factory, a class instance) is equal only to itself, so a config
 * this cannot see into counts as changed, and the update is applied in full.
 */
export function sameConfig(a: unknown, b: unknown, depth = 0): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (depth >= MAX_CONFIG_DEPTH) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameConfig(a[i], b[i], depth + 1)) return false;
    return true;
  }
  if (a instanceof Map) {
    if (!(b instanceof Map) || a.size !== b.size) return false;
    // In order: a policy reads its Map's order (weighted_target's targets take slots in it).
    const other = b.entries();
    for (const [key, value] of a) {
      const [otherKey, otherValue] = other.next().value as [unknown, unknown];
      if (!Object.is(key, otherKey) || !sameConfig(value, otherValue, depth + 1)) return false;
    }
    return true;
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const keys = Reflect.ownKeys(a);
  if (keys.length !== Reflect.ownKeys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key)) return false;
    if (
      !sameConfig(
        (a as Record<PropertyKey, unknown>)[key],
        (b as Record<PropertyKey, unknown>)[key],
        depth + 1,
      )
    ) {
      return false;
    }
  }
  return true;
}

function isPlainObject(x: object): boolean {
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}
