// lbtree's Envoy messages are generated (src/protos/gen, @bufbuild/protobuf) by scripts/gen-protos.mjs. This file
// checks them against an independent reading of the same official .proto files — protobufjs loading what the
// @grpc/grpc-js-xds devDependency ships — so a generation mistake (a file staged from the wrong place, the
// patched validate.proto, a missing import) cannot hide: first field by field, then by sending real
// resources through both codecs in both directions.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import {
  type DescField,
  type DescMessage,
  fromBinary,
  type JsonValue,
  ScalarType,
  toBinary,
  toJson,
} from '@bufbuild/protobuf';
import protobuf from 'protobufjs';
import { ClusterSchema } from '../../src/protos/gen/envoy/config/cluster/v3/cluster_pb.js';
import { ClusterLoadAssignmentSchema } from '../../src/protos/gen/envoy/config/endpoint/v3/endpoint_pb.js';
import { messageFromJson } from '../../src/protos/json.js';
import { xdsTypeRegistry } from '../../src/protos/type-registry.js';
import {
  assignment,
  edsCluster,
  lbp,
  leastRequest,
  pickFirst,
  ringHash,
  roundRobin,
  typedStruct,
  wrrLocality,
} from './helpers.js';

const require = createRequire(import.meta.url);
const xdsPackage = dirname(require.resolve('@grpc/grpc-js-xds/package.json'));
const protobufjsPackage = dirname(require.resolve('protobufjs/package.json'));
const INCLUDE_DIRS = [
  join(xdsPackage, 'deps/envoy-api'),
  join(xdsPackage, 'deps/xds'),
  join(xdsPackage, 'deps/googleapis'),
  join(xdsPackage, 'deps/protoc-gen-validate'),
  protobufjsPackage, // google/protobuf/*.proto
];

const FILES = [
  'envoy/config/cluster/v3/cluster.proto',
  'envoy/config/endpoint/v3/endpoint.proto',
  'envoy/extensions/load_balancing_policies/ring_hash/v3/ring_hash.proto',
  'envoy/extensions/load_balancing_policies/round_robin/v3/round_robin.proto',
  'envoy/extensions/load_balancing_policies/wrr_locality/v3/wrr_locality.proto',
  'envoy/extensions/load_balancing_policies/least_request/v3/least_request.proto',
  'envoy/extensions/load_balancing_policies/pick_first/v3/pick_first.proto',
  'xds/type/v3/typed_struct.proto',
  'udpa/type/v1/typed_struct.proto',
  'envoy/service/discovery/v3/ads.proto',
  'envoy/service/status/v3/csds.proto',
  'envoy/service/load_stats/v3/lrs.proto',
  'envoy/config/listener/v3/listener.proto',
  'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
  'envoy/extensions/filters/http/router/v3/router.proto',
  'envoy/config/route/v3/route.proto',
  'envoy/extensions/clusters/aggregate/v3/cluster.proto',
  'envoy/extensions/load_balancing_policies/client_side_weighted_round_robin/v3/client_side_weighted_round_robin.proto',
  'envoy/extensions/filters/http/stateful_session/v3/stateful_session.proto',
  'envoy/extensions/http/stateful_session/cookie/v3/cookie.proto',
  'google/rpc/status.proto',
];

function loadOfficial(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    for (const dir of INCLUDE_DIRS) {
      const candidate = join(dir, target);
      if (existsSync(candidate)) return candidate;
    }
    return target;
  };
  root.loadSync(FILES, { keepCase: true });
  root.resolveAll();
  return root;
}

const official = loadOfficial();

/** protobufjs ships google/protobuf types with camelCase field names; everything else keeps proto names. */
function officialField(type: protobuf.Type, name: string, jsonName: string): protobuf.Field | undefined {
  return type.fields[name] ?? type.fields[jsonName];
}

/** protobufjs's spelling of a scalar type: the lower-case proto keyword. */
function scalarName(scalar: ScalarType): string {
  return ScalarType[scalar].toLowerCase();
}

/** protobufjs's spelling of a generated field's element type: a scalar keyword or a full type name. */
function typeNameOf(f: DescField): string {
  if (f.fieldKind === 'scalar') return scalarName(f.scalar);
  if (f.fieldKind === 'enum') return f.enum.typeName;
  if (f.fieldKind === 'message') return f.message.typeName;
  const kind = f.fieldKind === 'list' ? f.listKind : f.mapKind;
  if (kind === 'scalar') return scalarName(f.scalar!);
  return kind === 'enum' ? f.enum!.typeName : f.message!.typeName;
}

