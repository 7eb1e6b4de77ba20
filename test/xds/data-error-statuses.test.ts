// A88 "Propagating Status to Data Plane RPCs" (with A54): whatever the xDS client's watcher status — NOT_FOUND
// for a missing or removed resource, INVALID_ARGUMENT for a NACK — what the dependency manager hands the
// channel is UNAVAILABLE with the reason (the resource's name and what happened). The real XdsClient, its
// resource types and an in-memory ADS stream in virtual time, with `fail_on_data_errors`, one case per resource
// type and kind of error.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE_URL,
  CLUSTER_TYPE_URL,
  cluster,
  clusterLoadAssignment,
  LISTENER_TYPE_URL,
  listener,
  type ResourceJson,
  ROUTE_CONFIGURATION_TYPE_URL,
  routeConfiguration,
} from '../../src/control-plane/index.js';
import { Code, type Status, type StatusOr } from '../../src/core/index.js';
import { XdsDependencyManager } from '../../src/xds/resolver/dependency-manager.js';
import type { XdsConfig } from '../../src/xds/xds-config.js';
import { REAL_RESOURCE_TYPES, realClientOverFakeAds } from './client/real-client-over-fake-ads.js';

function setup() {
  const { clock, client, connect, respond } = realClientOverFakeAds({
    serverFeatures: ['xds_v3', 'fail_on_data_errors'],
    dataErrorHandling: true,
  });
  const updates: StatusOr<XdsConfig>[] = [];
  new XdsDependencyManager({
    watcher: client,
    types: REAL_RESOURCE_TYPES,
    listenerName: 'svc',
    authority: 'svc',
    dns: { resolve: async () => [] },
    onUpdate: (u) => updates.push(u),
  });
  connect();
  const serveAll = () => {
    respond(LISTENER_TYPE_URL, [listener('svc', { rds: 'routes' })]);
    respond(ROUTE_CONFIGURATION_TYPE_URL, [routeConfiguration('routes', [{ routes: [{ cluster: 'c1' }] }])]);
    respond(CLUSTER_TYPE_URL, [cluster({ name: 'c1' })]);
    respond(CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, [
      clusterLoadAssignment('c1', [{ zone: 'a', endpoints: ['10.0.0.1:81'] }]),
    ]);
    assert.ok(updates.at(-1)?.ok, 'the whole config is served');
  };
  return { clock, updates, respond, serveAll };
}

/** The channel's last update is an error: UNAVAILABLE, whose details match `reason`. */
function assertUnavailable(update: StatusOr<XdsConfig> | undefined, reason: RegExp): void {
  assert.ok(update !== undefined && !update.ok, 'the channel got an error');
  assertStatus(update.status, reason);
}

function assertStatus(s: Status, reason: RegExp): void {
  assert.equal(Code[s.code], 'UNAVAILABLE', s.details);
  assert.match(s.details, reason);
}

/** The last config's entry for cluster c1 is an error. */
function clusterError(update: StatusOr<XdsConfig> | undefined): Status {
  assert.ok(update?.ok, 'the listener and routes still serve');
  const entry = update.value.clusters.get('c1');
  assert.ok(entry !== undefined && !entry.ok, 'c1 is an error entry');
  return entry.status;
}

// A bad resource of each type: lbtree's validators NACK them, naming the field.
const BAD_LISTENER: ResourceJson = { '@type': LISTENER_TYPE_URL, name: 'svc' };
const BAD_ROUTES = routeConfiguration('routes', [{ routes: [{ cluster: '' }] }]);
const BAD_CLUSTER = cluster({ name: 'c1', fields: { lbPolicy: 'MAGLEV' } });

