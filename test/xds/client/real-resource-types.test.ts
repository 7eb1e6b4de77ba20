import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type DescMessage, fromJson, type JsonObject, toBinary } from '@bufbuild/protobuf';
import { ClusterSchema } from '../../../src/protos/gen/envoy/config/cluster/v3/cluster_pb.js';
import { ClusterLoadAssignmentSchema } from '../../../src/protos/gen/envoy/config/endpoint/v3/endpoint_pb.js';
import { ListenerSchema } from '../../../src/protos/gen/envoy/config/listener/v3/listener_pb.js';
import { RouteConfigurationSchema } from '../../../src/protos/gen/envoy/config/route/v3/route_pb.js';
import { xdsTypeRegistry } from '../../../src/protos/type-registry.js';
import { VirtualClock } from '../../../src/sim/virtual-clock.js';
import { parseBootstrap } from '../../../src/xds/client/bootstrap.js';
import { XdsClient } from '../../../src/xds/client/xds-client.js';
import {
  clusterResourceType,
  endpointResourceType,
  listenerResourceType,
  routeConfigurationResourceType,
  type XdsCluster,
  type XdsListener,
} from '../../../src/xds/resources/index.js';
import { anyOf, FakeAdsServer, RecordingWatcher } from './fake-ads.js';

function encode(schema: DescMessage, typeUrl: string, json: JsonObject) {
  return anyOf(typeUrl, toBinary(schema, fromJson(schema, json, { registry: xdsTypeRegistry })));
}

const LDS = listenerResourceType.typeUrl;
const RDS = routeConfigurationResourceType.typeUrl;
const CDS = clusterResourceType.typeUrl;
const EDS = endpointResourceType.typeUrl;

const listener = (name: string, routeConfigName: string) =>
  encode(ListenerSchema, LDS, {
    name,
    apiListener: {
      apiListener: {
        '@type':
          'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
        rds: { routeConfigName, configSource: { ads: {} } },
        httpFilters: [
          {
            name: 'router',
            typedConfig: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' },
          },
        ],
      },
    },
  });

const edsCluster = (name: string, extra: JsonObject = {}) =>
  encode(ClusterSchema, CDS, { name, type: 'EDS', edsClusterConfig: { edsConfig: { ads: {} } }, ...extra });

describe("the xDS client with lbtree's LDS / RDS / CDS / EDS types (A27 resources, A40 NACK details)", () => {
  test('a listener, its route configuration, a cluster and its endpoints arrive decoded; a bad cluster is NACKed by field', () => {
    const clock = new VirtualClock();
    const ads = new FakeAdsServer();
    const client = new XdsClient({
      bootstrap: parseBootstrap({
        xds_servers: [{ server_uri: 'cp:1', channel_creds: [{ type: 'insecure' }] }],
        node: { id: 'n' },
      }),
      transport: ads.factory,
      clock,
    });
    const lds = new RecordingWatcher((l: XdsListener) => JSON.stringify(l.routeSource));
    const cds = new RecordingWatcher((c: XdsCluster) => `${c.name} ${c.discovery.kind}`);
    const rds = new RecordingWatcher(() => 'routes');
    const eds = new RecordingWatcher(() => 'endpoints');
    client.watch(listenerResourceType, 'svc', lds);
    client.watch(routeConfigurationResourceType, 'route-1', rds);
    client.watch(clusterResourceType, 'c1', cds);
    client.watch(clusterResourceType, 'c2', cds);
    client.watch(endpointResourceType, 'c1', eds);
    clock.runDue();
    ads.stream.connect();

    ads.stream.respond(LDS, '1', [listener('svc', 'route-1')]);
    assert.equal(ads.stream.lastOf(LDS).errorDetail, undefined);
    assert.match(lds.take()[0]!, /route-1/);
    ads.stream.respond(RDS, '1', [
      encode(RouteConfigurationSchema, RDS, {
        name: 'route-1',
        virtualHosts: [
          { name: 'vh', domains: ['*'], routes: [{ match: { prefix: '' }, route: { cluster: 'c1' } }] },
        ],
      }),
    ]);
    assert.deepEqual(rds.take(), ['changed routes']);
    ads.stream.respond(CDS, '1', [
      edsCluster('c1'),
      edsCluster('c2', {
        lbPolicy: 'RING_HASH',
        ringHashLbConfig: { minimumRingSize: 2000, maximumRingSize: 10 },
      }),
      encode(ClusterSchema, CDS, { name: 'c3', type: 'STATIC' }),
    ]);
    const nack = ads.stream.lastOf(CDS);
    assert.equal(nack.versionInfo, '');
    assert.match(
      nack.errorDetail?.message ?? '',
      /Cluster "c2": ring_hash_lb_config.minimum_ring_size: 2000 is greater than maximum_ring_size \(10\); Cluster "c3": type: unsupported value STATIC/,
    );
    assert.deepEqual(cds.take(), ['changed c1 eds', 'error INVALID_ARGUMENT']);
    ads.stream.respond(EDS, '1', [
      encode(ClusterLoadAssignmentSchema, EDS, {
        clusterName: 'c1',
        endpoints: [
          {
            locality: { zone: 'z' },
            loadBalancingWeight: 1,
            lbEndpoints: [
              { endpoint: { address: { socketAddress: { address: '10.0.0.1', portValue: 80 } } } },
            ],
          },
        ],
      }),
    ]);
    assert.deepEqual(eds.take(), ['changed endpoints']);
    assert.deepEqual(
      client.dump().resources.map((r) => `${r.name} ${r.status}`),
      ['svc ACKED', 'route-1 ACKED', 'c1 ACKED', 'c2 NACKED', 'c1 ACKED'],
    );
  });
});