/** Fields scripts/gen-protos.mjs adds to the shipped .proto copies: [name, number] per message. */
const ADDED_FIELDS: Readonly<Record<string, readonly [string, number]>> = {
  'validate.StringRules': ['ignore_empty', 26],
  'envoy.extensions.load_balancing_policies.client_side_weighted_round_robin.v3.ClientSideWeightedRoundRobin':
    ['metric_names_for_computing_utilization', 7],
};

describe('the generated Envoy messages against the official .proto definitions read by protobufjs', () => {
  test('every generated message protobufjs loaded: same fields, numbers, types, labels, map keys, oneofs', () => {
    let checked = 0;
    for (const type of xdsTypeRegistry) {
      if (type.kind !== 'message' || type.typeName.startsWith('google.protobuf.')) continue;
      const o = official.lookup(type.typeName);
      if (!(o instanceof protobuf.Type)) continue;
      checked++;
      // The deliberate differences: gen-protos adds StringRules.ignore_empty (26) to the old
      // protoc-gen-validate copy, because envoy's protocol.proto uses it, and upstream envoy's
      // ClientSideWeightedRoundRobin.metric_names_for_computing_utilization (7) for A114.
      const addedField = ADDED_FIELDS[type.typeName];
      const added = addedField ? 1 : 0;
      assert.equal(type.fields.length, o.fieldsArray.length + added, `${type.typeName} field count`);
      for (const f of type.fields) {
        const where: string = `${type.typeName}.${f.name}`;
        if (addedField && f.name === addedField[0] && f.number === addedField[1]) continue;
        const of = officialField(o, f.name, f.jsonName);
        assert.ok(of, `${where} exists in the official definition`);
        assert.equal(f.number, of.id, `${where} number`);
        const officialType = of.resolvedType ? of.resolvedType.fullName.slice(1) : of.type;
        assert.equal(typeNameOf(f), officialType, `${where} type`);
        assert.equal(f.fieldKind === 'list', of.repeated && !of.map, `${where} repeated`);
        assert.equal(
          f.fieldKind === 'map' ? scalarName(f.mapKey) : undefined,
          of.map ? (of as unknown as protobuf.MapField).keyType : undefined,
          `${where} map key`,
        );
        const oneof = of.partOf && !of.partOf.name.startsWith('_') ? of.partOf.name : undefined;
        assert.equal(f.oneof?.name, oneof, `${where} oneof`);
      }
    }
    assert.ok(checked >= 400, `${checked} message types checked`);
  });

  test('every value of every generated enum protobufjs loaded has the official number', () => {
    let checked = 0;
    for (const type of xdsTypeRegistry) {
      if (type.kind !== 'enum' || type.typeName.startsWith('google.protobuf.')) continue;
      const o = official.lookup(type.typeName);
      if (!(o instanceof protobuf.Enum)) continue;
      checked++;
      for (const v of type.values) assert.equal(o.values[v.name], v.number, `${type.typeName}.${v.name}`);
    }
    assert.ok(checked >= 50, `${checked} enums checked`);
  });
});

/** Decodes bytes with the official definition, expanding Any values whose type the official root knows. */
function officialDecode(typeName: string, bytes: Uint8Array): Record<string, unknown> {
  const type = official.lookupType(typeName);
  const object = type.toObject(type.decode(bytes), {
    longs: String,
    enums: String,
    bytes: String,
    oneofs: false,
  });
  return expandAnys(object) as Record<string, unknown>;
}

function expandAnys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(expandAnys);
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  // An Any: type_url naming a message the official root defines, and value bytes (omitted when empty).
  const keys = Object.keys(o);
  if (
    typeof o.type_url === 'string' &&
    (o.value === undefined || typeof o.value === 'string') &&
    keys.every((k) => k === 'type_url' || k === 'value')
  ) {
    const name = o.type_url.slice(o.type_url.lastIndexOf('/') + 1);
    if (official.lookup(name) instanceof protobuf.Type) {
      return {
        '@type': name,
        ...officialDecode(name, Buffer.from((o.value as string | undefined) ?? '', 'base64')),
      };
    }
  }
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, expandAnys(x)]));
}

/** Encodes with the official definition from protobufjs's object form (Anys given as `{ '@type', ...fields }`). */
function officialEncode(typeName: string, object: Record<string, unknown>): Uint8Array {
  const type = official.lookupType(typeName);
  return type.encode(type.fromObject(collapseAnys(object) as Record<string, unknown>)).finish();
}

function collapseAnys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(collapseAnys);
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  if (typeof o['@type'] === 'string') {
    const { '@type': name, ...rest } = o;
    return {
      type_url: `type.googleapis.com/${name}`,
      value: Buffer.from(officialEncode(name as string, rest)).toString('base64'),
    };
  }
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, collapseAnys(x)]));
}

