// Hostile and malformed protobuf / proto3 JSON input (issue 10 §2): decoding is bounded (no stack overflow
// however deep the nesting), errors name the field path, and NACK reasons stay short.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create, toBinary } from '@bufbuild/protobuf';
import { WireType } from '@bufbuild/protobuf/wire';
import { anyPack, ValueSchema } from '@bufbuild/protobuf/wkt';
import { LoadBalancingPolicySchema } from '../../src/protos/gen/envoy/config/cluster/v3/cluster_pb.js';
import { ClusterLoadAssignmentSchema } from '../../src/protos/gen/envoy/config/endpoint/v3/endpoint_pb.js';
import { MaglevSchema } from '../../src/protos/gen/envoy/extensions/load_balancing_policies/maglev/v3/maglev_pb.js';
import { messageFromJson } from '../../src/protos/json.js';
import {
  clusterLbConfig,
  clusterToTreeFromJson,
  convertLoadBalancingPolicy,
  decodeCluster,
  decodeClusterLoadAssignment,
  encodeClusterLoadAssignment,
  MAX_NACK_REASON_LENGTH,
  MAX_PROTO_NESTING,
  ProtoJsonError,
  XdsResourceError,
} from '../../src/xds/index.js';
import { decodeOrNack } from '../../src/xds/resources/decode-or-nack.js';
import { capNackReason, listWithin } from '../../src/xds/resources/errors.js';
import { assignment, edsCluster, lbp, roundRobin } from './helpers.js';

/** `levels` nested groups of an unknown field (number 999): start-group tags, then as many end-group tags. */
function nestedGroups(levels: number): Uint8Array {
  const start = [0xbb, 0x3e]; // (999 << 3) | 3, as a varint
  const end = [0xbc, 0x3e]; // (999 << 3) | 4
  const bytes = new Uint8Array(levels * 4);
  for (let i = 0; i < levels; i++) bytes.set(start, i * 2);
  for (let i = 0; i < levels; i++) bytes.set(end, levels * 2 + i * 2);
  return bytes;
}

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

/** A google.protobuf.Value nested `levels` deep: list_value { values { list_value { … } } }. */
function nestedValues(levels: number): Uint8Array {
  // Built back to front (each level is a tag and a length in front of everything inside it), in linear time.
  const reversed: number[] = [];
  const prefix = (tag: number) => {
    reversed.push(...varint(reversed.length).reverse(), tag);
  };
  for (let i = 0; i < levels; i++) {
    prefix(0x0a); // ListValue.values = 1
    prefix(0x32); // Value.list_value = 6
  }
  return Uint8Array.from(reversed.reverse());
}

function throwsCleanly(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (e: Error) => {
    assert.ok(!(e instanceof RangeError), `a RangeError escaped: ${e.message}`);
    assert.doesNotMatch(e.message, /call stack/);
    assert.match(e.message, pattern);
    return true;
  });
}

describe('issue 10 §2: deeply nested protobuf input is rejected, never overflowing the stack', () => {
  test('100,000 nested groups in a Cluster: a NACK naming the recursion limit', () => {
    const bytes = nestedGroups(100_000);
    throwsCleanly(
      () => decodeCluster(bytes),
      /^can't decode envoy\.config\.cluster\.v3\.Cluster: .*maximum recursion depth/,
    );
    throwsCleanly(() => clusterLbConfig(bytes), /maximum recursion depth/);
    assert.throws(() => decodeCluster(bytes), XdsResourceError);
  });

  test(`groups and messages up to the limit decode; ${MAX_PROTO_NESTING + 1} levels do not`, () => {
    assert.equal(decodeCluster(nestedGroups(MAX_PROTO_NESTING - 1)).name, '');
    throwsCleanly(() => decodeCluster(nestedGroups(MAX_PROTO_NESTING + 1)), /maximum recursion depth/);
    assert.ok(decodeOrNack(ValueSchema, nestedValues(MAX_PROTO_NESTING / 2 - 1)));
    throwsCleanly(() => decodeOrNack(ValueSchema, nestedValues(50_000)), /maximum recursion depth/);
  });

  test('proto3 JSON nested 50,000 levels deep is a ProtoJsonError, not a stack overflow', () => {
    let value: unknown = 'leaf';
    for (let i = 0; i < 50_000; i++) value = [value];
    const cluster = edsCluster({ metadata: { filterMetadata: { deep: { v: value } } } });
    assert.throws(
      () => clusterToTreeFromJson(cluster, assignment([])),
      (e: Error) => e instanceof ProtoJsonError && /^\$\.metadata\.filterMetadata\.deep/.test(e.path),
    );
  });
});

