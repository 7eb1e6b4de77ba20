import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fromJson, toBinary } from '@bufbuild/protobuf';
import { ClusterSchema } from '../../../src/protos/gen/envoy/config/cluster/v3/cluster_pb.js';
import { xdsTypeRegistry } from '../../../src/protos/type-registry.js';
import { clusterResourceType, DEFAULT_MAX_CONCURRENT_REQUESTS } from '../../../src/xds/resources/index.js';
import { resolveXdsOptions } from '../../../src/xds/resources/xds-options.js';
import { accepted, decode, type Json, nacked, TYPE_PREFIX } from './support.js';

const decodeCluster = (json: Json) => decode(clusterResourceType, ClusterSchema, json);

function eds(extra: Json = {}): Json {
  return { name: 'backend', type: 'EDS', edsClusterConfig: { edsConfig: { ads: {} } }, ...extra };
}

function logicalDns(socketAddress: Json, extra: Json = {}): Json {
  return {
    name: 'dns',
    type: 'LOGICAL_DNS',
    loadAssignment: { endpoints: [{ lbEndpoints: [{ endpoint: { address: { socketAddress } } }] }] },
    ...extra,
  };
}

const AGGREGATE = `${TYPE_PREFIX}envoy.extensions.clusters.aggregate.v3.ClusterConfig`;

function aggregate(clusters: string[]): Json {
  return {
    name: 'agg',
    clusterType: { name: 'envoy.clusters.aggregate', typedConfig: { '@type': AGGREGATE, clusters } },
  };
}

const WRR_RR = [{ xds_wrr_locality_experimental: { childPolicy: [{ round_robin: {} }] } }];

describe('A27 / A37: CDS cluster discovery types', () => {
  test('EDS: the EDS service name defaults to the cluster name; ROUND_ROBIN, 1024 requests, no outlier detection', () => {
    const result = decodeCluster(eds());
    const c = accepted(result);
    assert.equal(result.ok && result.name, 'backend');
    assert.deepEqual(c.discovery, { kind: 'eds', edsServiceName: 'backend' });
    assert.deepEqual(c.lbPolicy, WRR_RR);
    assert.equal(c.maxRequests, DEFAULT_MAX_CONCURRENT_REQUESTS);
    assert.equal(c.outlierDetection, undefined);
    assert.equal(c.lrsLoadReporting, false);
  });

  test('EDS: service_name when set; eds_config `self`; lrs_server `self`', () => {
    const c = accepted(
      decodeCluster(
        eds({ edsClusterConfig: { edsConfig: { self: {} }, serviceName: 'svc' }, lrsServer: { self: {} } }),
      ),
    );
    assert.deepEqual(c.discovery, { kind: 'eds', edsServiceName: 'svc' });
    assert.equal(c.lrsLoadReporting, true);
  });

  test('A47 "CDS Resource Validation": an xdstp: EDS cluster must name its EDS service; an old-style one need not', () => {
    const name = 'xdstp://auth.example/envoy.config.cluster.v3.Cluster/backend';
    nacked(
      decodeCluster(eds({ name })),
      'eds_cluster_config.service_name',
      'must be set when the cluster name is an xdstp: name',
    );
    const c = accepted(
      decodeCluster(
        eds({
          name,
          edsClusterConfig: {
            edsConfig: { ads: {} },
            serviceName: 'xdstp://auth.example/envoy.config.endpoint.v3.ClusterLoadAssignment/backend',
          },
        }),
      ),
    );
    assert.deepEqual(c.discovery, {
      kind: 'eds',
      edsServiceName: 'xdstp://auth.example/envoy.config.endpoint.v3.ClusterLoadAssignment/backend',
    });
    assert.deepEqual(accepted(decodeCluster(eds({ name: 'plain' }))).discovery, {
      kind: 'eds',
      edsServiceName: 'plain',
    });
  });

  test('A37 LOGICAL_DNS: the single endpoint gives the host name and port', () => {
    const c = accepted(decodeCluster(logicalDns({ address: 'dns.example', portValue: 8443 })));
    assert.deepEqual(c.discovery, { kind: 'logical_dns', hostname: 'dns.example', port: 8443 });
  });

  test('A37 aggregate: the ordered list of clusters', () => {
    const c = accepted(decodeCluster(aggregate(['primary', 'secondary'])));
    assert.deepEqual(c.discovery, { kind: 'aggregate', clusters: ['primary', 'secondary'] });
  });

  test('circuit_breakers: max_requests of the DEFAULT priority thresholds', () => {
    const c = accepted(
      decodeCluster(
        eds({
          circuitBreakers: {
            thresholds: [
              { priority: 'HIGH', maxRequests: 5 },
              { priority: 'DEFAULT', maxRequests: 50 },
            ],
          },
        }),
      ),
    );
    assert.equal(c.maxRequests, 50);
    const onlyHigh = accepted(
      decodeCluster(eds({ circuitBreakers: { thresholds: [{ priority: 'HIGH', maxRequests: 5 }] } })),
    );
    assert.equal(onlyHigh.maxRequests, 1024);
  });

  test('A52 load_balancing_policy and A42 legacy RING_HASH go through the existing converters', () => {
    const ringHash = accepted(
      decodeCluster(
        eds({ lbPolicy: 'RING_HASH', ringHashLbConfig: { minimumRingSize: '64', maximumRingSize: '128' } }),
      ),
    );
    assert.deepEqual(ringHash.lbPolicy, [{ ring_hash_experimental: { minRingSize: 64, maxRingSize: 128 } }]);
    const rr = `${TYPE_PREFIX}envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin`;
    const custom = accepted(
      decodeCluster(
        eds({
          loadBalancingPolicy: {
            policies: [{ typedExtensionConfig: { name: 'rr', typedConfig: { '@type': rr } } }],
          },
        }),
      ),
    );
    assert.deepEqual(custom.lbPolicy, [{ round_robin: {} }]);
  });
});