/** Our bytes for a proto3 JSON resource. */
function ourEncode(schema: DescMessage, json: unknown): Uint8Array {
  return toBinary(schema, messageFromJson(schema, json));
}

/** Our proto3 JSON for bytes. */
function ourJson(schema: DescMessage, bytes: Uint8Array): JsonValue {
  return toJson(schema, fromBinary(schema, bytes), { registry: xdsTypeRegistry });
}

const A52_CLUSTER = edsCluster({
  lbPolicy: 'LEAST_REQUEST',
  leastRequestLbConfig: { choiceCount: 3 },
  loadBalancingPolicy: lbp(
    wrrLocality(
      lbp(
        typedStruct('type.googleapis.com/myorg.MyCustomLeastRequestPolicy', {
          choiceCount: 2,
          nested: { list: [1, 'a', true, null] },
        }),
        typedStruct('type.googleapis.com/myorg.Other', { x: 'y' }, 'udpa'),
        roundRobin(),
      ),
    ),
    ringHash({
      hashFunction: 'XX_HASH',
      minimumRingSize: '2048',
      maximumRingSize: '8388608',
      useHostnameForHashing: true,
    }),
    leastRequest({ choiceCount: 4, activeRequestBias: { defaultValue: 1.5, runtimeKey: 'k' } }),
    pickFirst({ shuffleAddressList: true }),
  ),
  connectTimeout: '1.500s', // the canonical form, so the JSON written back is the JSON read
  lrsServer: { self: {} },
  metadata: { filterMetadata: { 'com.example': { team: 'lb' } } },
});

const LEGACY_CLUSTER = edsCluster({
  edsClusterConfig: { edsConfig: { ads: {}, resourceApiVersion: 'V3' }, serviceName: 'eds-a' },
  lbPolicy: 'RING_HASH',
  ringHashLbConfig: { minimumRingSize: '100', maximumRingSize: '200', hashFunction: 'MURMUR_HASH_2' },
});

const CLA = {
  ...assignment([
    {
      zone: 'a',
      weight: 3,
      endpoints: [
        {
          address: '10.0.0.1',
          additional: ['fd00::1', '10.1.0.1'],
          weight: 2,
          hashKey: 'k1',
          health: 'HEALTHY',
        },
        { address: '10.0.0.2', port: 8080, health: 'DRAINING' },
      ],
    },
    { zone: 'b', weight: 1, priority: 2, endpoints: ['10.0.0.3'] },
  ]),
  policy: {
    dropOverloads: [{ category: 'throttle', dropPercentage: { numerator: 3, denominator: 'TEN_THOUSAND' } }],
    overprovisioningFactor: 140,
  },
};

