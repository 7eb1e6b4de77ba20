// The dependency manager over lbtree's real XdsClient, its real resource types and an in-memory ADS stream,
// in virtual time: what A74 promises with the protocol underneath (A27 SotW responses, A57 does-not-exist
// timer, A88 NACK while cached).

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
} from '../../src/control-plane/index.js';
import { Code, type StatusOr } from '../../src/core/index.js';
import { XdsDependencyManager } from '../../src/xds/resolver/dependency-manager.js';
import type { XdsConfig } from '../../src/xds/xds-config.js';
import { REAL_RESOURCE_TYPES, realClientOverFakeAds } from './client/real-client-over-fake-ads.js';

function setup() {
  const { clock, ads, client, connect, respond } = realClientOverFakeAds();
  const updates: StatusOr<XdsConfig>[] = [];
  const manager = new XdsDependencyManager({
    watcher: client,
    types: REAL_RESOURCE_TYPES,
    listenerName: 'svc',
    authority: 'svc',
    dns: { resolve: async () => [] },
    onUpdate: (u) => updates.push(u),
  });
  connect();
  return { clock, ads, client, manager, updates, respond };
}

const eds = (name: string, port: number) =>
  clusterLoadAssignment(name, [{ zone: 'a', endpoints: [`10.0.0.1:${port}`] }]);

describe('XdsDependencyManager over the xDS client (A74, A27, A57, A88)', () => {
  test('A74: the config appears once LDS, RDS, CDS and EDS have all been answered, with the validated resources', () => {
    const env = setup();
    env.respond(LISTENER_TYPE_URL, [listener('svc', { rds: 'routes' })]);
    env.respond(ROUTE_CONFIGURATION_TYPE_URL, [
      routeConfiguration('routes', [{ routes: [{ cluster: 'c1' }] }]),
    ]);
    env.respond(CLUSTER_TYPE_URL, [cluster({ name: 'c1', maxRequests: 7 })]);
    assert.equal(env.updates.length, 0);
    env.respond(CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, [eds('c1', 81)]);
    assert.equal(env.updates.length, 1);
    const config = env.updates[0]!;
    assert.ok(config.ok);
    const c1 = config.value.clusters.get('c1');
    assert.ok(c1?.ok && c1.value.children.kind === 'endpoints');
    assert.equal(c1.value.cluster.maxRequests, 7);
    assert.equal(c1.value.children.endpoints?.priorities[0]?.[0]?.endpoints.length, 1);
  });

  test('A57 + A88: a cluster the server never sends becomes a does-not-exist entry after 15 s; the others keep serving', () => {
    const env = setup();
    env.respond(LISTENER_TYPE_URL, [listener('svc', { rds: 'routes' })]);
    env.respond(ROUTE_CONFIGURATION_TYPE_URL, [
      routeConfiguration('routes', [{ routes: [{ prefix: '/a', cluster: 'c1' }, { cluster: 'ghost' }] }]),
    ]);
    env.respond(CLUSTER_TYPE_URL, [cluster({ name: 'c1' })]);
    env.respond(CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, [eds('c1', 81)]);
    assert.equal(env.updates.length, 0, 'ghost is not known yet: no torn config');
    env.clock.advance(15_000);
    const last = env.updates.at(-1);
    assert.ok(last?.ok);
    const ghost = last.value.clusters.get('ghost');
    assert.equal(ghost?.ok, false);
    assert.match(ghost?.ok === false ? ghost.status.details : '', /ghost/);
    assert.ok(last.value.clusters.get('c1')?.ok);
  });

  test('A88: an invalid cluster update is NACKed and the cached cluster keeps serving (an ambient error)', () => {
    const env = setup();
    env.respond(LISTENER_TYPE_URL, [listener('svc', { rds: 'routes' })]);
    env.respond(ROUTE_CONFIGURATION_TYPE_URL, [
      routeConfiguration('routes', [{ routes: [{ cluster: 'c1' }] }]),
    ]);
    env.respond(CLUSTER_TYPE_URL, [cluster({ name: 'c1', maxRequests: 5 })]);
    env.respond(CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, [eds('c1', 81)]);
    const before = env.updates.length;
    env.respond(CLUSTER_TYPE_URL, [cluster({ name: 'c1', fields: { lbPolicy: 'MAGLEV' } })]);
    const nack = env.ads.stream.lastOf(CLUSTER_TYPE_URL);
    assert.ok(nack.errorDetail, 'the client NACKed');
    assert.equal(nack.errorDetail?.code, Code.INVALID_ARGUMENT);
    assert.equal(env.updates.length, before, 'nothing changes for the channel');
    const c1 = (env.updates.at(-1) as { ok: true; value: XdsConfig }).value.clusters.get('c1');
    assert.ok(c1?.ok && c1.value.cluster.maxRequests === 5);
  });
});
