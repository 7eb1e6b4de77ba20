import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RE2JS } from 're2js';
import { type CallMetadata, Code } from '../../src/core/index.js';
import { RequestHasher } from '../../src/hash/index.js';
import { seededRandom } from '../../src/sim/index.js';
import { ClusterRefs } from '../../src/xds/resolver/cluster-refs.js';
import { routeTimeoutMs, XdsConfigSelector } from '../../src/xds/resolver/config-selector.js';
import type {
  XdsForwardingOptions,
  XdsHeaderMatcher,
  XdsPathMatcher,
  XdsRoute,
  XdsRouteAction,
  XdsRouteMatch,
} from '../../src/xds/resources/types.js';

const NO_FORWARDING_OPTIONS: XdsForwardingOptions = {
  hashPolicies: [],
  maxStreamDurationMs: undefined,
  grpcTimeoutHeaderMaxMs: undefined,
};

function route(match: Partial<XdsRouteMatch>, action: XdsRouteAction): XdsRoute {
  return {
    match: {
      path: { kind: 'prefix', prefix: '', caseSensitive: true },
      headers: [],
      runtimeFractionPerMillion: undefined,
      ...match,
    },
    action,
    filterOverrides: new Map(),
  };
}
const toCluster = (cluster: string, options: Partial<XdsForwardingOptions> = {}): XdsRouteAction => ({
  kind: 'cluster',
  cluster,
  ...NO_FORWARDING_OPTIONS,
  ...options,
});
const prefix = (p: string, caseSensitive = true): XdsPathMatcher => ({
  kind: 'prefix',
  prefix: p,
  caseSensitive,
});
const exactPath = (p: string, caseSensitive = true): XdsPathMatcher => ({
  kind: 'path',
  path: p,
  caseSensitive,
});

function metadata(headers: Record<string, string | string[]> = {}): CallMetadata {
  return {
    get: (key) => {
      const v = headers[key];
      return v === undefined ? [] : Array.isArray(v) ? v : [v];
    },
  };
}

function selector(routes: XdsRoute[], seed = 1, refs = new ClusterRefs(() => {})): XdsConfigSelector {
  return new XdsConfigSelector({ name: 'vh', domains: ['*'], routes, filterOverrides: new Map() }, refs, {
    channelId: 42n,
    random: seededRandom(seed),
  });
}

function clusterOf(
  s: XdsConfigSelector,
  path: string,
  headers: Record<string, string | string[]> = {},
): string {
  const r = s.select(path, metadata(headers));
  if (!r.ok) return `${Code[r.status.code]}`;
  r.release();
  return r.cluster;
}

