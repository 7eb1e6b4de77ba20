// The generated Envoy protos (src/protos/gen, @bufbuild/protobuf v2) and the xDS type registry: binary and
// canonical proto3 JSON round trips, including an Any resolved through the registry ("@type").
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create, equals, fromBinary, fromJson, toBinary, toJson } from '@bufbuild/protobuf';
import { anyPack, anyUnpack } from '@bufbuild/protobuf/wkt';
import { type Cluster, ClusterSchema } from '../../src/protos/gen/envoy/config/cluster/v3/cluster_pb.js';
import { RingHashSchema } from '../../src/protos/gen/envoy/extensions/load_balancing_policies/ring_hash/v3/ring_hash_pb.js';
import { DiscoveryResponseSchema } from '../../src/protos/gen/envoy/service/discovery/v3/discovery_pb.js';
import { xdsTypeRegistry } from '../../src/protos/type-registry.js';

const CLUSTER_TYPE_URL = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';

function sampleCluster(): Cluster {
  return fromJson(
    ClusterSchema,
    {
      name: 'backend',
      type: 'EDS',
      edsClusterConfig: { serviceName: 'backend-eds', edsConfig: { ads: {} } },
      connectTimeout: '1.500s',
      circuitBreakers: { thresholds: [{ maxRequests: 1024 }] },
      outlierDetection: { interval: '10s', successRateStdevFactor: 1900 },
      loadBalancingPolicy: {
        policies: [
          {
            typedExtensionConfig: {
              name: 'ring',
              typedConfig: {
                '@type': 'type.googleapis.com/envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash',
                hashFunction: 'XX_HASH',
                minimumRingSize: '2048',
              },
            },
          },
        ],
      },
    },
    { registry: xdsTypeRegistry },
  );
}

describe('generated Envoy protos', () => {
  test('Cluster: proto3 JSON in, typed fields, binary and JSON round trips', () => {
    const cluster = sampleCluster();
    assert.equal(cluster.name, 'backend');
    assert.equal(cluster.clusterDiscoveryType.case, 'type');
    assert.equal(cluster.connectTimeout?.seconds, 1n);
    assert.equal(cluster.connectTimeout?.nanos, 500_000_000);
    assert.equal(cluster.circuitBreakers?.thresholds[0]?.maxRequests, 1024);
    const typed = cluster.loadBalancingPolicy?.policies[0]?.typedExtensionConfig?.typedConfig;
    assert.ok(typed);
    const ring = anyUnpack(typed, RingHashSchema);
    assert.equal(ring?.minimumRingSize, 2048n);

    const bytes = toBinary(ClusterSchema, cluster);
    const back = fromBinary(ClusterSchema, bytes);
    assert.ok(equals(ClusterSchema, cluster, back));
    assert.deepEqual(toBinary(ClusterSchema, back), bytes);

    const json = toJson(ClusterSchema, cluster, { registry: xdsTypeRegistry });
    assert.equal((json as { connectTimeout: string }).connectTimeout, '1.500s');
    assert.ok(equals(ClusterSchema, cluster, fromJson(ClusterSchema, json, { registry: xdsTypeRegistry })));
  });

  test('DiscoveryResponse: a Cluster packed in an Any, through binary and proto3 JSON with "@type"', () => {
    const cluster = sampleCluster();
    const response = create(DiscoveryResponseSchema, {
      versionInfo: '7',
      typeUrl: CLUSTER_TYPE_URL,
      nonce: 'n1',
      resources: [anyPack(ClusterSchema, cluster)],
    });
    assert.equal(response.resources[0]?.typeUrl, CLUSTER_TYPE_URL);

    const decoded = fromBinary(DiscoveryResponseSchema, toBinary(DiscoveryResponseSchema, response));
    const any = decoded.resources[0];
    assert.ok(any);
    const unpacked = anyUnpack(any, xdsTypeRegistry);
    assert.equal(unpacked?.$typeName, 'envoy.config.cluster.v3.Cluster');
    assert.ok(equals(ClusterSchema, cluster, unpacked as Cluster));

    const json = toJson(DiscoveryResponseSchema, decoded, { registry: xdsTypeRegistry }) as {
      resources: { '@type': string; name: string }[];
    };
    assert.equal(json.resources[0]?.['@type'], CLUSTER_TYPE_URL);
    assert.equal(json.resources[0]?.name, 'backend');
    const again = fromJson(DiscoveryResponseSchema, json, { registry: xdsTypeRegistry });
    assert.ok(equals(DiscoveryResponseSchema, decoded, again));
  });

  test('the registry knows every covered type by its full name', () => {
    for (const name of [
      'envoy.service.discovery.v3.DiscoveryRequest',
      'envoy.service.discovery.v3.Resource',
      'envoy.config.listener.v3.Listener',
      'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
      'envoy.extensions.filters.http.router.v3.Router',
      'envoy.config.route.v3.RouteConfiguration',
      'envoy.extensions.clusters.aggregate.v3.ClusterConfig',
      'envoy.config.endpoint.v3.ClusterLoadAssignment',
      'envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin',
      'envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst',
      'envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest',
      'envoy.extensions.load_balancing_policies.wrr_locality.v3.WrrLocality',
      'envoy.extensions.load_balancing_policies.client_side_weighted_round_robin.v3.ClientSideWeightedRoundRobin',
      'xds.type.v3.TypedStruct',
      'udpa.type.v1.TypedStruct',
      'envoy.config.cluster.v3.OutlierDetection',
      'envoy.config.cluster.v3.CircuitBreakers',
      'google.rpc.Status',
      'xds.data.orca.v3.OrcaLoadReport',
      'envoy.extensions.filters.http.stateful_session.v3.StatefulSession',
      'envoy.extensions.http.stateful_session.cookie.v3.CookieBasedSessionState',
      'envoy.service.status.v3.ClientStatusResponse',
      'envoy.service.load_stats.v3.LoadStatsRequest',
      'google.protobuf.Struct',
    ]) {
      assert.ok(xdsTypeRegistry.getMessage(name), name);
    }
    for (const service of [
      'envoy.service.discovery.v3.AggregatedDiscoveryService',
      'xds.service.orca.v3.OpenRcaService',
      'envoy.service.status.v3.ClientStatusDiscoveryService',
      'envoy.service.load_stats.v3.LoadReportingService',
    ]) {
      assert.ok(xdsTypeRegistry.getService(service), service);
    }
  });
});

