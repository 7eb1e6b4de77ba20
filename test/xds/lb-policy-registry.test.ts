import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type PolicyFactory, Registry } from '../../src/core/index.js';
import { registerAllPolicies, roundRobinFactory, WRR_CUSTOM_METRICS_ENV } from '../../src/policies/index.js';
import { Simulation } from '../../src/sim/index.js';
import {
  clusterToTreeFromJson,
  convertLoadBalancingPolicy,
  defaultXdsLbPolicyRegistry,
  encodeLoadBalancingPolicy,
  MAX_LB_POLICY_DEPTH,
} from '../../src/xds/index.js';
import { decodeLoadBalancingPolicy } from '../../src/xds/resources/lb-policy-registry.js';
import { XDS_RING_HASH_ENV } from '../../src/xds/resources/xds-options.js';
import {
  assignment,
  convert,
  customLeastRequest,
  edsCluster,
  lbp,
  leastRequest,
  maglev,
  nacks,
  pickFirst,
  ringHash,
  roundRobin,
  typedStruct,
  wrrLocality,
} from './helpers.js';

/** A registry with every lbtree policy plus the given ones. */
function registryWith(...factories: PolicyFactory[]): Registry {
  const r = registerAllPolicies(new Registry());
  for (const f of factories) r.register(f);
  return r;
}

/** A policy that accepts only `{ level: <integer> }`, to see custom configs validated. */
const strictCustom: PolicyFactory = {
  name: 'myorg.Strict',
  parseConfig: (json, path, registry) => {
    const level = (json as { level?: unknown }).level;
    if (typeof level !== 'number') {
      return registry.parseLbConfigList({ no_such_policy: {} }, `${path}.level`); // throws a ConfigError
    }
    return { level };
  },
  create: roundRobinFactory.create,
};

const FIRST = 'load_balancing_policy.policies[0].typed_config';

describe('A52 "xDS LB Policy Registry": RingHash → ring_hash_experimental', () => {
  test('minimum_ring_size / maximum_ring_size become minRingSize / maxRingSize', () => {
    const out = convert(
      lbp(ringHash({ hashFunction: 'XX_HASH', minimumRingSize: '16', maximumRingSize: 4096 })),
    );
    assert.deepEqual(out, [{ ring_hash_experimental: { minRingSize: 16, maxRingSize: 4096 } }]);
  });

  test('A42: unset sizes give 1024 and the xDS default max 8,388,608 (set explicitly; the local cap applies later)', () => {
    const out = convert(lbp(ringHash({ hashFunction: 'XX_HASH' })));
    assert.deepEqual(out, [{ ring_hash_experimental: { minRingSize: 1024, maxRingSize: 8_388_608 } }]);
  });

  test('any hash_function other than XX_HASH is an error: MURMUR_HASH_2, and DEFAULT_HASH (unset) too', () => {
    nacks(
      () => convert(lbp(ringHash({ hashFunction: 'MURMUR_HASH_2' }))),
      `${FIRST} (RingHash).hash_function`,
      /unsupported value MURMUR_HASH_2.*XX_HASH/,
    );
    nacks(
      () => convert(lbp(ringHash())),
      `${FIRST} (RingHash).hash_function`,
      /unsupported value DEFAULT_HASH/,
    );
  });

  test('A42: sizes above 8M are NACKed, as is 0, and min > max', () => {
    nacks(
      () => convert(lbp(ringHash({ hashFunction: 'XX_HASH', maximumRingSize: 8_388_609 }))),
      `${FIRST} (RingHash).maximum_ring_size`,
      /8388609 is out of range \[1, 8388608\]/,
    );
    nacks(
      () => convert(lbp(ringHash({ hashFunction: 'XX_HASH', minimumRingSize: '9000000' }))),
      `${FIRST} (RingHash).minimum_ring_size`,
      /out of range/,
    );
    nacks(
      () => convert(lbp(ringHash({ hashFunction: 'XX_HASH', minimumRingSize: 0 }))),
      `${FIRST} (RingHash).minimum_ring_size`,
      /0 is out of range/,
    );
    nacks(
      () => convert(lbp(ringHash({ hashFunction: 'XX_HASH', minimumRingSize: 100, maximumRingSize: 10 }))),
      `${FIRST} (RingHash).minimum_ring_size`,
      /100 is greater than maximum_ring_size \(10\)/,
    );
    // 8,388,608 itself is accepted.
    const out = convert(lbp(ringHash({ hashFunction: 'XX_HASH', minimumRingSize: 8_388_608 })));
    assert.deepEqual(out, [{ ring_hash_experimental: { minRingSize: 8_388_608, maxRingSize: 8_388_608 } }]);
  });

  test('A42 "Temporary environment variable protection": GRPC_XDS_EXPERIMENTAL_ENABLE_RING_HASH=false makes RingHash unsupported', () => {
    const policy = lbp(ringHash({ hashFunction: 'XX_HASH' }), roundRobin());
    assert.deepEqual(convert(policy, { ringHash: false }), [{ round_robin: {} }]);
    nacks(
      () => convert(lbp(ringHash({ hashFunction: 'XX_HASH' })), { ringHash: false }),
      'load_balancing_policy',
      /no supported/,
    );
    const saved = process.env[XDS_RING_HASH_ENV];
    try {
      process.env[XDS_RING_HASH_ENV] = 'false';
      assert.deepEqual(convert(policy), [{ round_robin: {} }]);
      process.env[XDS_RING_HASH_ENV] = 'true';
      assert.deepEqual(Object.keys(convert(policy)[0]!), ['ring_hash_experimental']);
    } finally {
      if (saved === undefined) delete process.env[XDS_RING_HASH_ENV];
      else process.env[XDS_RING_HASH_ENV] = saved;
    }
  });
});