describe('A50: outlier_detection → the outlier_detection_experimental config', () => {
  test('set fields are mapped, durations as JSON strings; unset ones are left to the policy defaults', () => {
    const c = accepted(
      decodeCluster(
        eds({
          outlierDetection: {
            interval: '1.5s',
            baseEjectionTime: '10s',
            maxEjectionPercent: 20,
            successRateStdevFactor: 1000,
            successRateMinimumHosts: 3,
            enforcingFailurePercentage: 50,
            failurePercentageThreshold: 70,
            failurePercentageRequestVolume: 10,
          },
        }),
      ),
    );
    assert.deepEqual(c.outlierDetection, {
      interval: '1.5s',
      baseEjectionTime: '10s',
      maxEjectionPercent: 20,
      successRateEjection: { stdevFactor: 1000, minimumHosts: 3 },
      failurePercentageEjection: { threshold: 70, enforcementPercentage: 50, requestVolume: 10 },
    });
  });

  test('enforcing_success_rate 0 disables success rate; enforcing_failure_percentage unset or 0 disables failure percentage', () => {
    const c = accepted(
      decodeCluster(eds({ outlierDetection: { enforcingSuccessRate: 0, enforcingFailurePercentage: 0 } })),
    );
    assert.deepEqual(c.outlierDetection, {});
    const d = accepted(decodeCluster(eds({ outlierDetection: {} })));
    assert.deepEqual(d.outlierDetection, { successRateEjection: {} });
  });
});

