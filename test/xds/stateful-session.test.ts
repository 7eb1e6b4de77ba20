import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  listener,
  routeConfiguration,
  type SessionCookieSpec,
  statefulSessionFilter,
  statefulSessionPerRoute,
  type VirtualHostSpec,
} from '../../src/control-plane/index.js';
import type { CallMetadata } from '../../src/core/index.js';
import { ListenerSchema } from '../../src/protos/gen/envoy/config/listener/v3/listener_pb.js';
import { RouteConfigurationSchema } from '../../src/protos/gen/envoy/config/route/v3/route_pb.js';
import { seededRandom } from '../../src/sim/index.js';
import { ClusterRefs } from '../../src/xds/resolver/cluster-refs.js';
import { type RouteSelection, XdsConfigSelector } from '../../src/xds/resolver/config-selector.js';
import {
  cookiePathMatches,
  decodeSessionCookie,
  encodeSessionCookie,
  type StatefulSessionCall,
} from '../../src/xds/resolver/stateful-session.js';
import { listenerResourceType, routeConfigurationResourceType } from '../../src/xds/resources/index.js';
import type { XdsHttpFilter, XdsRouteConfiguration } from '../../src/xds/resources/types.js';
import { accepted, decode, type Json, nacked } from './resources/support.js';

const HCM_AT = 'api_listener.api_listener.http_filters';
const STATEFUL_SESSION_TYPE_URL =
  'type.googleapis.com/envoy.extensions.filters.http.stateful_session.v3.StatefulSession';
const json = (value: unknown): Json => value as Json;

function decodeListener(filters: readonly unknown[], options: { overrideHost?: boolean } = {}) {
  const l = listener('svc', { rds: 'routes' }, { httpFilters: filters as Record<string, unknown>[] });
  const { '@type': _, ...body } = l;
  return decode(listenerResourceType, ListenerSchema, json(body), options);
}

function decodeRoutes(virtualHosts: readonly VirtualHostSpec[]) {
  const { '@type': _, ...body } = routeConfiguration('routes', virtualHosts);
  return decode(routeConfigurationResourceType, RouteConfigurationSchema, json(body));
}

function filtersOf(cookie: SessionCookieSpec): readonly XdsHttpFilter[] {
  return accepted(decodeListener([statefulSessionFilter(cookie, 'session')])).httpFilters;
}

function metadata(headers: Record<string, string | string[]> = {}): CallMetadata {
  return {
    get: (key) => {
      const v = headers[key];
      return v === undefined ? [] : Array.isArray(v) ? v : [v];
    },
  };
}

function selectorFor(rc: XdsRouteConfiguration, filters: readonly XdsHttpFilter[]): XdsConfigSelector {
  return new XdsConfigSelector(rc.virtualHosts[0]!, new ClusterRefs(() => {}), {
    channelId: 1n,
    random: seededRandom(7),
    httpFilters: filters,
  });
}

function session(selection: RouteSelection): StatefulSessionCall | undefined {
  assert.ok(selection.ok);
  return selection.session;
}

const cookieOf = (list: string, cluster: string) => `sticky=${encodeSessionCookie(list, cluster)}`;

