import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Registry } from '../../src/core/index.js';
import { roundRobinFactory } from '../../src/policies/index.js';
import { clusterLbConfig, decodeCluster, encodeCluster, parseCluster } from '../../src/xds/index.js';
import { XDS_CUSTOM_LB_CONFIG_ENV } from '../../src/xds/resources/xds-options.js';
import { clusterConfig, edsCluster, lbp, nacks, ringHash, roundRobin, wrrLocality } from './helpers.js';

const WRR_RR = [{ xds_wrr_locality_experimental: { childPolicy: [{ round_robin: {} }] } }];

function withEnv<T>(name: string, value: string | undefined, fn: () => T): T {
  const saved = process.env[name];
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
  try {
    return fn();
  } finally {
    if (saved === undefined) delete process.env[name];
    else process.env[name] = saved;
  }
}

describe('A52 "XdsClient": load_balancing_policy wins over the legacy fields', () => {
  test('when load_balancing_policy is set it is used instead of lb_policy and lb_config', () => {
    const cluster = edsCluster({
      lbPolicy: 'RING_HASH',
      ringHashLbConfig: { minimumRingSize: 10 },
      loadBalancingPolicy: lbp(wrrLocality(lbp(roundRobin()))),
    });
    assert.deepEqual(clusterConfig(cluster), WRR_RR);
  });

  test('errors in load_balancing_policy name the Cluster field', () => {
    nacks(
      () =>
        clusterConfig(edsCluster({ loadBalancingPolicy: lbp(ringHash({ hashFunction: 'MURMUR_HASH_2' })) })),
      'load_balancing_policy.policies[0].typed_config (RingHash).hash_function',
      /MURMUR_HASH_2/,
    );
    // Set but empty is still "set": nothing in it is supported.
    nacks(
      () => clusterConfig(edsCluster({ loadBalancingPolicy: {} })),
      'load_balancing_policy',
      /no load balancing policy/,
    );
  });

  test('A52 "Temporary environment variable protection": GRPC_EXPERIMENTAL_XDS_CUSTOM_LB_CONFIG=false ignores it', () => {
    const cluster = edsCluster({ lbPolicy: 'RING_HASH', loadBalancingPolicy: lbp(roundRobin()) });
    assert.deepEqual(clusterConfig(cluster), [{ round_robin: {} }]);
    assert.deepEqual(clusterConfig(cluster, { customLbConfig: false }), [
      { ring_hash_experimental: { minRingSize: 1024, maxRingSize: 8_388_608 } },
    ]);
    withEnv(XDS_CUSTOM_LB_CONFIG_ENV, 'false', () => {
      assert.deepEqual(Object.keys(clusterConfig(cluster)[0]!), ['ring_hash_experimental']);
      // The option wins over the environment.
      assert.deepEqual(clusterConfig(cluster, { customLbConfig: true }), [{ round_robin: {} }]);
    });
    withEnv(XDS_CUSTOM_LB_CONFIG_ENV, 'true', () =>
      assert.deepEqual(clusterConfig(cluster), [{ round_robin: {} }]),
    );
  });
});