describe('A52 "xDS LB Policy Registry": RoundRobin, WrrLocality, LeastRequest, PickFirst', () => {
  test('RoundRobin → round_robin with an empty config', () => {
    assert.deepEqual(convert(lbp(roundRobin())), [{ round_robin: {} }]);
  });

  test('WrrLocality → xds_wrr_locality_experimental, its endpoint_picking_policy converted recursively', () => {
    const out = convert(lbp(wrrLocality(lbp(maglev(), leastRequest({ choiceCount: 3 }), roundRobin()))));
    assert.deepEqual(out, [
      {
        xds_wrr_locality_experimental: { childPolicy: [{ least_request_experimental: { choiceCount: 3 } }] },
      },
    ]);
  });

  test('WrrLocality errors name the nested field', () => {
    nacks(
      () => convert(lbp({ '@type': wrrLocality(lbp())['@type'] })),
      `${FIRST} (WrrLocality).endpoint_picking_policy`,
      /field not present/,
    );
    nacks(
      () => convert(lbp(wrrLocality(lbp(maglev())))),
      `${FIRST} (WrrLocality).endpoint_picking_policy`,
      /no supported load balancing policy among \[envoy\.extensions\.load_balancing_policies\.maglev\.v3\.Maglev\]/,
    );
    nacks(
      () => convert(lbp(wrrLocality(lbp(ringHash({ hashFunction: 'MURMUR_HASH_2' }))))),
      `${FIRST} (WrrLocality).endpoint_picking_policy.policies[0].typed_config (RingHash).hash_function`,
      /MURMUR_HASH_2/,
    );
  });

  test('A48: LeastRequest → least_request_experimental with choiceCount (default 2); below 2 is an error', () => {
    assert.deepEqual(convert(lbp(leastRequest())), [{ least_request_experimental: { choiceCount: 2 } }]);
    assert.deepEqual(convert(lbp(leastRequest({ choiceCount: 7 }))), [
      { least_request_experimental: { choiceCount: 7 } },
    ]);
    nacks(
      () => convert(lbp(leastRequest({ choiceCount: 1 }))),
      `${FIRST} (LeastRequest).choice_count`,
      /1 is less than 2/,
    );
  });

  test('A52: LeastRequest only "if least_request is supported by the client" — skipped when not registered', () => {
    const registry = new Registry();
    registry.register(roundRobinFactory);
    assert.deepEqual(convert(lbp(leastRequest(), roundRobin()), { registry }), [{ round_robin: {} }]);
  });

  test('A62 "pick_first via xDS": PickFirst → pick_first with shuffleAddressList', () => {
    assert.deepEqual(convert(lbp(pickFirst({ shuffleAddressList: true }))), [
      { pick_first: { shuffleAddressList: true } },
    ]);
    assert.deepEqual(convert(lbp(pickFirst())), [{ pick_first: { shuffleAddressList: false } }]);
  });
});

