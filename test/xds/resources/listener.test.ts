import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ListenerSchema } from '../../../src/protos/gen/envoy/config/listener/v3/listener_pb.js';
import { listenerResourceType } from '../../../src/xds/resources/index.js';
import { resolveXdsOptions } from '../../../src/xds/resources/xds-options.js';
import { accepted, decode, HCM_TYPE, type Json, nacked, ROUTER, TYPE_PREFIX } from './support.js';

const ROUTER_FILTER: Json = { name: 'router', typedConfig: ROUTER };

function listener(hcm: Json, name = 'echo.example'): Json {
  return { name, apiListener: { apiListener: { '@type': HCM_TYPE, ...hcm } } };
}

function rdsHcm(extra: Json = {}): Json {
  return {
    rds: { configSource: { ads: {} }, routeConfigName: 'echo-routes' },
    httpFilters: [ROUTER_FILTER],
    ...extra,
  };
}

const decodeListener = (json: Json) => decode(listenerResourceType, ListenerSchema, json);

describe('A27 "Listener Proto": LDS resource validation', () => {
  test('an HttpConnectionManager with rds (ADS config source) names the RouteConfiguration to watch', () => {
    const result = decodeListener(listener(rdsHcm()));
    const l = accepted(result);
    assert.equal(result.ok && result.name, 'echo.example');
    assert.deepEqual(l.routeSource, { kind: 'rds', routeConfigName: 'echo-routes' });
    assert.equal(l.httpFilters.length, 1);
    assert.equal(l.httpFilters[0]!.name, 'router');
    assert.equal(l.httpFilters[0]!.typeName, 'envoy.extensions.filters.http.router.v3.Router');
    assert.equal(l.maxStreamDurationMs, undefined);
  });

  test('A47: an rds config source of `self` is accepted too', () => {
    const hcm = rdsHcm({ rds: { configSource: { self: {} }, routeConfigName: 'r' } });
    assert.deepEqual(accepted(decodeListener(listener(hcm))).routeSource, {
      kind: 'rds',
      routeConfigName: 'r',
    });
  });

  test('an inline route_config is validated and carried', () => {
    const hcm = {
      routeConfig: {
        name: 'inline',
        virtualHosts: [{ domains: ['*'], routes: [{ match: { prefix: '' }, route: { cluster: 'c' } }] }],
      },
      httpFilters: [ROUTER_FILTER],
    };
    const l = accepted(decodeListener(listener(hcm)));
    assert.equal(l.routeSource.kind, 'inline');
    if (l.routeSource.kind === 'inline') {
      assert.equal(l.routeSource.routeConfig.name, 'inline');
      assert.equal(l.routeSource.routeConfig.virtualHosts[0]!.routes[0]!.action.kind, 'cluster');
    }
  });

  test('A31: common_http_protocol_options.max_stream_duration is the listener default', () => {
    const hcm = rdsHcm({ commonHttpProtocolOptions: { maxStreamDuration: '2.5s' } });
    assert.equal(accepted(decodeListener(listener(hcm))).maxStreamDurationMs, 2500);
  });

  test('A39: an unknown filter marked is_optional is left out; the router stays last', () => {
    const hcm = rdsHcm({
      httpFilters: [
        {
          name: 'unknown',
          isOptional: true,
          typedConfig: { '@type': `${TYPE_PREFIX}google.protobuf.Empty` },
        },
        ROUTER_FILTER,
      ],
    });
    assert.deepEqual(
      accepted(decodeListener(listener(hcm))).httpFilters.map((f) => f.name),
      ['router'],
    );
  });

  test('A39: a router given as a TypedStruct is recognised by its inner type', () => {
    const wrapped = {
      name: 'router',
      typedConfig: {
        '@type': `${TYPE_PREFIX}xds.type.v3.TypedStruct`,
        typeUrl: `${TYPE_PREFIX}envoy.extensions.filters.http.router.v3.Router`,
      },
    };
    const l = accepted(decodeListener(listener(rdsHcm({ httpFilters: [wrapped] }))));
    assert.equal(l.httpFilters[0]!.typeName, 'envoy.extensions.filters.http.router.v3.Router');
  });
});