describe('A55 "Listener and Route Configuration through xDS": the stateful_session filter', () => {
  test('LDS: the cookie name, path and ttl are read from CookieBasedSessionState', () => {
    const [session, router] = filtersOf({ name: 'sticky', path: '/pkg.Svc', ttlSeconds: 120 });
    assert.deepEqual(session!.statefulSession, {
      cookie: { name: 'sticky', path: '/pkg.Svc', ttlMs: 120_000 },
    });
    assert.equal(router!.statefulSession, undefined);
  });

  test('LDS NACKs: an empty cookie name, a session state that is not the cookie extension (paths named)', () => {
    nacked(
      decodeListener([statefulSessionFilter({ name: '' }, 's')]),
      `${HCM_AT}[0].typed_config.session_state.typed_config.cookie.name`,
      'must not be empty',
    );
    const filter = statefulSessionFilter({ name: 'x' }, 's') as { typedConfig: { sessionState: Json } };
    filter.typedConfig.sessionState = {
      name: 'header',
      typedConfig: { '@type': 'type.googleapis.com/google.protobuf.Empty' },
    };
    nacked(
      decodeListener([filter]),
      `${HCM_AT}[0].typed_config.session_state.typed_config`,
      'unsupported session state google.protobuf.Empty',
    );
  });

  test('LDS: a filter without session_state is accepted and does nothing', () => {
    const bare = { name: 's', typedConfig: { '@type': STATEFUL_SESSION_TYPE_URL } };
    assert.deepEqual(accepted(decodeListener([bare])).httpFilters[0]!.statefulSession, { cookie: undefined });
  });

  test('A55 switch off (GRPC_EXPERIMENTAL_XDS_ENABLE_OVERRIDE_HOST=false): the filter is unknown — NACK, or dropped when optional', () => {
    const filter = statefulSessionFilter({ name: 'x' }, 's');
    nacked(
      decodeListener([filter], { overrideHost: false }),
      `${HCM_AT}[0].typed_config`,
      'unsupported HTTP filter',
    );
    const optional = { ...filter, isOptional: true };
    assert.equal(accepted(decodeListener([optional], { overrideHost: false })).httpFilters.length, 1);
  });

  test('RDS: StatefulSessionPerRoute overrides are validated at every level (a bad one NACKs with its path)', () => {
    const rc = accepted(
      decodeRoutes([
        {
          typedPerFilterConfig: { session: statefulSessionPerRoute('disabled') },
          routes: [
            {
              cluster: 'a',
              typedPerFilterConfig: { session: statefulSessionPerRoute({ name: 'route-cookie' }) },
            },
          ],
        },
      ]),
    );
    assert.deepEqual(rc.virtualHosts[0]!.filterOverrides.get('session')?.statefulSession, { disabled: true });
    assert.deepEqual(rc.virtualHosts[0]!.routes[0]!.filterOverrides.get('session')?.statefulSession, {
      disabled: false,
      config: { cookie: { name: 'route-cookie', path: '', ttlMs: 0 } },
    });
    nacked(
      decodeRoutes([
        {
          routes: [
            {
              weightedClusters: [
                { name: 'a', weight: 1, typedPerFilterConfig: { s: statefulSessionPerRoute({ name: '' }) } },
              ],
            },
          ],
        },
      ]),
      'virtual_hosts[0].routes[0].route.weighted_clusters.clusters[0].typed_per_filter_config["s"].stateful_session.session_state.typed_config.cookie.name',
    );
  });

  test('RFC 6265 5.1.4 path-match, as A55 asks', () => {
    assert.ok(cookiePathMatches('', '/pkg.Svc/M'));
    assert.ok(cookiePathMatches('/pkg.Svc', '/pkg.Svc/M'));
    assert.ok(cookiePathMatches('/pkg.Svc/', '/pkg.Svc/M'));
    assert.ok(cookiePathMatches('/pkg.Svc/M', '/pkg.Svc/M'));
    assert.ok(!cookiePathMatches('/pkg.Svc', '/pkg.SvcX/M'));
    assert.ok(!cookiePathMatches('/other', '/pkg.Svc/M'));
  });

  test('A61 / A60 cookie format: base64("addr1,addr2;cluster"); invalid addresses are skipped', () => {
    const value = encodeSessionCookie('10.0.0.1:80,[::1]:80', 'c1');
    assert.equal(Buffer.from(value, 'base64').toString(), '10.0.0.1:80,[::1]:80;c1');
    assert.deepEqual(decodeSessionCookie(value), {
      addressList: '10.0.0.1:80,[::1]:80',
      addresses: ['10.0.0.1:80', '[::1]:80'],
      cluster: 'c1',
    });
    assert.deepEqual(decodeSessionCookie(encodeSessionCookie('nonsense,10.0.0.2:1', 'c'))?.addresses, [
      '10.0.0.2:1',
    ]);
    assert.equal(decodeSessionCookie('%%%'), undefined);
  });
});