describe('A52 "xDS LB Policy Registry": TypedStruct custom policies', () => {
  const custom = customLeastRequest();
  const registry = registryWith(custom.factory);

  test('xds.type.v3.TypedStruct: the name after the last "/" of type_url, the Struct as its config', () => {
    const out = convert(
      lbp(
        typedStruct('type.googleapis.com/myorg.MyCustomLeastRequestPolicy', { choiceCount: 2 }),
        roundRobin(),
      ),
      { registry },
    );
    assert.deepEqual(out, [{ 'myorg.MyCustomLeastRequestPolicy': { choiceCount: 2 } }]);
  });

  test('udpa.type.v1.TypedStruct works the same; any URL prefix; a missing Struct is {}', () => {
    const out = convert(
      lbp(typedStruct('example.com/a/b/myorg.MyCustomLeastRequestPolicy', undefined, 'udpa')),
      {
        registry,
      },
    );
    assert.deepEqual(out, [{ 'myorg.MyCustomLeastRequestPolicy': {} }]);
  });

  test('the Struct is returned as-is (nested objects, lists, strings, bools, null)', () => {
    const passthrough: PolicyFactory = {
      name: 'myorg.AnyConfig',
      parseConfig: (json) => json,
      create: roundRobinFactory.create,
    };
    const value = { a: { b: [1, 'two', true, null] }, c: 'x' };
    const out = convert(lbp(typedStruct('type.googleapis.com/myorg.AnyConfig', value)), {
      registry: registryWith(passthrough),
    });
    assert.deepEqual(out, [{ 'myorg.AnyConfig': value }]);
  });

  test('A68: random_subsetting_experimental by TypedStruct as well', () => {
    const value = { subsetSize: 5, childPolicy: [{ round_robin: {} }] };
    const out = convert(lbp(typedStruct('type.googleapis.com/random_subsetting_experimental', value)));
    assert.deepEqual(out, [{ random_subsetting_experimental: value }]);
    // The converted config is validated: subset_size 0 is rejected with its path.
    nacks(
      () =>
        convert(
          lbp(typedStruct('type.googleapis.com/random_subsetting_experimental', { ...value, subsetSize: 0 })),
        ),
      `${FIRST} (TypedStruct)`,
      /\.subsetSize: 0 is out of range/,
    );
  });

  test('a custom policy that is not registered is skipped: the next supported entry wins', () => {
    const out = convert(lbp(typedStruct('type.googleapis.com/myorg.Unregistered', { x: 1 }), roundRobin()), {
      registry,
    });
    assert.deepEqual(out, [{ round_robin: {} }]);
    nacks(
      () => convert(lbp(typedStruct('type.googleapis.com/myorg.Unregistered')), { registry }),
      'load_balancing_policy',
      /no supported load balancing policy among \[xds\.type\.v3\.TypedStruct\]/,
    );
  });

  test('the default registry is used when none is passed (registerPolicy adds to it)', () => {
    nacks(
      () => convert(lbp(typedStruct('type.googleapis.com/myorg.MyCustomLeastRequestPolicy'))),
      'load_balancing_policy',
      /no supported/,
    );
  });

  test('an invalid custom config is rejected at conversion, naming the xDS field', () => {
    const strict = registryWith(strictCustom);
    const e = nacks(
      () =>
        convert(lbp(wrrLocality(lbp(typedStruct('type.googleapis.com/myorg.Strict', { level: 'high' })))), {
          registry: strict,
        }),
      `${FIRST} (WrrLocality).endpoint_picking_policy.policies[0].typed_config (TypedStruct)`,
      /the converted "myorg\.Strict" config is rejected by the LB policy registry: \$\["myorg\.Strict"\]\.level/,
    );
    assert.match(
      e.message,
      /^load_balancing_policy\.policies\[0\]\.typed_config \(WrrLocality\)\.endpoint_picking_policy/,
    );
    assert.deepEqual(
      convert(lbp(typedStruct('type.googleapis.com/myorg.Strict', { level: 3 })), { registry: strict }),
      [{ 'myorg.Strict': { level: 3 } }],
    );
  });

  test('a TypedStruct may name a built-in policy; its config is validated like any other', () => {
    assert.deepEqual(convert(lbp(typedStruct('type.googleapis.com/round_robin'))), [{ round_robin: {} }]);
    nacks(
      () => convert(lbp(typedStruct('type.googleapis.com/ring_hash_experimental', { minRingSize: 0 }))),
      `${FIRST} (TypedStruct)`,
      /rejected by the LB policy registry: .*minRingSize.*out of range/,
    );
  });

  test('a type_url without a name after "/" is an error', () => {
    nacks(
      () => convert(lbp(typedStruct('myorg.NoSlash'))),
      `${FIRST} (TypedStruct).type_url`,
      /invalid type URL "myorg\.NoSlash"/,
    );
    nacks(
      () => convert(lbp(typedStruct('example.com/'))),
      `${FIRST} (TypedStruct).type_url`,
      /invalid type URL/,
    );
  });
});