describe('A88 "Propagating Status to Data Plane RPCs": xDS data errors reach the channel as UNAVAILABLE with the reason', () => {
  test('Listener missing (A27 does-not-exist timer: 15 s): UNAVAILABLE naming the listener, not NOT_FOUND', () => {
    const env = setup();
    env.clock.advance(14_999);
    assert.equal(env.updates.length, 0, 'nothing before 15 s');
    env.clock.advance(1);
    assertUnavailable(env.updates.at(-1), /Listener.*"svc" does not exist/);
  });

  test('Listener NACKed with nothing cached: UNAVAILABLE with the NACK reason, not INVALID_ARGUMENT', () => {
    const env = setup();
    env.respond(LISTENER_TYPE_URL, [BAD_LISTENER]);
    assertUnavailable(env.updates.at(-1), /NACK of Listener "svc".*api_listener/);
  });

  test('Listener removed under fail_on_data_errors (A88): UNAVAILABLE naming the removal, not NOT_FOUND', () => {
    const env = setup();
    env.serveAll();
    env.respond(LISTENER_TYPE_URL, []);
    assertUnavailable(env.updates.at(-1), /Listener "svc" was removed by the server/);
  });

  test('Listener NACKed while cached under fail_on_data_errors (A88): the listener is dropped, UNAVAILABLE', () => {
    const env = setup();
    env.serveAll();
    env.respond(LISTENER_TYPE_URL, [BAD_LISTENER]);
    assertUnavailable(env.updates.at(-1), /NACK of Listener "svc"/);
  });

  test('RouteConfiguration missing (15 s): UNAVAILABLE naming it', () => {
    const env = setup();
    env.respond(LISTENER_TYPE_URL, [listener('svc', { rds: 'routes' })]);
    env.clock.advance(15_000);
    assertUnavailable(env.updates.at(-1), /RouteConfiguration.*"routes" does not exist/);
  });

  test('RouteConfiguration NACKed, with nothing cached and while cached: UNAVAILABLE with the NACK reason', () => {
    const env = setup();
    env.respond(LISTENER_TYPE_URL, [listener('svc', { rds: 'routes' })]);
    env.respond(ROUTE_CONFIGURATION_TYPE_URL, [BAD_ROUTES]);
    assertUnavailable(env.updates.at(-1), /NACK of RouteConfiguration "routes"/);
    const cached = setup();
    cached.serveAll();
    cached.respond(ROUTE_CONFIGURATION_TYPE_URL, [BAD_ROUTES]);
    assertUnavailable(cached.updates.at(-1), /NACK of RouteConfiguration "routes"/);
  });

  test('RouteConfiguration left out of an RDS response: not a removal (A88: only LDS and CDS deletions are), it keeps serving', () => {
    const env = setup();
    env.serveAll();
    const count = env.updates.length;
    env.respond(ROUTE_CONFIGURATION_TYPE_URL, []);
    assert.equal(env.updates.length, count);
  });

  test("Cluster missing (15 s): the cluster's entry is UNAVAILABLE naming it", () => {
    const env = setup();
    env.respond(LISTENER_TYPE_URL, [listener('svc', { rds: 'routes' })]);
    env.respond(ROUTE_CONFIGURATION_TYPE_URL, [
      routeConfiguration('routes', [{ routes: [{ cluster: 'c1' }] }]),
    ]);
    env.clock.advance(15_000);
    assertStatus(clusterError(env.updates.at(-1)), /Cluster "c1" does not exist/);
  });

  test('Cluster NACKed with nothing cached, and removed or NACKed while cached (fail_on_data_errors): the entry is UNAVAILABLE with the reason', () => {
    const env = setup();
    env.respond(LISTENER_TYPE_URL, [listener('svc', { rds: 'routes' })]);
    env.respond(ROUTE_CONFIGURATION_TYPE_URL, [
      routeConfiguration('routes', [{ routes: [{ cluster: 'c1' }] }]),
    ]);
    env.respond(CLUSTER_TYPE_URL, [BAD_CLUSTER]);
    assertStatus(clusterError(env.updates.at(-1)), /NACK of Cluster "c1".*MAGLEV/);

    const removed = setup();
    removed.serveAll();
    removed.respond(CLUSTER_TYPE_URL, []);
    assertStatus(clusterError(removed.updates.at(-1)), /Cluster "c1" was removed by the server/);

    const nacked = setup();
    nacked.serveAll();
    nacked.respond(CLUSTER_TYPE_URL, [BAD_CLUSTER]);
    assertStatus(clusterError(nacked.updates.at(-1)), /NACK of Cluster "c1"/);
  });
});