describe('A55 / A60 StatefulSessionFilter processing in the config selector', () => {
  const filters = () => filtersOf({ name: 'sticky', path: '/pkg.Svc', ttlSeconds: 60 });
  const weighted = (): XdsRouteConfiguration =>
    accepted(
      decodeRoutes([
        {
          routes: [
            {
              prefix: '/pkg.Svc/',
              weightedClusters: [
                { name: 'blue', weight: 1 },
                { name: 'green', weight: 1 },
              ],
            },
          ],
        },
      ]),
    );

  test('no cookie: the session has no override and the response sets one for the endpoint used', () => {
    const s = session(selectorFor(weighted(), filters()).select('/pkg.Svc/M', metadata()));
    assert.ok(s);
    assert.deepEqual(s.cookieAddresses, []);
    assert.equal(s.setCookieHeader(), undefined, 'nothing to set before the pick reported an endpoint');
    s.setActualAddressList('10.0.0.1:80,[::1]:80');
    assert.equal(
      s.setCookieHeader(),
      `sticky=${encodeSessionCookie('10.0.0.1:80,[::1]:80', s.cluster)}; HttpOnly; Path=/pkg.Svc; Max-Age=60`,
    );
  });

  test("A60: the cookie's cluster wins when the route has it; the same endpoint and cluster set no new cookie", () => {
    const selector = selectorFor(weighted(), filters());
    for (const cluster of ['blue', 'green']) {
      for (let i = 0; i < 20; i++) {
        const selection = selector.select(
          '/pkg.Svc/M',
          metadata({ cookie: `a=b; ${cookieOf('10.0.0.1:80', cluster)}` }),
        );
        const s = session(selection)!;
        assert.ok(selection.ok && selection.cluster === cluster && s.cluster === cluster);
        assert.deepEqual(s.cookieAddresses, ['10.0.0.1:80']);
        s.setActualAddressList('10.0.0.1:80');
        assert.equal(s.setCookieHeader(), undefined);
        s.setActualAddressList('10.0.0.2:80');
        assert.match(s.setCookieHeader() ?? '', /^sticky=/, 'another endpoint: a new cookie');
      }
    }
  });

  test('A60: a cookie naming a cluster the route does not have is ignored for cluster choice and rewritten', () => {
    const s = session(
      selectorFor(weighted(), filters()).select(
        '/pkg.Svc/M',
        metadata({ cookie: cookieOf('10.0.0.1:80', 'gone') }),
      ),
    )!;
    assert.ok(s.cluster === 'blue' || s.cluster === 'green');
    s.setActualAddressList('10.0.0.1:80');
    assert.equal(
      Buffer.from(/sticky=([^;]+)/.exec(s.setCookieHeader()!)![1]!, 'base64').toString(),
      `10.0.0.1:80;${s.cluster}`,
    );
  });

  test('A55: a call whose path is outside the cookie path passes through (no session)', () => {
    const rc = accepted(decodeRoutes([{ routes: [{ prefix: '', cluster: 'c' }] }]));
    assert.equal(session(selectorFor(rc, filters()).select('/other.Svc/M', metadata())), undefined);
    assert.ok(session(selectorFor(rc, filters()).select('/pkg.Svc/M', metadata())));
  });

  test('A39 override order: weighted cluster over route over virtual host over the listener', () => {
    const f = filtersOf({ name: 'listener-cookie' });
    const rc = accepted(
      decodeRoutes([
        {
          typedPerFilterConfig: { session: statefulSessionPerRoute({ name: 'vh-cookie' }) },
          routes: [
            {
              path: '/a.S/off',
              cluster: 'c',
              typedPerFilterConfig: { session: statefulSessionPerRoute('disabled') },
            },
            {
              path: '/a.S/wc',
              typedPerFilterConfig: { session: statefulSessionPerRoute({ name: 'route-cookie' }) },
              weightedClusters: [
                {
                  name: 'c',
                  weight: 1,
                  typedPerFilterConfig: { session: statefulSessionPerRoute({ name: 'wc-cookie' }) },
                },
              ],
            },
            {
              path: '/a.S/route',
              cluster: 'c',
              typedPerFilterConfig: { session: statefulSessionPerRoute({ name: 'route-cookie' }) },
            },
            { prefix: '', cluster: 'c' },
          ],
        },
      ]),
    );
    const selector = selectorFor(rc, f);
    const name = (path: string) => session(selector.select(path, metadata()))?.cookie.name;
    assert.equal(name('/a.S/off'), undefined);
    assert.equal(name('/a.S/wc'), 'wc-cookie');
    assert.equal(name('/a.S/route'), 'route-cookie');
    assert.equal(name('/a.S/other'), 'vh-cookie');
    const plain = accepted(decodeRoutes([{ routes: [{ prefix: '', cluster: 'c' }] }]));
    assert.equal(session(selectorFor(plain, f).select('/x.Y/Z', metadata()))?.cookie.name, 'listener-cookie');
  });
});
