// An RDS update whose only change is a typed_per_filter_config entry (A39 filter overrides) takes effect:
// the client notices the changed bytes, the dependency manager delivers the new route configuration, and the
// channel's next router applies the override. (grpc-js-xds 1.14.1 ACKs such an update and never applies it.)
// The real XdsClient, resource types, dependency manager and resolution over an in-memory ADS stream, in
// virtual time; the override is A55's StatefulSessionPerRoute, which the router applies per call.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE_URL,
  CLUSTER_TYPE_URL,
  cluster,
  clusterLoadAssignment,
  LISTENER_TYPE_URL,
  listener,
  ROUTE_CONFIGURATION_TYPE_URL,
  routeConfiguration,
  statefulSessionFilter,
  statefulSessionPerRoute,
} from '../../src/control-plane/index.js';
import { XdsResolution, type XdsResolutionResult } from '../../src/xds/resolver/xds-resolution.js';
import { REAL_RESOURCE_TYPES, realClientOverFakeAds } from './client/real-client-over-fake-ads.js';

function setup() {
  const { ads, client, connect, respond } = realClientOverFakeAds();
  const results: XdsResolutionResult[] = [];
  new XdsResolution({
    watcher: client,
    types: REAL_RESOURCE_TYPES,
    authority: 'svc',
    listenerName: 'svc',
    dns: { resolve: async () => [] },
    channelId: 1n,
    random: () => 0.5,
    defer: (fn) => fn(),
    onResult: (r) => {
      results.push(r);
      return true;
    },
  });
  connect();
  /** The session cookie the newest router gives a call (undefined: no session). */
  const cookie = () => {
    const selection = results.at(-1)!.router.select('/pkg.Svc/Method', { get: () => [] } as never);
    assert.ok(selection.ok);
    return selection.session?.cookie.name;
  };
  return { ads, respond, results, cookie };
}

const routes = (typedPerFilterConfig?: Record<string, unknown>) =>
  routeConfiguration('routes', [
    { routes: [{ cluster: 'c1', ...(typedPerFilterConfig ? { typedPerFilterConfig } : {}) }] },
  ]);

describe('A39: an RDS update that only changes typed_per_filter_config takes effect', () => {
  test('adding, changing and removing a route override each reach the next router (and each is ACKed)', () => {
    const env = setup();
    env.respond(LISTENER_TYPE_URL, [
      listener(
        'svc',
        { rds: 'routes' },
        { httpFilters: [statefulSessionFilter({ name: 'global' }, 'session')] },
      ),
    ]);
    env.respond(ROUTE_CONFIGURATION_TYPE_URL, [routes()]);
    env.respond(CLUSTER_TYPE_URL, [cluster({ name: 'c1' })]);
    env.respond(CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, [
      clusterLoadAssignment('c1', [{ zone: 'a', endpoints: ['10.0.0.1:80'] }]),
    ]);
    assert.equal(env.cookie(), 'global');

    env.respond(ROUTE_CONFIGURATION_TYPE_URL, [routes({ session: statefulSessionPerRoute('disabled') })]);
    assert.equal(env.ads.stream.lastOf(ROUTE_CONFIGURATION_TYPE_URL).errorDetail, undefined, 'ACKed');
    assert.equal(env.cookie(), undefined, 'the added override turned the session off');

    env.respond(ROUTE_CONFIGURATION_TYPE_URL, [
      routes({ session: statefulSessionPerRoute({ name: 'route-cookie' }) }),
    ]);
    assert.equal(env.cookie(), 'route-cookie', 'the changed entry gives its cookie');

    env.respond(ROUTE_CONFIGURATION_TYPE_URL, [routes()]);
    assert.equal(env.cookie(), 'global', 'the removed entry leaves the listener filter');
  });
});