describe('config selector: route matching (A28 "Picking", A31)', () => {
  test('A28: the first matching route wins — a prefix before an exact path takes the call', () => {
    const s = selector([
      route({ path: prefix('/pkg.Svc/') }, toCluster('a')),
      route({ path: exactPath('/pkg.Svc/M') }, toCluster('b')),
    ]);
    assert.equal(clusterOf(s, '/pkg.Svc/M'), 'a');
    assert.equal(clusterOf(s, '/other.Svc/M'), 'UNAVAILABLE', 'no route matched: UNAVAILABLE');
  });

  test('A28: path, prefix and safe_regex, with case_sensitive false for prefix and path', () => {
    const s = selector([
      route({ path: exactPath('/pkg.svc/get', false) }, toCluster('exact')),
      route({ path: prefix('/PKG.', true) }, toCluster('prefix')),
      route(
        { path: { kind: 'safe_regex', regex: RE2JS.compile('/pkg\\.[A-Z][a-z]+/.*') } },
        toCluster('regex'),
      ),
    ]);
    assert.equal(clusterOf(s, '/Pkg.Svc/Get'), 'exact');
    assert.equal(clusterOf(s, '/PKG.x/y'), 'prefix');
    assert.equal(clusterOf(s, '/pkg.Svc/Put'), 'regex');
    assert.equal(clusterOf(s, '/pkg.svc/Put'), 'UNAVAILABLE', 'safe_regex must match the whole path');
  });

  test('A28: header matchers — exact, prefix, suffix, contains, regex, range, present, invert; -bin headers are absent', () => {
    const h = (name: string, match: XdsHeaderMatcher['match'], invert = false): XdsHeaderMatcher => ({
      name,
      match,
      invert,
    });
    const str = (kind: 'exact' | 'prefix' | 'suffix' | 'contains', value: string, ignoreCase = false) =>
      ({ kind: 'string', matcher: { kind, value, ignoreCase } }) as const;
    const cases: [XdsHeaderMatcher, Record<string, string | string[]>, boolean][] = [
      [h('x', str('exact', 'v1')), { x: 'v1' }, true],
      [h('x', str('exact', 'V1', true)), { x: 'v1' }, true],
      [h('x', str('exact', 'v1')), { x: ['v1', 'v2'] }, false],
      [h('x', str('exact', 'v1,v2')), { x: ['v1', 'v2'] }, true],
      [h('x', str('prefix', 'ab')), { x: 'abc' }, true],
      [h('x', str('suffix', 'bc')), { x: 'abc' }, true],
      [h('x', str('contains', 'b')), { x: 'abc' }, true],
      [
        h('x', { kind: 'string', matcher: { kind: 'safe_regex', regex: RE2JS.compile('a.c') } }),
        { x: 'abc' },
        true,
      ],
      [
        h('x', { kind: 'string', matcher: { kind: 'safe_regex', regex: RE2JS.compile('a.c') } }),
        { x: 'abcd' },
        false,
      ],
      [h('x', { kind: 'range', start: -5n, end: 10n }), { x: '9' }, true],
      [h('x', { kind: 'range', start: -5n, end: 10n }), { x: '10' }, false],
      [h('x', { kind: 'range', start: -5n, end: 10n }), { x: 'nine' }, false],
      [h('x', { kind: 'present', present: true }), { x: '' }, true],
      [h('x', { kind: 'present', present: true }), {}, false],
      [h('x', { kind: 'present', present: false }), {}, true],
      [h('x', { kind: 'present', present: true }, true), {}, true],
      [h('x', str('exact', 'v1'), true), { x: 'v2' }, true],
      [h('x', str('exact', 'v1'), true), {}, false],
      [h('x-bin', { kind: 'present', present: true }), { 'x-bin': 'AAA=' }, false],
      [h('content-type', str('exact', 'application/grpc')), {}, true],
    ];
    for (const [matcher, headers, expected] of cases) {
      const s = selector([route({ headers: [matcher] }, toCluster('hit'))]);
      assert.equal(
        clusterOf(s, '/a/b', headers) === 'hit',
        expected,
        `${JSON.stringify(matcher, (_k, v) => (typeof v === 'bigint' ? `${v}` : v))} on ${JSON.stringify(headers)}`,
      );
    }
  });

  test('A28: runtime_fraction lets that share of calls consider the route (seeded random source)', () => {
    const s = selector(
      [route({ runtimeFractionPerMillion: 250_000 }, toCluster('canary')), route({}, toCluster('main'))],
      9,
    );
    let canary = 0;
    for (let i = 0; i < 10_000; i++) if (clusterOf(s, '/a/b') === 'canary') canary++;
    assert.ok(Math.abs(canary / 10_000 - 0.25) < 0.02, `canary got ${canary}`);
  });

  test('A28: weighted_clusters choose each cluster in proportion to its weight (70 / 30)', () => {
    const s = selector(
      [
        route(
          {},
          {
            kind: 'weighted_clusters',
            clusters: [
              { name: 'blue', weight: 70, filterOverrides: new Map() },
              { name: 'green', weight: 30, filterOverrides: new Map() },
            ],
            totalWeight: 100,
            ...NO_FORWARDING_OPTIONS,
          },
        ),
      ],
      3,
    );
    let blue = 0;
    for (let i = 0; i < 10_000; i++) if (clusterOf(s, '/a/b') === 'blue') blue++;
    assert.ok(Math.abs(blue / 10_000 - 0.7) < 0.02, `blue got ${blue}`);
  });

  test('A28: a route whose action is not forwarding fails its calls with UNAVAILABLE', () => {
    const s = selector([route({}, { kind: 'non_forwarding', action: 'non_forwarding_action' })]);
    const r = s.select('/a/b', metadata());
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.status.code, Code.UNAVAILABLE);
    assert.match(!r.ok ? r.status.details : '', /non-forwarding/);
  });
});

