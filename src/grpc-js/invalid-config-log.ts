import { experimental, logVerbosity } from '@grpc/grpc-js';

/**
 * How many distinct invalid configs are remembered as logged. grpc-js parses a channel's config at every
 * resolution (and @grpc/grpc-js-xds at every Cluster update), so the same error would otherwise be logged
 * again and again; a bound keeps a stream of ever-different configs from growing the set without end.
 */
const REMEMBERED_CONFIGS = 256;
const logged = new Set<string>();

/**
 * Logs `message` at grpc-js's ERROR level, which prints at the default GRPC_VERBOSITY, the first time the
 * `grpcName` config `json` is found invalid: a config that does not parse changes where traffic goes
 * (grpc-js moves on to the next `loadBalancingConfig` entry, or to pick_first), so it is not left to a trace.
 */
export function logInvalidConfigOnce(grpcName: string, json: unknown, message: string): void {
  const key = configKey(grpcName, json);
  if (key !== null) {
    if (logged.has(key)) return;
    if (logged.size >= REMEMBERED_CONFIGS) logged.delete(logged.values().next().value!);
    logged.add(key);
  }
  experimental.log(logVerbosity.ERROR, `lbtree: ${message}`);
}

/** The config as text; null for one that is not JSON (a cycle, a BigInt), which is logged every time. */
function configKey(grpcName: string, json: unknown): string | null {
  try {
    return `${grpcName} ${JSON.stringify(json)}`;
  } catch {
    return null;
  }
}
