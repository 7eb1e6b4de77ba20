import { ConfigError } from './config-error.js';

/**
 * How deeply LB policy configs may nest (a policy's config holding a child policy list counts one level).
 * Real trees are shallow: lbtree's and grpc-js-xds's xDS trees use under 10 levels plus at most 16 levels of
 * A52 custom policies ("more than 16 levels of recursion are considered invalid"). Anything deeper is
 * rejected with a ConfigError instead of overflowing the stack (configs 800 levels deep did).
 */
export const MAX_LB_CONFIG_DEPTH = 32;

// Parsing is synchronous, so one counter serves every registry and adapter in the process; it counts the
// levels of the parse under way, whichever parser (lbtree's registry, the grpc-js adapter) entered them.
let depth = 0;

/** Runs `parse` one nesting level deeper; past the limit, throws a ConfigError at `path` instead. */
export function parseNested<T>(path: string, parse: () => T): T {
  if (depth >= MAX_LB_CONFIG_DEPTH) {
    throw new ConfigError(path, `LB policy configs nested more than ${MAX_LB_CONFIG_DEPTH} levels deep`);
  }
  depth++;
  try {
    return parse();
  } finally {
    depth--;
  }
}

/**
 * `e` as a ConfigError: a ConfigError as it is; anything else a policy's parser threw (a custom policy's
 * TypeError, a RangeError) becomes one at `path`, so no parser's failure escapes as something else.
 */
export function asConfigError(e: unknown, path: string, policyName: string): ConfigError {
  if (e instanceof ConfigError) return e;
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return new ConfigError(path, `the ${policyName} config parser failed: ${message}`);
}