describe('malformed input names the field path', () => {
  test('malformed bytes: the reason says which field was being read', () => {
    const json = assignment([{ zone: 'a', endpoints: ['10.0.0.1', '10.0.0.2'] }]);
    const bytes = encodeClusterLoadAssignment(json);
    assert.throws(
      () => decodeClusterLoadAssignment(bytes.subarray(0, bytes.length - 4)),
      /^XdsResourceError: can't decode envoy\.config\.endpoint\.v3\.ClusterLoadAssignment: premature EOF \(reading endpoints\[0\]\)$/,
    );
    // An unterminated varint deep inside: in the second endpoint's Endpoint message.
    const cla = messageFromJson(ClusterLoadAssignmentSchema, json);
    const host = cla.endpoints[0]!.lbEndpoints[1]!.hostIdentifier;
    assert.equal(host.case, 'endpoint');
    host.value!.$unknown = [{ no: 50, wireType: WireType.Varint, data: Uint8Array.of(0xff) }];
    assert.throws(
      () => decodeClusterLoadAssignment(toBinary(ClusterLoadAssignmentSchema, cla)),
      /can't decode envoy\.config\.endpoint\.v3\.ClusterLoadAssignment: .* \(reading endpoints\[0\]\.lb_endpoints\[1\]\.endpoint\)$/,
    );
  });

  test('proto3 JSON: unknown fields (also inside lists, maps and Anys), bad values, oneof conflicts', () => {
    const cla = assignment([{ zone: 'a', endpoints: ['10.0.0.1', '10.0.0.2'] }]) as {
      endpoints: { lbEndpoints: { endpoint: Record<string, unknown> }[] }[];
    };
    cla.endpoints[0]!.lbEndpoints[1]!.endpoint.adress = {};
    assert.throws(
      () => encodeClusterLoadAssignment(cla),
      (e: Error) =>
        e instanceof ProtoJsonError &&
        e.path === '$.endpoints[0].lbEndpoints[1].endpoint.adress' &&
        /unknown field of envoy\.config\.endpoint\.v3\.Endpoint/.test(e.problem),
    );
    const policy = lbp({
      '@type': 'type.googleapis.com/envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash',
      minimumRingSize: 'many',
    });
    assert.throws(
      () => messageFromJson(LoadBalancingPolicySchema, policy),
      (e: Error) =>
        e instanceof ProtoJsonError &&
        e.path === '$.policies[0].typedExtensionConfig.typedConfig.minimumRingSize' &&
        /many/.test(e.problem),
    );
    assert.throws(
      () => messageFromJson(LoadBalancingPolicySchema, lbp({ '@type': 'type.googleapis.com/no.Such' })),
      (e: Error) =>
        e instanceof ProtoJsonError &&
        e.path === '$.policies[0].typedExtensionConfig.typedConfig["@type"]' &&
        /unknown type/.test(e.problem),
    );
    assert.throws(
      () => clusterToTreeFromJson(edsCluster({ type: 'EDS', clusterType: { name: 'x' } }), assignment([])),
      (e: Error) => e instanceof ProtoJsonError && e.path === '$',
    );
    assert.throws(
      () => clusterToTreeFromJson(edsCluster({ lbPolicy: 'FASTEST' }), assignment([])),
      (e: Error) => e instanceof ProtoJsonError && e.path === '$.lbPolicy' && /LbPolicy/.test(e.problem),
    );
    // ignoreUnknownFields skips unknown fields at every depth, Anys included.
    const tree = clusterToTreeFromJson(
      edsCluster({ loadBalancingPolicy: lbp({ ...roundRobin(), extra: 1 }), extra: 2 }),
      assignment([{ zone: 'a', endpoints: ['10.0.0.1'] }]),
      { ignoreUnknownFields: true },
    );
    assert.equal(tree.endpoints.length, 1);
  });
});

describe('issue 10 §2: NACK reasons are capped', () => {
  test(`100,000 unsupported policies: the reason stays within ${MAX_NACK_REASON_LENGTH} characters and says how many were left out`, () => {
    // One encoded `policies` entry, repeated: a LoadBalancingPolicy is the concatenation of its entries.
    const one = toBinary(
      LoadBalancingPolicySchema,
      create(LoadBalancingPolicySchema, {
        policies: [
          { typedExtensionConfig: { name: 'p', typedConfig: anyPack(MaglevSchema, create(MaglevSchema)) } },
        ],
      }),
    );
    const bytes = new Uint8Array(one.length * 100_000);
    for (let i = 0; i < 100_000; i++) bytes.set(one, i * one.length);
    assert.throws(
      () => convertLoadBalancingPolicy(bytes),
      (e: Error) => {
        assert.ok(e instanceof XdsResourceError);
        assert.ok(e.message.length <= MAX_NACK_REASON_LENGTH, `${e.message.length} characters`);
        assert.match(e.message, /^load_balancing_policy: no supported load balancing policy among \[envoy\./);
        assert.match(e.message, /, … \(\d{5} more\)\]$/);
        return true;
      },
    );
  });

  test('any longer reason is cut to the maximum, ending with how much was cut', () => {
    const long = 'x'.repeat(10_000);
    const capped = capNackReason(long);
    assert.ok(capped.length <= MAX_NACK_REASON_LENGTH);
    const cut = Number(/… \((\d+) more characters\)$/.exec(capped)?.[1]);
    assert.equal(capped.indexOf('…') + cut, long.length);
    assert.equal(capNackReason('short'), 'short');
    assert.ok(new XdsResourceError('field', long).message.length <= MAX_NACK_REASON_LENGTH);
    assert.equal(listWithin(['a', 'b', 'c'], 3), 'a, … (2 more)');
    assert.equal(listWithin(['a', 'b']), 'a, b');
  });
});
