// The resource types behind the real XdsClient over the in-memory ADS transport: a NACK's error_detail carries
// the field path the resource type produced (A27 / A88), and watchers get the validated values.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Code } from '../../../src/core/index.js';
import { ClusterSchema } from '../../../src/protos/gen/envoy/config/cluster/v3/cluster_pb.js';
import { RouteConfigurationSchema } from '../../../src/protos/gen/envoy/config/route/v3/route_pb.js';
import { VirtualClock } from '../../../src/sim/virtual-clock.js';
import { parseBootstrap } from '../../../src/xds/client/bootstrap.js';
import { XdsClient } from '../../../src/xds/client/xds-client.js';
import {
  clusterResourceType,
  routeConfigurationResourceType,
  type XdsCluster,
  type XdsRouteConfiguration,
} from '../../../src/xds/resources/index.js';
import { anyOf, FakeAdsServer, RecordingWatcher } from '../client/fake-ads.js';
import { encode, type Json } from './support.js';

function setup() {
  const clock = new VirtualClock();
  const ads = new FakeAdsServer();
  const client = new XdsClient({
    bootstrap: parseBootstrap({
      xds_servers: [{ server_uri: 'cp.example:443', channel_creds: [{ type: 'insecure' }] }],
      node: { id: 'node-1' },
    }),
    transport: ads.factory,
    clock,
  });
  return { clock, ads, client };
}

const CDS = clusterResourceType.typeUrl;
const RDS = routeConfigurationResourceType.typeUrl;

const cluster = (json: Json) => anyOf(CDS, encode(ClusterSchema, json));
const eds = (name: string, extra: Json = {}): Json => ({
  name,
  type: 'EDS',
  edsClusterConfig: { edsConfig: { ads: {} } },
  ...extra,
});

describe('resource types in the XdsClient (A27 ACK / NACK, A88 errors)', () => {
  test('a valid Cluster is ACKed and watched as an XdsCluster; an invalid one is NACKed naming the field', () => {
    const env = setup();
    const watcher = new RecordingWatcher<XdsCluster>((c) => `${c.name}:${c.discovery.kind}:${c.maxRequests}`);
    env.client.watch(clusterResourceType, 'backend', watcher);
    env.clock.runDue();
    env.ads.stream.connect();
    env.ads.stream.respond(CDS, 'v1', [cluster(eds('backend'))]);
    assert.deepEqual(watcher.take(), ['changed backend:eds:1024']);
    assert.equal(env.ads.stream.lastOf(CDS).versionInfo, 'v1');

    env.ads.stream.respond(CDS, 'v2', [cluster(eds('backend', { lrsServer: { ads: {} } }))]);
    const nack = env.ads.stream.lastOf(CDS);
    assert.equal(nack.versionInfo, 'v1', 'the NACK keeps the last good version');
    assert.equal(nack.errorDetail?.code, Code.INVALID_ARGUMENT);
    assert.match(nack.errorDetail?.message ?? '', /backend.*lrs_server: ConfigSource is not self/);
    // A88: the cached cluster keeps serving; the watcher hears an ambient error only.
    assert.deepEqual(watcher.take(), ['ambient INVALID_ARGUMENT']);
  });

  test('a RouteConfiguration that never validated is a resource error with the regex problem', () => {
    const env = setup();
    const watcher = new RecordingWatcher<XdsRouteConfiguration>((rc) => rc.name);
    env.client.watch(routeConfigurationResourceType, 'routes', watcher);
    env.clock.runDue();
    env.ads.stream.connect();
    const bad = encode(RouteConfigurationSchema, {
      name: 'routes',
      virtualHosts: [
        { domains: ['*'], routes: [{ match: { safeRegex: { regex: '[' } }, route: { cluster: 'c' } }] },
      ],
    });
    env.ads.stream.respond(RDS, 'v1', [anyOf(RDS, bad)]);
    assert.deepEqual(watcher.take(), ['error INVALID_ARGUMENT']);
    assert.match(watcher.statuses[0]!.details, /virtual_hosts\[0\]\.routes\[0\]\.match\.safe_regex\.regex/);
    assert.match(env.ads.stream.lastOf(RDS).errorDetail?.message ?? '', /invalid RE2 regular expression/);
  });
});
