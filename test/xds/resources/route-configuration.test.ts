import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RouteConfigurationSchema } from '../../../src/protos/gen/envoy/config/route/v3/route_pb.js';
import {
  routeConfigurationResourceType,
  type XdsRoute,
  type XdsRouteConfiguration,
} from '../../../src/xds/resources/index.js';
import { accepted, decode, type Json, nacked } from './support.js';

const decodeRc = (json: Json) => decode(routeConfigurationResourceType, RouteConfigurationSchema, json);

function rc(routes: Json[], domains: string[] = ['echo.example']): Json {
  return { name: 'routes', virtualHosts: [{ name: 'vh', domains, routes }] };
}

const toC: Json = { cluster: 'c' };

/** The single route of a one-route configuration (or fails). */
function onlyRoute(config: XdsRouteConfiguration): XdsRoute {
  const routes = config.virtualHosts[0]!.routes;
  assert.equal(routes.length, 1);
  return routes[0]!;
}

function route(match: Json, action: Json = { route: toC }): XdsRoute {
  return onlyRoute(accepted(decodeRc(rc([{ match, ...action }]))));
}

describe('A28 "Route Matching": RouteMatch validation', () => {
  test('prefix and path matchers, case_sensitive defaulting to true', () => {
    assert.deepEqual(route({ prefix: '/echo.Echo/' }).match.path, {
      kind: 'prefix',
      prefix: '/echo.Echo/',
      caseSensitive: true,
    });
    assert.deepEqual(route({ path: '/echo.Echo/Say', caseSensitive: false }).match.path, {
      kind: 'path',
      path: '/echo.Echo/Say',
      caseSensitive: false,
    });
  });

  test('safe_regex is compiled with RE2 and must match the whole path', () => {
    const m = route({ safeRegex: { regex: '/echo\\.Echo/(Say|Shout)' } }).match.path;
    assert.equal(m.kind, 'safe_regex');
    if (m.kind === 'safe_regex') {
      assert.equal(m.regex.matches('/echo.Echo/Say'), true);
      assert.equal(m.regex.matches('/echo.Echo/Sayx'), false);
    }
  });

  test('header matchers of every kind, with invert_match; names lower-cased', () => {
    const headers = route({
      prefix: '',
      headers: [
        { name: 'X-Exact', exactMatch: 'a' },
        { name: 'x-re', safeRegexMatch: { regex: 'a+b' } },
        { name: 'x-range', rangeMatch: { start: '-5', end: '10' } },
        { name: 'x-present', presentMatch: true, invertMatch: true },
        { name: 'x-prefix', prefixMatch: 'p' },
        { name: 'x-suffix', suffixMatch: 's' },
        { name: 'x-contains', containsMatch: 'c' },
        { name: 'x-string', stringMatch: { exact: 'E', ignoreCase: true } },
      ],
    }).match.headers;
    assert.deepEqual(
      headers.map((h) => [h.name, h.invert]),
      [
        ['x-exact', false],
        ['x-re', false],
        ['x-range', false],
        ['x-present', true],
        ['x-prefix', false],
        ['x-suffix', false],
        ['x-contains', false],
        ['x-string', false],
      ],
    );
    assert.deepEqual(headers[0]!.match, {
      kind: 'string',
      matcher: { kind: 'exact', value: 'a', ignoreCase: false },
    });
    const re = headers[1]!.match;
    assert.ok(re.kind === 'string' && re.matcher.kind === 'safe_regex' && re.matcher.regex.matches('aab'));
    assert.deepEqual(headers[2]!.match, { kind: 'range', start: -5n, end: 10n });
    assert.deepEqual(headers[3]!.match, { kind: 'present', present: true });
    assert.deepEqual(headers[6]!.match, {
      kind: 'string',
      matcher: { kind: 'contains', value: 'c', ignoreCase: false },
    });
    assert.deepEqual(headers[7]!.match, {
      kind: 'string',
      matcher: { kind: 'exact', value: 'E', ignoreCase: true },
    });
  });

  test('runtime_fraction: only default_value counts, converted to parts per million', () => {
    const fraction = (defaultValue: Json) =>
      route({ prefix: '', runtimeFraction: { defaultValue, runtimeKey: 'ignored' } }).match
        .runtimeFractionPerMillion;
    assert.equal(fraction({ numerator: 25 }), 250_000);
    assert.equal(fraction({ numerator: 25, denominator: 'TEN_THOUSAND' }), 2_500);
    assert.equal(fraction({ numerator: 25, denominator: 'MILLION' }), 25);
    assert.equal(fraction({ numerator: 250 }), 1_000_000, 'capped at 100%');
    assert.equal(route({ prefix: '' }).match.runtimeFractionPerMillion, undefined);
  });

  test('a route with query_parameters is ignored; the grpc and tls_context matchers are ignored', () => {
    const config = accepted(
      decodeRc(
        rc([
          {
            match: { prefix: '', queryParameters: [{ name: 'q', presentMatch: true }] },
            route: { cluster: 'q' },
          },
          { match: { prefix: '', grpc: {}, tlsContext: { presented: true } }, route: toC },
        ]),
      ),
    );
    const r = onlyRoute(config);
    assert.equal(r.action.kind === 'cluster' && r.action.cluster, 'c');
  });
});