describe('config selector: request hash (A42 "XdsConfigSelector Changes")', () => {
  test('A42: the hash is what src/hash computes for the route hash_policy (header with regex rewrite, then channel id)', () => {
    const policies = [
      { type: 'header', headerName: 'session', regexRewrite: { pattern: '-v\\d+$', substitution: '' } },
      { type: 'filter_state', key: 'io.grpc.channel_id' },
    ] as const;
    const s = selector([route({}, toCluster('ring', { hashPolicies: policies }))]);
    const md = metadata({ session: 'user-7-v3' });
    const r = s.select('/a/b', md);
    assert.ok(r.ok);
    const expected = new RequestHasher(policies).hash(metadata({ session: 'user-7' }), 42n, () => 0.5);
    assert.equal(r.hash.value, expected, 'the rewritten header and the channel id, combined as A42 says');
    const again = s.select('/a/b', metadata({ session: 'user-7-v9' }));
    assert.ok(again.ok);
    assert.equal(again.hash.value, r.hash.value, 'the same key after rewriting hashes the same');
  });

  test('A42: a terminal policy that produced a hash stops the walk; a route with no usable policy gets random hashes', () => {
    const terminal = selector([
      route(
        {},
        toCluster('c', {
          hashPolicies: [
            { type: 'header', headerName: 'k', terminal: true },
            { type: 'filter_state', key: 'io.grpc.channel_id' },
          ],
        }),
      ),
    ]);
    const only = new RequestHasher([{ type: 'header', headerName: 'k' }]).hash(
      metadata({ k: 'v' }),
      42n,
      () => 0,
    );
    const r = terminal.select('/a/b', metadata({ k: 'v' }));
    assert.ok(r.ok);
    assert.equal(r.hash.value, only);
    const none = selector([route({}, toCluster('c'))], 5);
    const h1 = none.select('/a/b', metadata());
    const h2 = none.select('/a/b', metadata());
    assert.ok(h1.ok && h2.ok);
    assert.notEqual(h1.hash.value, h2.hash.value);
  });

  test('A42: a random hash is drawn only when something reads it, once per call: every later read (a re-pick, A42 "the call\'s hash will be the same when it is re-attempted") gives the same value', () => {
    let draws = 0;
    const source = seededRandom(3);
    const counting = () => {
      draws++;
      return source();
    };
    const refs = new ClusterRefs(() => {});
    const s = new XdsConfigSelector(
      { name: 'vh', domains: ['*'], routes: [route({}, toCluster('c'))], filterOverrides: new Map() },
      refs,
      { channelId: 42n, random: counting },
    );
    const r = s.select('/a/b', metadata());
    assert.ok(r.ok);
    assert.equal(draws, 0, 'routing a call to a cluster no ring_hash picks for draws no random hash');
    const first = r.hash.value;
    assert.equal(draws, 2, 'the first read draws 64 random bits (two 32-bit draws)');
    assert.equal(r.hash.value, first);
    assert.equal(draws, 2, 'later reads give the same hash without drawing again');
    const other = s.select('/a/b', metadata());
    assert.ok(other.ok);
    assert.notEqual(other.hash.value, first, 'each call has its own random hash');
  });

  test('A42: a channel-id policy hashes to the channel id when read, whatever the headers', () => {
    const s = selector([
      route({}, toCluster('c', { hashPolicies: [{ type: 'filter_state', key: 'io.grpc.channel_id' }] })),
    ]);
    const r = s.select('/a/b', metadata({ k: 'v' }));
    assert.ok(r.ok);
    assert.equal(r.hash.value, 42n);
  });

  test('A42: header policies hash the headers the call was routed with, not what is added to its metadata before the pick', () => {
    const headers: Record<string, string> = { k: 'v' };
    const s = selector([route({}, toCluster('c', { hashPolicies: [{ type: 'header', headerName: 'k' }] }))]);
    const r = s.select('/a/b', metadata(headers));
    assert.ok(r.ok);
    headers.k = 'changed by a filter after routing';
    const expected = new RequestHasher([{ type: 'header', headerName: 'k' }]).hash(
      metadata({ k: 'v' }),
      42n,
      () => 0,
    );
    assert.equal(r.hash.value, expected);
    const later: Record<string, string> = {};
    const absent = s.select('/a/b', metadata(later));
    assert.ok(absent.ok);
    later.k = 'v';
    assert.notEqual(
      absent.hash.value,
      expected,
      'no header when routed: a random hash, even if it appears later',
    );
  });
});

describe('config selector: timeouts (A31 "Supported Fields")', () => {
  test('A31 table: grpc_timeout_header_max wins over max_stream_duration, which falls back to the listener; 0 is no limit', () => {
    const action = (max?: number, header?: number): XdsRouteAction =>
      toCluster('c', { maxStreamDurationMs: max, grpcTimeoutHeaderMaxMs: header });
    assert.equal(routeTimeoutMs(action(), undefined), undefined);
    assert.equal(routeTimeoutMs(action(0), undefined), undefined);
    assert.equal(routeTimeoutMs(action(10_000), undefined), 10_000);
    assert.equal(routeTimeoutMs(action(10_000, 0), undefined), undefined);
    assert.equal(routeTimeoutMs(action(undefined, 10_000), undefined), 10_000);
    assert.equal(routeTimeoutMs(action(), 7_000), 7_000, "the HttpConnectionManager's max_stream_duration");
    assert.equal(routeTimeoutMs(action(3_000), 7_000), 3_000);
    const s = selector([route({}, action(2_500))]);
    const r = s.select('/a/b', metadata());
    assert.ok(r.ok);
    assert.equal(r.timeoutMs, 2_500);
  });
});

describe('config selector: cluster references (A31 two-step cluster removal)', () => {
  test('A31: a cluster dropped from the routes is released only when the old selector and its last call are done', () => {
    const unused: string[] = [];
    const refs = new ClusterRefs((c) => unused.push(c));
    const old = selector(
      [route({ path: prefix('/old') }, toCluster('retiring')), route({}, toCluster('kept'))],
      1,
      refs,
    );
    const call = old.select('/old/M', metadata());
    assert.ok(call.ok && call.cluster === 'retiring');
    const next = selector([route({}, toCluster('kept'))], 1, refs);
    old.release();
    assert.deepEqual(unused, [], 'a call still holds the retiring cluster');
    assert.ok(refs.has('retiring'));
    call.release();
    call.release();
    assert.deepEqual(unused, ['retiring']);
    assert.deepEqual(refs.names(), ['kept']);
    next.release();
    assert.deepEqual(unused, ['retiring', 'kept']);
  });
});