describe('A52 "xDS LB Policy Registry": choosing among entries', () => {
  test('unsupported types are skipped; the first supported entry wins and only it is returned', () => {
    const out = convert(lbp(maglev(), roundRobin(), ringHash({ hashFunction: 'XX_HASH' })));
    assert.deepEqual(out, [{ round_robin: {} }]);
  });

  test('an error in the first supported entry is a NACK even when a later entry would convert', () => {
    nacks(
      () => convert(lbp(ringHash({ hashFunction: 'MURMUR_HASH_2' }), roundRobin())),
      `${FIRST} (RingHash).hash_function`,
      /MURMUR_HASH_2/,
    );
  });

  test('no supported entry, or none at all, is an error', () => {
    nacks(
      () => convert(lbp(maglev())),
      'load_balancing_policy',
      /no supported load balancing policy among \[.*Maglev\]/,
    );
    nacks(() => convert(lbp()), 'load_balancing_policy', /no load balancing policy given/);
  });

  test(`nesting: ${MAX_LB_POLICY_DEPTH} levels (the top level is 1) are accepted, a 17th is an error`, () => {
    const nested = (levels: number) => {
      let policy = lbp(roundRobin()); // the innermost level
      for (let i = 1; i < levels; i++) policy = lbp(wrrLocality(policy));
      return policy;
    };
    const out = convert(nested(16));
    let depth = 1;
    let entry = out[0] as Record<string, unknown>;
    while ('xds_wrr_locality_experimental' in entry) {
      entry = (entry.xds_wrr_locality_experimental as { childPolicy: Record<string, unknown>[] })
        .childPolicy[0]!;
      depth++;
    }
    assert.deepEqual(entry, { round_robin: {} });
    assert.equal(depth, 16);
    const e = nacks(
      () => convert(nested(17)),
      `${FIRST} (WrrLocality)${'.endpoint_picking_policy.policies[0].typed_config (WrrLocality)'.repeat(15)}.endpoint_picking_policy`,
      /more than 16 levels/,
    );
    assert.match(e.message, /^load_balancing_policy\.policies\[0\]/);
  });

  test('structural errors: a Policy without typed_extension_config or typed_config, malformed bytes', () => {
    nacks(
      () => convert({ policies: [{}] }),
      'load_balancing_policy.policies[0].typed_extension_config',
      /field not present/,
    );
    nacks(
      () => convert({ policies: [{ typedExtensionConfig: { name: 'x' } }] }),
      'load_balancing_policy.policies[0].typed_extension_config.typed_config',
      /field not present/,
    );
    nacks(
      () => convertLoadBalancingPolicy(new Uint8Array([0x0a, 0x05, 0x22])),
      '',
      /can't decode envoy\.config\.cluster\.v3\.LoadBalancingPolicy/,
    );
    // A RoundRobin whose bytes are not a RoundRobin message.
    const broken = decodeLoadBalancingPolicy(encodeLoadBalancingPolicy(lbp(roundRobin())));
    broken.policies[0]!.typedExtensionConfig!.typedConfig!.value = new Uint8Array([0x08]);
    nacks(
      () => defaultXdsLbPolicyRegistry().convert(broken),
      `${FIRST} (RoundRobin)`,
      /can't decode .*RoundRobin: premature EOF/,
    );
  });

  test('the converter registry is extensible: a converter for another extension type', () => {
    const registry = defaultXdsLbPolicyRegistry().clone();
    registry.register('envoy.extensions.load_balancing_policies.maglev.v3.Maglev', () => ({
      round_robin: {},
    }));
    assert.deepEqual(
      convertLoadBalancingPolicy(encodeLoadBalancingPolicy(lbp(maglev())), { lbPolicyRegistry: registry }),
      [{ round_robin: {} }],
    );
    assert.throws(
      () => registry.register('envoy.extensions.load_balancing_policies.maglev.v3.Maglev', () => null),
      /already registered/,
    );
  });
});