describe('round trips between the generated code and the official definitions read by protobufjs', () => {
  test('our Cluster bytes decode with the official Cluster to the same fields (nested Anys included)', () => {
    const decoded = officialDecode(ClusterSchema.typeName, ourEncode(ClusterSchema, A52_CLUSTER));
    assert.equal(decoded.name, 'cluster-a');
    assert.equal(decoded.type, 'EDS');
    assert.equal(decoded.lb_policy, 'LEAST_REQUEST');
    assert.deepEqual(decoded.least_request_lb_config, { choice_count: { value: 3 } });
    assert.deepEqual(decoded.connect_timeout, { seconds: '1', nanos: 500_000_000 });
    assert.deepEqual(decoded.lrs_server, { self: {} });
    assert.deepEqual(decoded.eds_cluster_config, { eds_config: { ads: {} } });
    const policies = (
      decoded.load_balancing_policy as { policies: { typed_extension_config: Record<string, unknown> }[] }
    ).policies;
    assert.equal(policies.length, 4);
    const wrr = policies[0]!.typed_extension_config;
    assert.equal(wrr.name, 'p0');
    const wrrConfig = wrr.typed_config as Record<string, unknown>;
    assert.equal(wrrConfig['@type'], 'envoy.extensions.load_balancing_policies.wrr_locality.v3.WrrLocality');
    const inner = (
      wrrConfig.endpoint_picking_policy as typeof decoded.load_balancing_policy & {
        policies: { typed_extension_config: { typed_config: Record<string, unknown> } }[];
      }
    ).policies;
    assert.equal(inner[0]!.typed_extension_config.typed_config['@type'], 'xds.type.v3.TypedStruct');
    assert.equal(
      inner[0]!.typed_extension_config.typed_config.type_url,
      'type.googleapis.com/myorg.MyCustomLeastRequestPolicy',
    );
    const struct = inner[0]!.typed_extension_config.typed_config.value as { fields: Record<string, unknown> };
    assert.deepEqual(struct.fields.choiceCount, { numberValue: 2 });
    assert.equal(inner[1]!.typed_extension_config.typed_config['@type'], 'udpa.type.v1.TypedStruct');
    assert.deepEqual(inner[2]!.typed_extension_config.typed_config, {
      '@type': 'envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin',
    });
    assert.deepEqual(policies[1]!.typed_extension_config.typed_config, {
      '@type': 'envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash',
      hash_function: 'XX_HASH',
      minimum_ring_size: { value: '2048' },
      maximum_ring_size: { value: '8388608' },
      use_hostname_for_hashing: true,
    });
    assert.deepEqual(policies[2]!.typed_extension_config.typed_config, {
      '@type': 'envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest',
      choice_count: { value: 4 },
      active_request_bias: { default_value: 1.5, runtime_key: 'k' },
    });
    assert.deepEqual(policies[3]!.typed_extension_config.typed_config, {
      '@type': 'envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst',
      shuffle_address_list: true,
    });
  });

  test('the legacy Cluster fields and the ClusterLoadAssignment decode with the official definitions', () => {
    const legacy = officialDecode(ClusterSchema.typeName, ourEncode(ClusterSchema, LEGACY_CLUSTER));
    assert.equal(legacy.lb_policy, 'RING_HASH');
    assert.deepEqual(legacy.ring_hash_lb_config, {
      minimum_ring_size: { value: '100' },
      maximum_ring_size: { value: '200' },
      hash_function: 'MURMUR_HASH_2',
    });
    assert.deepEqual(legacy.eds_cluster_config, {
      eds_config: { ads: {}, resource_api_version: 'V3' },
      service_name: 'eds-a',
    });

    const cla = officialDecode(
      ClusterLoadAssignmentSchema.typeName,
      ourEncode(ClusterLoadAssignmentSchema, CLA),
    );
    assert.equal(cla.cluster_name, 'cluster-a');
    const [a, b] = cla.endpoints as Record<string, unknown>[];
    assert.deepEqual(a!.locality, { region: 'r', zone: 'a' });
    assert.deepEqual(a!.load_balancing_weight, { value: 3 });
    assert.equal(a!.priority, undefined); // 0 is not written
    assert.equal(b!.priority, 2);
    const [e1, e2] = a!.lb_endpoints as Record<string, unknown>[];
    assert.deepEqual(e1, {
      endpoint: {
        address: { socket_address: { address: '10.0.0.1', port_value: 80 } },
        additional_addresses: [
          { address: { socket_address: { address: 'fd00::1', port_value: 80 } } },
          { address: { socket_address: { address: '10.1.0.1', port_value: 80 } } },
        ],
      },
      load_balancing_weight: { value: 2 },
      health_status: 'HEALTHY',
      metadata: { filter_metadata: { 'envoy.lb': { fields: { hash_key: { stringValue: 'k1' } } } } },
    });
    assert.equal(e2!.health_status, 'DRAINING');
    assert.deepEqual((e2!.endpoint as { address: unknown }).address, {
      socket_address: { address: '10.0.0.2', port_value: 8080 },
    });
    assert.deepEqual(cla.policy, {
      drop_overloads: [
        { category: 'throttle', drop_percentage: { numerator: 3, denominator: 'TEN_THOUSAND' } },
      ],
      overprovisioning_factor: { value: 140 },
    });
  });

  test('official bytes decode with our codec to what our own encoding decodes to', () => {
    for (const [type, json] of [
      [ClusterSchema, A52_CLUSTER],
      [ClusterSchema, LEGACY_CLUSTER],
      [ClusterLoadAssignmentSchema, CLA],
    ] as const) {
      const ours = ourEncode(type, json);
      const theirs = officialEncode(type.typeName, officialDecode(type.typeName, ours));
      assert.deepEqual(ourJson(type, theirs), ourJson(type, ours), type.typeName);
      // And the proto3 JSON we read is the JSON we write back (defaults left out).
      assert.deepEqual(ourJson(type, ours), normalize(json));
    }
  });
});

/** The proto3 JSON form our writer produces for the test inputs: JSON names, 64-bit integers as strings. */
function normalize(json: unknown): unknown {
  if (Array.isArray(json)) return json.map(normalize);
  if (json === null || typeof json !== 'object') return json;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(json)) {
    if (k === 'priority' && v === 0) continue;
    out[k] = k === 'minimumRingSize' || k === 'maximumRingSize' ? String(v) : normalize(v);
  }
  return out;
}
