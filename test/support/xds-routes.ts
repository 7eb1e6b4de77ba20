import type { HashPolicy } from '../../src/hash/index.js';
import type { XdsRoute } from '../../src/xds/resources/types.js';

/** A route that sends every path to `cluster` (prefix ""), with the hash policies given and no timeouts. */
export function routeTo(cluster: string, hashPolicies: HashPolicy[] = []): XdsRoute {
  return {
    match: {
      path: { kind: 'prefix', prefix: '', caseSensitive: true },
      headers: [],
      runtimeFractionPerMillion: undefined,
    },
    action: {
      kind: 'cluster',
      cluster,
      hashPolicies,
      maxStreamDurationMs: undefined,
      grpcTimeoutHeaderMaxMs: undefined,
    },
    filterOverrides: new Map(),
  };
}
