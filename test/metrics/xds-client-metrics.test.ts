// A78's XdsClient metrics (with A88's cache states), recorded by lbtree's real XdsClient over an in-memory ADS
// stream in virtual time, read back through the OpenTelemetry SDK.

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
import { unavailable } from '../../src/core/index.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { parseBootstrap } from '../../src/xds/client/bootstrap.js';
import { XdsClient } from '../../src/xds/client/xds-client.js';
import { XdsDependencyManager } from '../../src/xds/resolver/dependency-manager.js';
import { OtelMetrics, sumOf } from '../support/otel-metrics.js';
import { FakeAdsServers, RecordingWatcher } from '../xds/client/fake-ads.js';
import { REAL_RESOURCE_TYPES, realClientOverFakeAds } from '../xds/client/real-client-over-fake-ads.js';
import { thing, wholeThingType } from '../xds/client/test-resource-type.js';

const WHOLE = wholeThingType.typeUrl;

const TARGET = 'xds:///svc';
const SERVER = 'cp.example:443';
const XDS_METRICS = [
  'grpc.xds_client.connected',
  'grpc.xds_client.server_failure',
  'grpc.xds_client.resource_updates_valid',
  'grpc.xds_client.resource_updates_invalid',
  'grpc.xds_client.resources',
];
const CLUSTER_TYPE = 'envoy.config.cluster.v3.Cluster';

function setup() {
  const env = realClientOverFakeAds({ serverFeatures: ['xds_v3'] });
  const otel = new OtelMetrics();
  env.client.useMetricsRecorder(otel.recorder(TARGET, XDS_METRICS));
  new XdsDependencyManager({
    watcher: env.client,
    types: REAL_RESOURCE_TYPES,
    listenerName: 'svc',
    authority: 'svc',
    dns: { resolve: async () => [] },
    onUpdate: () => {},
  });
  env.connect();
  const serveAll = () => {
    env.respond(LISTENER_TYPE_URL, [listener('svc', { rds: 'routes' })]);
    env.respond(ROUTE_CONFIGURATION_TYPE_URL, [
      routeConfiguration('routes', [{ routes: [{ cluster: 'c1' }] }]),
    ]);
    env.respond(CLUSTER_TYPE_URL, [cluster({ name: 'c1' })]);
    env.respond(CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, [
      clusterLoadAssignment('c1', [{ zone: 'a', endpoints: ['10.0.0.1:81'] }]),
    ]);
  };
  return { ...env, otel, serveAll };
}