describe('RandomSubsetting (A68 "Integration with xDS LB Policy Registry")', () => {
  const RS =
    'type.googleapis.com/envoy.extensions.load_balancing_policies.random_subsetting.v3.RandomSubsetting';
  const AT = `${FIRST} (RandomSubsetting)`;

  test('RandomSubsetting → random_subsetting_experimental: subset_size as is, child_policy converted', () => {
    const out = convert(lbp({ '@type': RS, subsetSize: 10, childPolicy: lbp(roundRobin()) }));
    assert.deepEqual(out, [
      { random_subsetting_experimental: { subsetSize: 10, childPolicy: [{ round_robin: {} }] } },
    ]);
    const parsed = registerAllPolicies(new Registry()).parseLbConfigList(out);
    assert.equal(parsed.factory.name, 'random_subsetting_experimental');
    assert.equal((parsed.config as { subsetSize: number }).subsetSize, 10);
    // The smallest valid size.
    assert.deepEqual(convert(lbp({ '@type': RS, subsetSize: 1, childPolicy: lbp(roundRobin()) })), [
      { random_subsetting_experimental: { subsetSize: 1, childPolicy: [{ round_robin: {} }] } },
    ]);
  });

  test('subset_size unset or 0, child_policy unset or unsupported: NACKs naming the field', () => {
    nacks(
      () => convert(lbp({ '@type': RS, childPolicy: lbp(roundRobin()) })),
      `${AT}.subset_size`,
      /not present/,
    );
    nacks(
      () => convert(lbp({ '@type': RS, subsetSize: 0, childPolicy: lbp(roundRobin()) })),
      `${AT}.subset_size`,
      /greater than 0/,
    );
    nacks(() => convert(lbp({ '@type': RS, subsetSize: 3 })), `${AT}.child_policy`, /not present/);
    nacks(
      () => convert(lbp({ '@type': RS, subsetSize: 3, childPolicy: lbp(maglev()) })),
      `${AT}.child_policy`,
      /no supported load balancing policy/,
    );
  });

  test('under cds in the simulator: a cluster of 20 endpoints with subset_size 5 connects to 5 of them', () => {
    const policy = lbp({ '@type': RS, subsetSize: 5, childPolicy: lbp(roundRobin()) });
    const keys = Array.from({ length: 20 }, (_, i) => `10.0.0.${i + 1}`);
    const tree = clusterToTreeFromJson(
      edsCluster({ loadBalancingPolicy: policy }),
      assignment([{ zone: 'a', endpoints: keys }]),
    );
    const sim = new Simulation();
    sim.update(tree.endpoints, tree.config, tree.attributes);
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    assert.equal([...sim.subchannels.values()].filter((s) => !s.released).length, 5);
  });

  test('skipped when the gRPC registry has no random_subsetting_experimental: the next entry wins', () => {
    const registry = new Registry();
    registry.register(roundRobinFactory);
    const out = convert(lbp({ '@type': RS, subsetSize: 3, childPolicy: lbp(roundRobin()) }, roundRobin()), {
      registry,
    });
    assert.deepEqual(out, [{ round_robin: {} }]);
  });
});