describe('legacy lb_policy (A27 / A42 / A48) when load_balancing_policy is unset', () => {
  test('ROUND_ROBIN (the default) → xds_wrr_locality_experimental over round_robin', () => {
    assert.deepEqual(clusterConfig(edsCluster()), WRR_RR);
    assert.deepEqual(clusterConfig(edsCluster({ lbPolicy: 'ROUND_ROBIN' })), WRR_RR);
  });

  test('A42 "xDS API Fields": RING_HASH → ring_hash_experimental, defaults 1024 / 8,388,608 set explicitly', () => {
    assert.deepEqual(clusterConfig(edsCluster({ lbPolicy: 'RING_HASH' })), [
      { ring_hash_experimental: { minRingSize: 1024, maxRingSize: 8_388_608 } },
    ]);
    assert.deepEqual(
      clusterConfig(
        edsCluster({
          lbPolicy: 'RING_HASH',
          ringHashLbConfig: { minimumRingSize: '64', maximumRingSize: '128', hashFunction: 'XX_HASH' },
        }),
      ),
      [{ ring_hash_experimental: { minRingSize: 64, maxRingSize: 128 } }],
    );
  });

  test('A42: RING_HASH with MURMUR_HASH_2, sizes above 8M or min > max is NACKed', () => {
    nacks(
      () =>
        clusterConfig(
          edsCluster({ lbPolicy: 'RING_HASH', ringHashLbConfig: { hashFunction: 'MURMUR_HASH_2' } }),
        ),
      'ring_hash_lb_config.hash_function',
      /unsupported value MURMUR_HASH_2/,
    );
    nacks(
      () =>
        clusterConfig(
          edsCluster({ lbPolicy: 'RING_HASH', ringHashLbConfig: { maximumRingSize: '8388609' } }),
        ),
      'ring_hash_lb_config.maximum_ring_size',
      /out of range/,
    );
    nacks(
      () =>
        clusterConfig(
          edsCluster({ lbPolicy: 'RING_HASH', ringHashLbConfig: { minimumRingSize: 9, maximumRingSize: 8 } }),
        ),
      'ring_hash_lb_config.minimum_ring_size',
      /greater than maximum_ring_size/,
    );
  });

  test('A42: GRPC_XDS_EXPERIMENTAL_ENABLE_RING_HASH=false rejects RING_HASH', () => {
    nacks(
      () => clusterConfig(edsCluster({ lbPolicy: 'RING_HASH' }), { ringHash: false }),
      'lb_policy',
      /RING_HASH is disabled/,
    );
  });

  test('A48: LEAST_REQUEST → xds_wrr_locality_experimental over least_request_experimental (choiceCount, default 2)', () => {
    assert.deepEqual(clusterConfig(edsCluster({ lbPolicy: 'LEAST_REQUEST' })), [
      {
        xds_wrr_locality_experimental: { childPolicy: [{ least_request_experimental: { choiceCount: 2 } }] },
      },
    ]);
    assert.deepEqual(
      clusterConfig(edsCluster({ lbPolicy: 'LEAST_REQUEST', leastRequestLbConfig: { choiceCount: 4 } })),
      [
        {
          xds_wrr_locality_experimental: {
            childPolicy: [{ least_request_experimental: { choiceCount: 4 } }],
          },
        },
      ],
    );
    nacks(
      () =>
        clusterConfig(edsCluster({ lbPolicy: 'LEAST_REQUEST', leastRequestLbConfig: { choiceCount: 1 } })),
      'least_request_lb_config.choice_count',
      /less than 2/,
    );
  });

  test('every other lb_policy value is an error', () => {
    for (const value of ['RANDOM', 'MAGLEV', 'CLUSTER_PROVIDED', 'LOAD_BALANCING_POLICY_CONFIG']) {
      nacks(
        () => clusterConfig(edsCluster({ lbPolicy: value })),
        'lb_policy',
        new RegExp(`unsupported value ${value}`),
      );
    }
    nacks(() => clusterConfig(edsCluster({ lbPolicy: 42 })), 'lb_policy', /unsupported value 42/);
  });

  test('A52: the converted legacy config is validated by the gRPC registry too', () => {
    const registry = new Registry();
    registry.register(roundRobinFactory);
    nacks(
      () => clusterConfig(edsCluster(), { registry }),
      'lb_policy (ROUND_ROBIN)',
      /"xds_wrr_locality_experimental" config is rejected .*no registered LB policy/,
    );
  });
});

describe('A27 "Cluster Proto": EDS cluster validation', () => {
  test('an EDS cluster over ADS: the EDS name is service_name or the cluster name', () => {
    const parsed = parseCluster(decodeCluster(encodeCluster(edsCluster())));
    assert.equal(parsed.name, 'cluster-a');
    assert.deepEqual(parsed.discovery, { kind: 'eds', edsServiceName: 'cluster-a' });
    assert.deepEqual(parsed.lbPolicy, WRR_RR);
    const named = edsCluster({ edsClusterConfig: { edsConfig: { self: {} }, serviceName: 'eds-a' } });
    assert.deepEqual(parseCluster(decodeCluster(encodeCluster(named))).discovery, {
      kind: 'eds',
      edsServiceName: 'eds-a',
    });
  });

  test('type must be EDS, LOGICAL_DNS (A37) or aggregate; eds_config must be ads or self; lrs_server must be self', () => {
    const parse = (json: Record<string, unknown>) => parseCluster(decodeCluster(encodeCluster(json)));
    nacks(() => parse(edsCluster({ type: 'LOGICAL_DNS' })), 'load_assignment', /field not present/);
    nacks(() => parse({ name: 'x' }), 'type', /unsupported value STATIC/);
    nacks(
      () => parse({ name: 'x', clusterType: { name: 'envoy.clusters.aggregate' } }),
      'cluster_type.typed_config',
      /field not present/,
    );
    nacks(() => parse({ name: 'x', type: 'EDS' }), 'eds_cluster_config.eds_config', /field not present/);
    nacks(
      () => parse(edsCluster({ edsClusterConfig: { edsConfig: { path: '/etc/eds.yaml' } } })),
      'eds_cluster_config.eds_config',
      /not ads or self/,
    );
    nacks(() => parse(edsCluster({ lrsServer: { ads: {} } })), 'lrs_server', /not self/);
    assert.equal(parse(edsCluster({ lrsServer: { self: {} } })).lrsLoadReporting, true);
  });

  test('malformed Cluster bytes are a NACK naming the field being read', () => {
    const bytes = encodeCluster(edsCluster({ loadBalancingPolicy: lbp(roundRobin()) }));
    nacks(
      () => clusterLbConfig(bytes.subarray(0, bytes.length - 3)),
      '',
      /can't decode envoy\.config\.cluster\.v3\.Cluster: .*load_balancing_policy/,
    );
  });
});