describe('A27 / A37 / A42 / A50: CDS NACK reasons name the field', () => {
  test('a discovery type other than EDS / LOGICAL_DNS without an aggregate cluster_type', () => {
    const result = decodeCluster({ name: 'static', type: 'STATIC' });
    nacked(result, 'type', 'unsupported value STATIC');
    assert.equal(result.name, 'static');
    nacked(decodeCluster({ name: 'unset' }), 'type', 'STATIC');
  });

  test('EDS without an eds_config, or with one that is not ads / self', () => {
    nacked(
      decodeCluster(eds({ edsClusterConfig: {} })),
      'eds_cluster_config.eds_config',
      'field not present',
    );
    nacked(
      decodeCluster(eds({ edsClusterConfig: { edsConfig: { path: '/x' } } })),
      'eds_cluster_config.eds_config',
      'not ads or self',
    );
  });

  test('lrs_server that is not self', () => {
    nacked(decodeCluster(eds({ lrsServer: { ads: {} } })), 'lrs_server', 'not self');
  });

  test('A37 LOGICAL_DNS: load_assignment shape, host name and port', () => {
    nacked(decodeCluster({ name: 'dns', type: 'LOGICAL_DNS' }), 'load_assignment', 'field not present');
    nacked(
      decodeCluster({ name: 'dns', type: 'LOGICAL_DNS', loadAssignment: { endpoints: [] } }),
      'load_assignment.endpoints',
      'expected exactly 1',
    );
    nacked(
      decodeCluster({
        name: 'dns',
        type: 'LOGICAL_DNS',
        loadAssignment: { endpoints: [{ lbEndpoints: [{}, {}] }] },
      }),
      'load_assignment.endpoints[0].lb_endpoints',
      'expected exactly 1',
    );
    nacked(
      decodeCluster({
        name: 'dns',
        type: 'LOGICAL_DNS',
        loadAssignment: { endpoints: [{ lbEndpoints: [{}] }] },
      }),
      'load_assignment.endpoints[0].lb_endpoints[0].endpoint',
    );
    const socket = 'load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address';
    nacked(decodeCluster(logicalDns({ address: '', portValue: 1 })), `${socket}.address`);
    nacked(decodeCluster(logicalDns({ address: 'dns.example' })), `${socket}.port_value`);
    nacked(decodeCluster(logicalDns({ address: 'dns.example', namedPort: 'https' })), `${socket}.port_value`);
  });

  test('A37 aggregate: typed_config missing, of another type, or listing no cluster', () => {
    nacked(
      decodeCluster({ name: 'agg', clusterType: { name: 'envoy.clusters.aggregate' } }),
      'cluster_type.typed_config',
      'field not present',
    );
    nacked(
      decodeCluster({
        name: 'agg',
        clusterType: { name: 'x', typedConfig: { '@type': `${TYPE_PREFIX}google.protobuf.Empty` } },
      }),
      'cluster_type.typed_config.type_url',
      'unsupported cluster type google.protobuf.Empty',
    );
    nacked(decodeCluster(aggregate([])), 'cluster_type.typed_config.clusters', 'must not be empty');
  });

  test('A42 legacy ring_hash_lb_config: min > max, a size above 8M, a minimum of 0', () => {
    const rh = (sizes: Json) => decodeCluster(eds({ lbPolicy: 'RING_HASH', ringHashLbConfig: sizes }));
    nacked(
      rh({ minimumRingSize: '200', maximumRingSize: '100' }),
      'ring_hash_lb_config.minimum_ring_size',
      'greater than',
    );
    nacked(rh({ maximumRingSize: '8388609' }), 'ring_hash_lb_config.maximum_ring_size', 'out of range');
    nacked(rh({ minimumRingSize: '0' }), 'ring_hash_lb_config.minimum_ring_size', 'out of range');
  });

  test('A52: an unsupported load_balancing_policy', () => {
    const unknown = {
      '@type': `${TYPE_PREFIX}xds.type.v3.TypedStruct`,
      typeUrl: 'type.googleapis.com/myorg.NotRegistered',
    };
    nacked(
      decodeCluster(
        eds({
          loadBalancingPolicy: {
            policies: [{ typedExtensionConfig: { name: 'm', typedConfig: unknown } }],
          },
        }),
      ),
      'load_balancing_policy',
      'no supported load balancing policy',
    );
  });

  test('A50: percentages above 100 and invalid durations', () => {
    const od = (fields: Json) => decodeCluster(eds({ outlierDetection: fields }));
    nacked(od({ maxEjectionPercent: 101 }), 'outlier_detection.max_ejection_percent', 'greater than 100');
    nacked(od({ enforcingSuccessRate: 150 }), 'outlier_detection.enforcing_success_rate', 'greater than 100');
    nacked(od({ enforcingFailurePercentage: 101 }), 'outlier_detection.enforcing_failure_percentage');
    nacked(
      od({ enforcingFailurePercentage: 100, failurePercentageThreshold: 101 }),
      'outlier_detection.failure_percentage_threshold',
    );
    nacked(od({ interval: '-1s' }), 'outlier_detection.interval.seconds', 'out of range');
    nacked(od({ baseEjectionTime: '-0.5s' }), 'outlier_detection.base_ejection_time.nanos', 'out of range');
    // Past the Duration range (proto3 JSON cannot even spell it): set on the message, then encoded.
    const message = fromJson(ClusterSchema, eds({ outlierDetection: { maxEjectionTime: '1s' } }), {
      registry: xdsTypeRegistry,
    });
    message.outlierDetection!.maxEjectionTime!.seconds = 315_576_000_001n;
    nacked(
      clusterResourceType.decode(toBinary(ClusterSchema, message), resolveXdsOptions()),
      'outlier_detection.max_ejection_time.seconds',
    );
  });
});