describe('the type-URL table (src/protos/type-urls.ts)', () => {
  test('each literal names the generated message it stands for, and the resource types use it', async () => {
    const urls = await import('../../src/protos/type-urls.js');
    const { ListenerSchema } = await import('../../src/protos/gen/envoy/config/listener/v3/listener_pb.js');
    const { RouteConfigurationSchema } = await import(
      '../../src/protos/gen/envoy/config/route/v3/route_pb.js'
    );
    const { ClusterLoadAssignmentSchema } = await import(
      '../../src/protos/gen/envoy/config/endpoint/v3/endpoint_pb.js'
    );
    const { ResourceSchema } = await import(
      '../../src/protos/gen/envoy/service/discovery/v3/discovery_pb.js'
    );
    const resources = await import('../../src/xds/resources/index.js');
    const table: [string, string][] = [
      [urls.LISTENER_TYPE_URL, ListenerSchema.typeName],
      [urls.ROUTE_CONFIGURATION_TYPE_URL, RouteConfigurationSchema.typeName],
      [urls.CLUSTER_TYPE_URL, ClusterSchema.typeName],
      [urls.CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, ClusterLoadAssignmentSchema.typeName],
      [urls.RESOURCE_WRAPPER_TYPE_URL, ResourceSchema.typeName],
    ];
    for (const [url, typeName] of table) {
      assert.equal(url, `type.googleapis.com/${typeName}`);
      assert.equal(urls.typeNameOf(url), typeName);
    }
    assert.equal(urls.shortTypeName(urls.CLUSTER_LOAD_ASSIGNMENT_TYPE_URL), 'ClusterLoadAssignment');
    assert.deepEqual(
      [
        resources.listenerResourceType.typeUrl,
        resources.routeConfigurationResourceType.typeUrl,
        resources.clusterResourceType.typeUrl,
        resources.endpointResourceType.typeUrl,
      ],
      table.slice(0, 4).map(([url]) => url),
    );
    // A27: only LDS and CDS responses carry the whole set.
    assert.deepEqual(
      table.slice(0, 4).map(([url]) => urls.allResourcesRequiredInSotW(url)),
      [true, false, true, false],
    );
  });
});