describe('A28 route actions, A42 hash_policy, A31 max_stream_duration', () => {
  test('cluster action with hash policies and max_stream_duration', () => {
    const r = route(
      { prefix: '' },
      {
        route: {
          cluster: 'c',
          hashPolicy: [
            {
              header: {
                headerName: 'x-user',
                regexRewrite: { pattern: { regex: '^(\\w+)-.*$' }, substitution: '\\1' },
              },
            },
            { filterState: { key: 'io.grpc.channel_id' }, terminal: true },
            { cookie: { name: 'session' } },
            { queryParameter: { name: 'q' } },
            { connectionProperties: { sourceIp: true } },
          ],
          maxStreamDuration: { maxStreamDuration: '5s', grpcTimeoutHeaderMax: '0.250s' },
        },
      },
    );
    assert.equal(r.action.kind, 'cluster');
    if (r.action.kind !== 'cluster') return;
    assert.equal(r.action.cluster, 'c');
    assert.deepEqual(r.action.hashPolicies, [
      {
        type: 'header',
        headerName: 'x-user',
        regexRewrite: { pattern: '^(\\w+)-.*$', substitution: '\\1' },
        terminal: false,
      },
      { type: 'filter_state', key: 'io.grpc.channel_id', terminal: true },
      { type: 'cookie', terminal: false },
      { type: 'query_parameter', terminal: false },
      { type: 'connection_properties', terminal: false },
    ]);
    assert.equal(r.action.maxStreamDurationMs, 5000);
    assert.equal(r.action.grpcTimeoutHeaderMaxMs, 250);
  });

  test('weighted_clusters: weights kept in order, zero weights left out, total_weight ignored', () => {
    const r = route(
      { prefix: '' },
      {
        route: {
          weightedClusters: {
            clusters: [
              { name: 'a', weight: 70 },
              { name: 'zero', weight: 0 },
              { name: 'b', weight: 30 },
            ],
            totalWeight: 1000,
          },
        },
      },
    );
    assert.equal(r.action.kind, 'weighted_clusters');
    if (r.action.kind !== 'weighted_clusters') return;
    assert.deepEqual(
      r.action.clusters.map((c) => [c.name, c.weight]),
      [
        ['a', 70],
        ['b', 30],
      ],
    );
    assert.equal(r.action.totalWeight, 100);
  });

  test('non-forwarding and other non-route actions are kept (RPCs that match them fail)', () => {
    const config = accepted(
      decodeRc(
        rc([
          { match: { prefix: '/a/' }, nonForwardingAction: {} },
          { match: { prefix: '/b/' }, redirect: { hostRedirect: 'x' } },
          { match: { prefix: '/c/' }, directResponse: { status: 200 } },
        ]),
      ),
    );
    assert.deepEqual(
      config.virtualHosts[0]!.routes.map((r) => r.action),
      [
        { kind: 'non_forwarding', action: 'non_forwarding_action' },
        { kind: 'non_forwarding', action: 'redirect' },
        { kind: 'non_forwarding', action: 'direct_response' },
      ],
    );
  });

  test('A28: a route whose cluster specifier is unsupported (cluster_header) is ignored', () => {
    const config = accepted(
      decodeRc(
        rc([
          { match: { prefix: '' }, route: { clusterHeader: 'x-cluster' } },
          { match: { prefix: '' }, route: toC },
        ]),
      ),
    );
    assert.equal(onlyRoute(config).action.kind, 'cluster');
  });

  test('virtual hosts keep their domains, and typed_per_filter_config is carried opaque', () => {
    const any = { '@type': 'type.googleapis.com/google.protobuf.Empty' };
    const config = accepted(
      decodeRc({
        name: 'routes',
        virtualHosts: [
          { name: 'a', domains: ['a.example', '*.a.example'], typedPerFilterConfig: { f: any } },
          {
            name: 'b',
            domains: ['*'],
            routes: [{ match: { prefix: '' }, route: toC, typedPerFilterConfig: { g: any } }],
          },
        ],
      }),
    );
    assert.deepEqual(
      config.virtualHosts.map((v) => v.domains),
      [['a.example', '*.a.example'], ['*']],
    );
    assert.equal(config.virtualHosts[0]!.filterOverrides.get('f')?.typeUrl, any['@type']);
    assert.equal(config.virtualHosts[1]!.routes[0]!.filterOverrides.get('g')?.typeUrl, any['@type']);
  });
});