describe('A27 / A39: LDS NACK reasons name the field', () => {
  test('no api_listener (a server-side listener)', () => {
    const result = decodeListener({ name: 'l' });
    nacked(result, 'api_listener', 'field not present');
    assert.equal(result.name, 'l', 'the NACK is tied to the resource name (A88)');
  });

  test('api_listener holding something other than an HttpConnectionManager', () => {
    nacked(
      decodeListener({ name: 'l', apiListener: { apiListener: ROUTER } }),
      'api_listener.api_listener',
      'expected envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
    );
  });

  test('neither rds nor route_config', () => {
    nacked(
      decodeListener(listener({ httpFilters: [ROUTER_FILTER] })),
      'api_listener.api_listener.route_specifier',
      'field not present',
    );
  });

  test('scoped_routes', () => {
    nacked(
      decodeListener(listener({ scopedRoutes: { name: 's' }, httpFilters: [ROUTER_FILTER] })),
      'api_listener.api_listener.scoped_routes',
    );
  });

  test('rds without a config source, or with one that is not ads / self', () => {
    nacked(
      decodeListener(listener(rdsHcm({ rds: { routeConfigName: 'r' } }))),
      'api_listener.api_listener.rds.config_source',
      'field not present',
    );
    nacked(
      decodeListener(
        listener(rdsHcm({ rds: { configSource: { path: '/etc/r.yaml' }, routeConfigName: 'r' } })),
      ),
      'api_listener.api_listener.rds.config_source',
      'not ads or self',
    );
  });

  test('rds with an empty route_config_name', () => {
    nacked(
      decodeListener(listener(rdsHcm({ rds: { configSource: { ads: {} } } }))),
      'api_listener.api_listener.rds.route_config_name',
    );
  });

  test('no http_filters', () => {
    nacked(decodeListener(listener(rdsHcm({ httpFilters: [] }))), 'api_listener.api_listener.http_filters');
  });

  test('the router not last, and a last filter that is not the router', () => {
    const optionalUnknown = {
      name: 'x',
      isOptional: true,
      typedConfig: { '@type': `${TYPE_PREFIX}google.protobuf.Empty` },
    };
    nacked(
      decodeListener(
        listener(rdsHcm({ httpFilters: [ROUTER_FILTER, { ...ROUTER_FILTER, name: 'router2' }] })),
      ),
      'api_listener.api_listener.http_filters[0]',
      'must be the last filter',
    );
    nacked(
      decodeListener(listener(rdsHcm({ httpFilters: [optionalUnknown] }))),
      'api_listener.api_listener.http_filters',
      'the router filter',
    );
    // Optional filters that are left out do not count: the router is still the last filter kept.
    accepted(decodeListener(listener(rdsHcm({ httpFilters: [ROUTER_FILTER, optionalUnknown] }))));
  });

  test('an unknown filter type that is not optional', () => {
    const unknown = { name: 'fault', typedConfig: { '@type': `${TYPE_PREFIX}google.protobuf.Empty` } };
    nacked(
      decodeListener(listener(rdsHcm({ httpFilters: [unknown, ROUTER_FILTER] }))),
      'api_listener.api_listener.http_filters[0].typed_config',
      'unsupported HTTP filter type google.protobuf.Empty',
    );
  });

  test('a filter without typed_config, without a name, or with a duplicate name', () => {
    nacked(
      decodeListener(listener(rdsHcm({ httpFilters: [{ name: 'a' }, ROUTER_FILTER] }))),
      'api_listener.api_listener.http_filters[0].typed_config',
      'field not present',
    );
    nacked(
      decodeListener(listener(rdsHcm({ httpFilters: [{ typedConfig: ROUTER }] }))),
      'api_listener.api_listener.http_filters[0].name',
    );
    const optionalUnknown = {
      name: 'router',
      isOptional: true,
      typedConfig: { '@type': `${TYPE_PREFIX}google.protobuf.Empty` },
    };
    nacked(
      decodeListener(listener(rdsHcm({ httpFilters: [optionalUnknown, ROUTER_FILTER] }))),
      'api_listener.api_listener.http_filters[1].name',
      'duplicate filter name "router"',
    );
  });

  test('an invalid max_stream_duration', () => {
    nacked(
      decodeListener(listener(rdsHcm({ commonHttpProtocolOptions: { maxStreamDuration: '-1s' } }))),
      'api_listener.api_listener.common_http_protocol_options.max_stream_duration.seconds',
      'out of range',
    );
  });

  test('errors inside an inline route_config carry its path', () => {
    const hcm = { routeConfig: { virtualHosts: [{ domains: [] }] }, httpFilters: [ROUTER_FILTER] };
    nacked(decodeListener(listener(hcm)), 'api_listener.api_listener.route_config.virtual_hosts[0].domains');
  });

  test('bytes that do not decode are a NACK with no resource name', () => {
    const result = listenerResourceType.decode(new Uint8Array([0x0a, 0x05, 0x61]), resolveXdsOptions());
    assert.equal(result.ok, false);
    assert.equal(result.name, undefined);
    if (!result.ok) assert.match(result.error, /can't decode envoy\.config\.listener\.v3\.Listener/);
  });
});