describe('XdsClient metrics (A78 "XdsClient")', () => {
  test('every valid resource received counts, per type, even unchanged; the cache gauge shows them acked under "#old"', async () => {
    const env = setup();
    let m = await env.otel.collect();
    assert.equal(
      sumOf(m.get('grpc.xds_client.resources'), {
        'grpc.xds.cache_state': 'requested',
        'grpc.xds.resource_type': 'envoy.config.listener.v3.Listener',
      }),
      1,
    );
    env.serveAll();
    env.respond(CLUSTER_TYPE_URL, [cluster({ name: 'c1' })]); // the same Cluster again
    m = await env.otel.collect();
    const valid = m.get('grpc.xds_client.resource_updates_valid')!;
    assert.equal(valid.unit, '{resource}');
    assert.equal(sumOf(valid, { 'grpc.xds.resource_type': CLUSTER_TYPE }), 2);
    assert.equal(sumOf(valid, { 'grpc.xds.resource_type': 'envoy.config.listener.v3.Listener' }), 1);
    assert.equal(sumOf(valid), 5);
    assert.deepEqual(valid.points[0]!.attributes, {
      'grpc.target': TARGET,
      'grpc.xds.server': SERVER,
      'grpc.xds.resource_type': 'envoy.config.listener.v3.Listener',
    });
    const resources = m.get('grpc.xds_client.resources')!;
    assert.equal(resources.unit, '{resource}');
    assert.equal(sumOf(resources, { 'grpc.xds.cache_state': 'acked', 'grpc.xds.authority': '#old' }), 4);
    assert.equal(sumOf(resources, { 'grpc.xds.cache_state': 'requested' }), 0);
    assert.equal(sumOf(m.get('grpc.xds_client.connected'), { 'grpc.xds.server': SERVER }), 1);
  });

  test('a NACKed Cluster counts as invalid; with a version cached its state is nacked_but_cached', async () => {
    const env = setup();
    env.serveAll();
    env.respond(CLUSTER_TYPE_URL, [cluster({ name: 'c1', fields: { lbPolicy: 'MAGLEV' } })]);
    const m = await env.otel.collect();
    assert.equal(
      sumOf(m.get('grpc.xds_client.resource_updates_invalid'), { 'grpc.xds.resource_type': CLUSTER_TYPE }),
      1,
    );
    assert.equal(
      sumOf(m.get('grpc.xds_client.resource_updates_valid'), { 'grpc.xds.resource_type': CLUSTER_TYPE }),
      1,
    );
    assert.equal(
      sumOf(m.get('grpc.xds_client.resources'), {
        'grpc.xds.cache_state': 'nacked_but_cached',
        'grpc.xds.resource_type': CLUSTER_TYPE,
      }),
      1,
    );
  });

  test('A57: connected goes 1 → 0 when a stream fails before any response, and back to 1 at the next response; one server failure per fall', async () => {
    const env = setup();
    const connected = async () => sumOf((await env.otel.collect()).get('grpc.xds_client.connected'));
    const failures = async () => sumOf((await env.otel.collect()).get('grpc.xds_client.server_failure'));
    assert.equal(await connected(), 1, 'set to 1 when the stream is created');
    env.serveAll();
    // A stream that got responses ends: not a failure (A57), still connected.
    env.ads.stream.fail(unavailable('max connection age'));
    env.clock.runDue();
    assert.equal(await connected(), 1);
    assert.equal(await failures(), 0);
    // The next stream fails before any response: unhealthy.
    env.ads.stream.fail(unavailable('connection refused'));
    assert.equal(await connected(), 0);
    assert.equal(await failures(), 1);
    // Another failure while unhealthy is not another fall.
    env.clock.advance(60_000);
    env.ads.stream.fail(unavailable('connection refused'));
    assert.equal(await failures(), 1);
    env.clock.advance(60_000);
    env.ads.stream.connect();
    assert.equal(await connected(), 0, 'a connected transport without a response is not yet healthy');
    env.respond(LISTENER_TYPE_URL, [listener('svc', { rds: 'routes' })]);
    assert.equal(await connected(), 1);
    const m = await env.otel.collect();
    assert.equal(m.get('grpc.xds_client.server_failure')!.unit, '{failure}');
    assert.equal(m.get('grpc.xds_client.connected')!.unit, '{bool}');
    assert.deepEqual(m.get('grpc.xds_client.server_failure')!.points[0]!.attributes, {
      'grpc.target': TARGET,
      'grpc.xds.server': SERVER,
    });
  });

  test('a closed client reports no gauges any more', async () => {
    const env = setup();
    env.serveAll();
    env.client.close();
    const m = await env.otel.collect();
    assert.equal(sumOf(m.get('grpc.xds_client.resources')), 0);
    assert.equal(sumOf(m.get('grpc.xds_client.connected')), 0);
  });
});

describe('XdsClient metrics with federation (A78 labels under A47: grpc.xds.authority, grpc.xds.server per stream)', () => {
  test('each server stream has its own connected and update counts; each authority its resources', async () => {
    const clock = new VirtualClock();
    const servers = new FakeAdsServers();
    const insecure = [{ type: 'insecure' }];
    const client = new XdsClient({
      bootstrap: parseBootstrap({
        xds_servers: [{ server_uri: 'top:1', channel_creds: insecure }],
        authorities: { 'a.example': { xds_servers: [{ server_uri: 'a:1', channel_creds: insecure }] } },
        node: { id: 'node-1' },
      }),
      transport: servers.factory,
      clock,
      federation: true,
    });
    const otel = new OtelMetrics();
    client.useMetricsRecorder(otel.recorder(TARGET, XDS_METRICS));
    const fed = 'xdstp://a.example/lbtree.test.WholeThing/x';
    client.watch(wholeThingType, 'plain', new RecordingWatcher());
    client.watch(wholeThingType, fed, new RecordingWatcher());
    clock.runDue();
    servers.stream('a:1').connect();
    servers.stream('a:1').respond(WHOLE, 'v1', [thing(WHOLE, fed, 1)]);
    servers.stream('top:1').connect();
    servers.stream('top:1').fail(unavailable('connection refused'));
    clock.runDue();
    const m = await otel.collect();
    const resources = m.get('grpc.xds_client.resources');
    assert.equal(sumOf(resources, { 'grpc.xds.authority': 'a.example', 'grpc.xds.cache_state': 'acked' }), 1);
    assert.equal(sumOf(resources, { 'grpc.xds.authority': '#old', 'grpc.xds.cache_state': 'requested' }), 1);
    assert.equal(sumOf(m.get('grpc.xds_client.connected'), { 'grpc.xds.server': 'a:1' }), 1);
    assert.equal(sumOf(m.get('grpc.xds_client.connected'), { 'grpc.xds.server': 'top:1' }), 0);
    assert.equal(sumOf(m.get('grpc.xds_client.server_failure'), { 'grpc.xds.server': 'top:1' }), 1);
    assert.equal(sumOf(m.get('grpc.xds_client.server_failure'), { 'grpc.xds.server': 'a:1' }), 0);
    assert.equal(sumOf(m.get('grpc.xds_client.resource_updates_valid'), { 'grpc.xds.server': 'a:1' }), 1);
    client.close();
  });
});