describe('A28: RDS NACK reasons name the field', () => {
  const at = 'virtual_hosts[0].routes[0]';

  test('a virtual host without domains', () => {
    nacked(decodeRc(rc([], [])), 'virtual_hosts[0].domains', 'must not be empty');
  });

  test('a route without match, or without a path specifier, or with an unsupported one', () => {
    nacked(decodeRc(rc([{ route: toC }])), `${at}.match`, 'field not present');
    nacked(decodeRc(rc([{ match: {}, route: toC }])), `${at}.match.path_specifier`, 'field not present');
    nacked(
      decodeRc(rc([{ match: { pathSeparatedPrefix: '/a' }, route: toC }])),
      `${at}.match.path_separated_prefix`,
      'unsupported path specifier',
    );
  });

  test('an invalid RE2 regex in safe_regex and in a header matcher', () => {
    const result = decodeRc(rc([{ match: { safeRegex: { regex: '(' } }, route: toC }]));
    nacked(result, `${at}.match.safe_regex.regex`, 'invalid RE2 regular expression');
    assert.equal(result.name, 'routes');
    nacked(
      decodeRc(
        rc([
          {
            match: { prefix: '', headers: [{ name: 'h', safeRegexMatch: { regex: 'a(?=b)' } }] },
            route: toC,
          },
        ]),
      ),
      `${at}.match.headers[0].safe_regex_match.regex`,
      'invalid RE2',
    );
    nacked(
      decodeRc(
        rc([
          {
            match: { prefix: '', headers: [{ name: 'h', stringMatch: { safeRegex: { regex: '[' } } }] },
            route: toC,
          },
        ]),
      ),
      `${at}.match.headers[0].string_match.safe_regex.regex`,
    );
  });

  test('header matchers: no specifier, an empty name, a range that ends before it starts', () => {
    nacked(
      decodeRc(rc([{ match: { prefix: '', headers: [{ name: 'h' }] }, route: toC }])),
      `${at}.match.headers[0].header_match_specifier`,
    );
    nacked(
      decodeRc(rc([{ match: { prefix: '', headers: [{ exactMatch: 'a' }] }, route: toC }])),
      `${at}.match.headers[0].name`,
    );
    nacked(
      decodeRc(
        rc([
          {
            match: { prefix: '', headers: [{ name: 'h', rangeMatch: { start: '5', end: '1' } }] },
            route: toC,
          },
        ]),
      ),
      `${at}.match.headers[0].range_match.end`,
    );
  });

  test('a runtime_fraction with an unknown denominator', () => {
    nacked(
      decodeRc(
        rc([
          {
            match: { prefix: '', runtimeFraction: { defaultValue: { numerator: 1, denominator: 7 } } },
            route: toC,
          },
        ]),
      ),
      `${at}.match.runtime_fraction.default_value.denominator`,
    );
  });

  test('an empty cluster name', () => {
    nacked(decodeRc(rc([{ match: { prefix: '' }, route: { cluster: '' } }])), `${at}.route.cluster`);
  });

  test('A28 weighted_clusters: empty list, unnamed entry, weights adding up to 0 or past uint32', () => {
    const wc = (clusters: Json[]) =>
      decodeRc(rc([{ match: { prefix: '' }, route: { weightedClusters: { clusters } } }]));
    nacked(wc([]), `${at}.route.weighted_clusters.clusters`, 'must not be empty');
    nacked(wc([{ name: '', weight: 1 }]), `${at}.route.weighted_clusters.clusters[0].name`);
    nacked(wc([{ name: 'a', weight: 0 }]), `${at}.route.weighted_clusters.clusters`, 'add up to 0');
    nacked(
      wc([
        { name: 'a', weight: 4_000_000_000 },
        { name: 'b', weight: 400_000_000 },
      ]),
      `${at}.route.weighted_clusters.clusters[1].weight`,
      'more than 4294967295',
    );
  });

  test('A42 hash_policy: a header policy without a name, or with an invalid regex_rewrite', () => {
    const hp = (policy: Json) =>
      decodeRc(rc([{ match: { prefix: '' }, route: { cluster: 'c', hashPolicy: [policy] } }]));
    nacked(hp({ header: {} }), `${at}.route.hash_policy[0].header.header_name`);
    nacked(
      hp({ header: { headerName: 'h', regexRewrite: { pattern: { regex: '(' }, substitution: '' } } }),
      `${at}.route.hash_policy[0].header.regex_rewrite.pattern.regex`,
      'invalid RE2',
    );
    nacked(
      hp({ header: { headerName: 'h', regexRewrite: { pattern: { regex: 'a' }, substitution: '\\1' } } }),
      `${at}.route.hash_policy[0].header.regex_rewrite.substitution`,
      'capture group',
    );
  });

  test('A31: an invalid max_stream_duration', () => {
    nacked(
      decodeRc(
        rc([
          {
            match: { prefix: '' },
            route: { cluster: 'c', maxStreamDuration: { grpcTimeoutHeaderMax: '-2s' } },
          },
        ]),
      ),
      `${at}.route.max_stream_duration.grpc_timeout_header_max.seconds`,
    );
  });
});