describe('ClientSideWeightedRoundRobin (A58 "xDS Integration")', () => {
  const CSWRR =
    'type.googleapis.com/envoy.extensions.load_balancing_policies.client_side_weighted_round_robin.v3.ClientSideWeightedRoundRobin';

  test('A58: ClientSideWeightedRoundRobin → weighted_round_robin with its fields, and the config parses', () => {
    const converted = convert(
      lbp({
        '@type': CSWRR,
        blackoutPeriod: '5s',
        weightUpdatePeriod: '0.250s',
        enableOobLoadReport: false,
        errorUtilizationPenalty: 1.5,
      }),
    );
    assert.deepEqual(converted, [
      {
        weighted_round_robin: {
          enableOobLoadReport: false,
          blackoutPeriod: '5.000000000s',
          weightUpdatePeriod: '0.250000000s',
          errorUtilizationPenalty: 1.5,
        },
      },
    ]);
    const parsed = registerAllPolicies(new Registry()).parseLbConfigList(converted);
    assert.equal(parsed.factory.name, 'weighted_round_robin');
    assert.equal((parsed.config as { blackoutPeriodMs: number }).blackoutPeriodMs, 5000);
  });

  test('A114 "xDS Integration": metric_names_for_computing_utilization is copied over, and parses', () => {
    const saved = process.env[WRR_CUSTOM_METRICS_ENV];
    process.env[WRR_CUSTOM_METRICS_ENV] = 'true';
    try {
      const names = ['named_metrics.queue', 'utilization.gpu'];
      const converted = convert(lbp({ '@type': CSWRR, metricNamesForComputingUtilization: names }));
      assert.deepEqual(converted, [{ weighted_round_robin: { metricNamesForComputingUtilization: names } }]);
      const parsed = registerAllPolicies(new Registry()).parseLbConfigList(converted);
      assert.deepEqual((parsed.config as { utilizationMetrics: unknown }).utilizationMetrics, [
        { map: 'namedMetrics', key: 'queue' },
        { map: 'utilization', key: 'gpu' },
      ]);
      // Unset (empty) stays out of the converted config, as before A114.
      assert.deepEqual(convert(lbp({ '@type': CSWRR })), [{ weighted_round_robin: {} }]);
    } finally {
      if (saved === undefined) delete process.env[WRR_CUSTOM_METRICS_ENV];
      else process.env[WRR_CUSTOM_METRICS_ENV] = saved;
    }
  });

  test('A58: a negative error_utilization_penalty is NACKed; without the policy registered the entry is skipped', () => {
    nacks(
      () => convert(lbp({ '@type': CSWRR, errorUtilizationPenalty: -1 })),
      `${FIRST} (ClientSideWeightedRoundRobin).error_utilization_penalty`,
      /negative/,
    );
    const registry = new Registry();
    registry.register(roundRobinFactory);
    assert.deepEqual(convert(lbp({ '@type': CSWRR }, roundRobin()), { registry }), [{ round_robin: {} }]);
  });
});
