// gRFC A44 "Workflow of xDS Retry": the config selector hands each call the retry policy of its route, else of
// its virtual host; a policy that retries no code supported by gRPC gives the call none.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type CallMetadata, Code } from '../../src/core/index.js';
import { seededRandom } from '../../src/sim/index.js';
import { ClusterRefs } from '../../src/xds/resolver/cluster-refs.js';
import { routeRetryPolicy, XdsConfigSelector } from '../../src/xds/resolver/config-selector.js';
import type {
  XdsRetryPolicy,
  XdsRoute,
  XdsRouteAction,
  XdsVirtualHost,
} from '../../src/xds/resources/types.js';

const NO_METADATA: CallMetadata = { get: () => [] };

const policy = (codes: Code[], maxAttempts = 2): XdsRetryPolicy => ({
  retryableStatusCodes: codes,
  maxAttempts,
  initialBackoffMs: 25,
  maxBackoffMs: 250,
});

function toCluster(cluster: string, retryPolicy?: XdsRetryPolicy): XdsRouteAction {
  return {
    kind: 'cluster',
    cluster,
    hashPolicies: [],
    maxStreamDurationMs: undefined,
    grpcTimeoutHeaderMaxMs: undefined,
    ...(retryPolicy !== undefined ? { retryPolicy } : {}),
  };
}

function route(prefix: string, action: XdsRouteAction): XdsRoute {
  return {
    match: {
      path: { kind: 'prefix', prefix, caseSensitive: true },
      headers: [],
      runtimeFractionPerMillion: undefined,
    },
    action,
    filterOverrides: new Map(),
  };
}

function virtualHost(routes: XdsRoute[], retryPolicy?: XdsRetryPolicy): XdsVirtualHost {
  return {
    name: 'vh',
    domains: ['*'],
    routes,
    filterOverrides: new Map(),
    ...(retryPolicy !== undefined ? { retryPolicy } : {}),
  };
}

/** The retry policy the selector hands a call to `path` (the call must be routed). */
function retryOf(vh: XdsVirtualHost, path: string): XdsRetryPolicy | undefined {
  const s = new XdsConfigSelector(vh, new ClusterRefs(() => {}), { channelId: 1n, random: seededRandom(1) });
  const r = s.select(path, NO_METADATA);
  assert.ok(r.ok, `${path} is routed`);
  r.release();
  s.release();
  return r.retryPolicy;
}

describe('A44 "Workflow of xDS Retry": which retry policy a call gets', () => {
  const routePolicy = policy([Code.UNAVAILABLE], 3);
  const vhostPolicy = policy([Code.INTERNAL], 4);

  test("the route's RetryPolicy is used when the route has one, else the virtual host's", () => {
    const vh = virtualHost(
      [route('/own/', toCluster('a', routePolicy)), route('', toCluster('b'))],
      vhostPolicy,
    );
    assert.equal(retryOf(vh, '/own/M'), routePolicy);
    assert.equal(retryOf(vh, '/other/M'), vhostPolicy);
  });

  test('neither has one: the call has no retry policy', () => {
    assert.equal(retryOf(virtualHost([route('', toCluster('a'))]), '/a/M'), undefined);
  });

  test("a policy whose retryableStatusCodes are empty gives no retry policy; on the route it still hides the virtual host's", () => {
    const none = policy([]);
    const vh = virtualHost([route('/own/', toCluster('a', none)), route('', toCluster('b'))], vhostPolicy);
    assert.equal(retryOf(vh, '/own/M'), undefined, "the route's policy (empty) wins over the virtual host's");
    assert.equal(retryOf(vh, '/other/M'), vhostPolicy);
    assert.equal(retryOf(virtualHost([route('', toCluster('a'))], none), '/a/M'), undefined);
  });

  test('weighted_clusters routes carry the policy for whichever cluster is chosen', () => {
    const vh = virtualHost([
      route('', {
        kind: 'weighted_clusters',
        clusters: [
          { name: 'a', weight: 1, filterOverrides: new Map() },
          { name: 'b', weight: 1, filterOverrides: new Map() },
        ],
        totalWeight: 2,
        hashPolicies: [],
        maxStreamDurationMs: undefined,
        grpcTimeoutHeaderMaxMs: undefined,
        retryPolicy: routePolicy,
      }),
    ]);
    assert.equal(retryOf(vh, '/a/M'), routePolicy);
  });

  test('a non-forwarding route has none (its calls fail before any attempt)', () => {
    const vh = virtualHost([], vhostPolicy);
    assert.equal(routeRetryPolicy({ kind: 'non_forwarding', action: 'redirect' }, vh), undefined);
  });
});
