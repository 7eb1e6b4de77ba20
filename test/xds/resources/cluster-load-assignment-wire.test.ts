// The EDS fast path (cluster-load-assignment-wire.ts) against the reference path (fromBinary, then
// parseClusterLoadAssignment): for random and edge-case ClusterLoadAssignments, the resource type's answer —
// the validated endpoints, or the NACK with its field path — is the reference's; and the fast path really
// reads the encodings control planes send, rather than handing everything back.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create, type MessageInitShape, toBinary } from '@bufbuild/protobuf';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { anyPack } from '@bufbuild/protobuf/wkt';
import { addressKey } from '../../../src/core/index.js';
import { SocketAddressSchema } from '../../../src/protos/gen/envoy/config/core/v3/address_pb.js';
import { LocalitySchema, MetadataSchema } from '../../../src/protos/gen/envoy/config/core/v3/base_pb.js';
import {
  EndpointSchema,
  LbEndpointSchema,
  LocalityLbEndpointsSchema,
} from '../../../src/protos/gen/envoy/config/endpoint/v3/endpoint_components_pb.js';
import {
  type ClusterLoadAssignment,
  ClusterLoadAssignmentSchema,
} from '../../../src/protos/gen/envoy/config/endpoint/v3/endpoint_pb.js';
import { RingHashSchema } from '../../../src/protos/gen/envoy/extensions/load_balancing_policies/ring_hash/v3/ring_hash_pb.js';
import { seededRandom } from '../../../src/sim/seeded-random.js';
import type { XdsDecodeResult } from '../../../src/xds/client/resource-type.js';
import {
  decodeClusterLoadAssignment,
  parseClusterLoadAssignment,
  type XdsEndpointResource,
} from '../../../src/xds/resources/cluster-load-assignment.js';
import { readClusterLoadAssignment } from '../../../src/xds/resources/cluster-load-assignment-wire.js';
import { endpointResourceType } from '../../../src/xds/resources/endpoint.js';
import { decodeResource } from '../../../src/xds/resources/validation.js';
import { type ResolvedXdsOptions, resolveXdsOptions } from '../../../src/xds/resources/xds-options.js';

type Unknown = { no: number; wireType: WireType; data: Uint8Array };
type WithUnknown = { $unknown?: Unknown[] };

function reference(bytes: Uint8Array, options: ResolvedXdsOptions): XdsDecodeResult<XdsEndpointResource> {
  return decodeResource(
    () => decodeClusterLoadAssignment(bytes),
    (cla) => cla.clusterName,
    (cla) => parseClusterLoadAssignment(cla, options),
  );
}

/** Builds every address's cached key, so that objects from both paths compare field by field. */
function withKeys(result: XdsDecodeResult<XdsEndpointResource>) {
  if (result.ok) {
    for (const p of result.value.priorities)
      for (const l of p) for (const e of l.endpoints) for (const a of e.addresses) addressKey(a);
  }
  return result;
}

/** The resource type's answer equals the reference's; returns whether the fast path answered. */
function assertSameAsReference(bytes: Uint8Array, options: ResolvedXdsOptions, what: string): boolean {
  const lean = readClusterLoadAssignment(bytes, options);
  const expected = withKeys(reference(bytes, options));
  assert.deepStrictEqual(withKeys(endpointResourceType.decode(bytes, options)), expected, what);
  if (lean !== undefined) {
    assert.ok(
      expected.ok,
      `${what}: the fast path accepted what the reference rejects: ${!expected.ok && expected.error}`,
    );
  }
  return lean !== undefined;
}

const lengthPrefixed = (payload: Uint8Array) => new BinaryWriter().bytes(payload).finish();
const varint = (v: number) => new BinaryWriter().uint32(v).finish();

/** An unknown-field record as toBinary writes it back: tag, then `data` (which carries its own length). */
function unknownField(random: () => number): Unknown {
  const no = 1000 + Math.floor(random() * 100);
  switch (Math.floor(random() * 5)) {
    case 0:
      return { no, wireType: WireType.Varint, data: varint(Math.floor(random() * 2 ** 31)) };
    case 1:
      return { no, wireType: WireType.Bit32, data: new Uint8Array([1, 2, 3, 4]) };
    case 2:
      return { no, wireType: WireType.Bit64, data: new Uint8Array(8).fill(7) };
    case 3:
      return { no, wireType: WireType.LengthDelimited, data: lengthPrefixed(new Uint8Array([8, 1, 18, 0])) };
    default: {
      // A group holding a varint field, closed by its end tag.
      const end = new BinaryWriter().tag(no, WireType.EndGroup).finish();
      return { no, wireType: WireType.StartGroup, data: new Uint8Array([8, 5, ...end]) };
    }
  }
}

function addUnknown(message: WithUnknown, record: Unknown): void {
  message.$unknown = [...(message.$unknown ?? []), record];
}

const V4 = ['10.0.0.1', '10.0.0.2', '127.0.0.1', '0.0.0.0', '255.255.255.255', '192.168.1.10'];
const V6 = ['::1', 'fd00::1', 'fd00::2', '2001:db8::7', '::ffff:10.0.0.1', 'fe80::1%eth0'];
const BAD_HOSTS = ['', 'localhost', '10.0.0.256', '010.0.0.1', '1.2.3', 'fd00:::1', 'é.example'];

/**
 * A random ClusterLoadAssignment with edge cases in every field the validation reads; the address pool is
 * small, so duplicates happen. `outside` says when it uses an encoding the fast path hands back.
 */
function randomAssignment(random: () => number): { cla: ClusterLoadAssignment; outside: boolean } {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const chance = (p: number) => random() < p;
  let outside = false;
  const host = () => (chance(0.03) ? pick(BAD_HOSTS) : chance(0.3) ? pick(V6) : pick(V4));
  const port = () => (chance(0.03) ? pick([0, 65535, 65536, 2 ** 32 - 1]) : pick([80, 8080, 443]));
  const weight = () =>
    chance(0.5) ? undefined : chance(0.1) ? pick([0, 1, 2 ** 32 - 1, 2 ** 31]) : 1 + Math.floor(random() * 5);
  const address = (): MessageInitShape<typeof SocketAddressSchema> | undefined => {
    if (chance(0.02)) return undefined;
    const socket: MessageInitShape<typeof SocketAddressSchema> = {
      address: host(),
      portSpecifier: chance(0.02)
        ? (() => {
            outside = true;
            return { case: 'namedPort' as const, value: 'http' };
          })()
        : chance(0.02)
          ? { case: undefined }
          : { case: 'portValue' as const, value: port() },
      protocol: chance(0.1) ? 1 : 0,
      resolverName: chance(0.05) ? 'dns' : '',
      ipv4Compat: chance(0.05),
    };
    return socket;
  };
  const addressMessage = () => {
    if (chance(0.02)) {
      outside = true;
      return { address: { case: 'pipe' as const, value: { path: '/tmp/s' } } };
    }
    const socket = address();
    return socket === undefined ? {} : { address: { case: 'socketAddress' as const, value: socket } };
  };
  const lbEndpoint = () => {
    const e = create(LbEndpointSchema, {
      healthStatus: chance(0.7) ? pick([0, 1]) : pick([2, 3, 4, 5, 9]),
      loadBalancingWeight: weight(),
      hostIdentifier: chance(0.02)
        ? (() => {
            outside = true;
            return { case: 'endpointName' as const, value: 'named' };
          })()
        : chance(0.01)
          ? { case: undefined }
          : {
              case: 'endpoint' as const,
              value: create(EndpointSchema, {
                address: chance(0.01) ? undefined : addressMessage(),
                hostname: chance(0.2) ? `h${Math.floor(random() * 10)}` : '',
                additionalAddresses: Array.from({ length: pick([0, 0, 1, 2]) }, () => ({
                  address: chance(0.02) ? undefined : addressMessage(),
                })),
                healthCheckConfig: chance(0.05) ? { portValue: 9000, hostname: 'hc' } : undefined,
              }),
            },
    });
    if (chance(0.2)) {
      e.metadata = create(MetadataSchema, {
        filterMetadata: chance(0.7)
          ? { 'envoy.lb': { hash_key: pick(['key', '', 7, null, 'k2']) as never, other: 1 } }
          : { istio: { workload: 'w' } },
        typedFilterMetadata: chance(0.3)
          ? { 'envoy.lb': anyPack(RingHashSchema, create(RingHashSchema, { minimumRingSize: 64n })) }
          : {},
      });
    }
    if (chance(0.05)) addUnknown(e, unknownField(random));
    return e;
  };
  const localityEntry = () => {
    const entry = create(LocalityLbEndpointsSchema, {
      locality: chance(0.1)
        ? undefined
        : { region: pick(['r', 'r2']), zone: pick(['z', 'z2', 'z3']), subZone: pick(['', 's']) },
      loadBalancingWeight: chance(0.1)
        ? pick([undefined, 0, 2 ** 32 - 1, 2 ** 31])
        : 1 + Math.floor(random() * 3),
      priority: chance(0.8) ? pick([0, 0, 1]) : pick([2, 3]),
      lbEndpoints: Array.from({ length: Math.floor(random() * 5) }, lbEndpoint),
      proximity: chance(0.05) ? 3 : undefined,
      metadata: chance(0.05) ? { filterMetadata: { x: { y: 'z' } } } : undefined,
    });
    if (chance(0.05)) addUnknown(entry, unknownField(random));
    if (chance(0.03)) {
      // A second locality record: a singular message repeated on the wire merges into the first.
      addUnknown(entry, {
        no: 1,
        wireType: WireType.LengthDelimited,
        data: lengthPrefixed(toBinary(LocalitySchema, create(LocalitySchema, { zone: 'merged' }))),
      });
    }
    if (chance(0.03)) {
      // A second load_balancing_weight wrapper (merges), sometimes empty (keeps the first value).
      const payload = chance(0.5) ? new Uint8Array([8, 9]) : new Uint8Array(0);
      addUnknown(entry, { no: 3, wireType: WireType.LengthDelimited, data: lengthPrefixed(payload) });
    }
    return entry;
  };
  const cla = create(ClusterLoadAssignmentSchema, {
    clusterName: pick(['c', 'cluster-é', '']),
    endpoints: Array.from({ length: Math.floor(random() * 5) }, localityEntry),
    policy: chance(0.2)
      ? {
          dropOverloads: [
            {
              category: 'lb',
              dropPercentage: { numerator: 20, denominator: (chance(0.2) ? 7 : 0) as never },
            },
          ],
        }
      : undefined,
  });
  if (chance(0.03)) {
    outside = true;
    cla.namedEndpoints = { n: create(EndpointSchema, {}) };
  }
  if (chance(0.1)) addUnknown(cla, unknownField(random));
  return { cla, outside };
}

const OPTION_SETS: readonly ResolvedXdsOptions[] = [
  resolveXdsOptions({}),
  resolveXdsOptions({ dualstackEndpoints: false, overrideHost: false, endpointHashKey: false }),
];

describe('EDS fast path: the same answer as fromBinary + the A27 / A61 validation', () => {
  test('random assignments, under each option set (A61 dual-stack, A55 DRAINING, A76 hash keys on and off)', () => {
    const random = seededRandom(2025);
    let accepted = 0;
    let fast = 0;
    for (let i = 0; i < 3000; i++) {
      const { cla, outside } = randomAssignment(random);
      const bytes = toBinary(ClusterLoadAssignmentSchema, cla);
      for (const options of OPTION_SETS) {
        const read = assertSameAsReference(bytes, options, `assignment ${i}`);
        if (reference(bytes, options).ok) {
          accepted++;
          if (read) fast++;
          else assert.ok(outside, `assignment ${i}: accepted, in the fast path's encodings, but handed back`);
        }
      }
    }
    // Enough of both kinds for the comparison to mean something.
    assert.ok(accepted > 1500, `only ${accepted} accepted`);
    assert.ok(fast > 1000, `only ${fast} read by the fast path`);
  });

  test('two encoded assignments back to back merge: endpoints appended, cluster_name and policy merged', () => {
    const random = seededRandom(7);
    let fast = 0;
    for (let i = 0; i < 500; i++) {
      const a = randomAssignment(random);
      const b = randomAssignment(random);
      const ab = toBinary(ClusterLoadAssignmentSchema, a.cla);
      const bytes = new Uint8Array([...ab, ...toBinary(ClusterLoadAssignmentSchema, b.cla)]);
      const read = assertSameAsReference(bytes, OPTION_SETS[0]!, `pair ${i}`);
      if (read) fast++;
      else if (reference(bytes, OPTION_SETS[0]!).ok)
        assert.ok(a.outside || b.outside, `pair ${i}: handed back`);
    }
    assert.ok(fast > 20, `only ${fast} read by the fast path`);
  });

  test('malformed bytes: truncated, bytes flipped, known fields in the wrong wire type — the same NACK', () => {
    const random = seededRandom(99);
    for (let i = 0; i < 1500; i++) {
      const { cla } = randomAssignment(random);
      if (random() < 0.3 && cla.endpoints[0] !== undefined) {
        // priority as a length-delimited record, the way a packed repeated field would look.
        addUnknown(cla.endpoints[0] as WithUnknown, {
          no: 5,
          wireType: WireType.LengthDelimited,
          data: lengthPrefixed(new Uint8Array([1, 2])),
        });
      }
      const bytes = toBinary(ClusterLoadAssignmentSchema, cla);
      if (bytes.length === 0) continue;
      const mutated = bytes.slice(0, random() < 0.5 ? Math.floor(random() * bytes.length) : bytes.length);
      if (random() < 0.5 && mutated.length > 0) {
        mutated[Math.floor(random() * mutated.length)] = Math.floor(random() * 256);
      }
      assertSameAsReference(mutated, OPTION_SETS[0]!, `mutation ${i}`);
    }
  });

  test('nesting: unknown groups nested to the limit of 100 are skipped, past it the NACK is the same', () => {
    for (const depth of [97, 98, 99, 100, 101]) {
      // A group nested `depth` deep inside a SocketAddress (itself at depth 6).
      let group = new Uint8Array(0);
      for (let d = 0; d < depth; d++) {
        const start = new BinaryWriter().tag(1000, WireType.StartGroup).finish();
        const end = new BinaryWriter().tag(1000, WireType.EndGroup).finish();
        group = new Uint8Array([...start, ...group, ...end]);
      }
      const socket = create(SocketAddressSchema, {
        address: '10.0.0.1',
        portSpecifier: { case: 'portValue', value: 80 },
      });
      const head = new BinaryWriter().tag(1000, WireType.StartGroup).finish();
      addUnknown(socket, { no: 1000, wireType: WireType.StartGroup, data: group.subarray(head.length) });
      const cla = create(ClusterLoadAssignmentSchema, {
        clusterName: 'c',
        endpoints: [
          {
            loadBalancingWeight: 1,
            lbEndpoints: [
              {
                hostIdentifier: {
                  case: 'endpoint',
                  value: { address: { address: { case: 'socketAddress', value: socket } } },
                },
              },
            ],
          },
        ],
      });
      assertSameAsReference(toBinary(ClusterLoadAssignmentSchema, cla), OPTION_SETS[0]!, `depth ${depth}`);
    }
  });
});

describe('EDS fast path: what it reads itself', () => {
  function cla(init: MessageInitShape<typeof ClusterLoadAssignmentSchema>) {
    return toBinary(ClusterLoadAssignmentSchema, create(ClusterLoadAssignmentSchema, init));
  }
  const socket = (address: string, port: number) => ({
    address: {
      case: 'socketAddress' as const,
      value: { address, portSpecifier: { case: 'portValue' as const, value: port } },
    },
  });
  const lbEndpoint = (address: string, extra: MessageInitShape<typeof LbEndpointSchema> = {}) => ({
    hostIdentifier: { case: 'endpoint' as const, value: { address: socket(address, 80) } },
    ...extra,
  });

  test('a large assignment with metadata, hash keys, additional addresses, drops and unknown fields', () => {
    const bytes = cla({
      clusterName: 'big',
      endpoints: Array.from({ length: 20 }, (_, l) => ({
        locality: { region: 'r', zone: `z${l}` },
        loadBalancingWeight: 1 + (l % 3),
        priority: l % 2,
        lbEndpoints: Array.from({ length: 50 }, (_, i) =>
          lbEndpoint(`10.0.${l}.${i}`, {
            loadBalancingWeight: 1 + (i % 3),
            healthStatus: i % 7 === 0 ? 3 : 1,
            metadata: { filterMetadata: { 'envoy.lb': { hash_key: `k${l}-${i}` } } },
            hostIdentifier: {
              case: 'endpoint',
              value: {
                address: socket(`10.0.${l}.${i}`, 80),
                additionalAddresses: [{ address: socket(`fd00::${l}:${i}`, 80) }],
                hostname: `h${i}`,
              },
            },
          }),
        ),
      })),
      policy: { dropOverloads: [{ category: 'lb', dropPercentage: { numerator: 5 } }] },
    });
    const options = OPTION_SETS[0]!;
    const value = readClusterLoadAssignment(bytes, options);
    assert.ok(value !== undefined, 'handed back to the reference path');
    assert.ok(assertSameAsReference(bytes, options, 'large'));
    assert.equal(value.priorities.length, 2);
    assert.equal(value.priorities[0]![0]!.endpoints[1]!.hashKey, 'k0-1');
  });

  test('A27: the locality weight sum at 2^32-1 is read, one more is handed back (and NACKed)', () => {
    const two = (second: number) =>
      cla({
        clusterName: 'w',
        endpoints: [
          {
            locality: { zone: 'a' },
            loadBalancingWeight: 2 ** 32 - 2,
            lbEndpoints: [lbEndpoint('10.0.0.1')],
          },
          { locality: { zone: 'b' }, loadBalancingWeight: second, lbEndpoints: [lbEndpoint('10.0.0.2')] },
        ],
      });
    const options = OPTION_SETS[0]!;
    assert.ok(assertSameAsReference(two(1), options, 'sum 2^32-1'));
    assert.equal(assertSameAsReference(two(2), options, 'sum 2^32'), false);
    const nack = endpointResourceType.decode(two(2), options);
    assert.ok(
      !nack.ok && nack.error.startsWith('endpoints[1].load_balancing_weight: '),
      JSON.stringify(nack),
    );
  });

  test('A27: endpoints left out by their health status, and localities without a weight, are not validated', () => {
    const bytes = cla({
      clusterName: 'skip',
      endpoints: [
        { locality: { zone: 'a' }, loadBalancingWeight: 1, lbEndpoints: [lbEndpoint('10.0.0.1')] },
        { locality: { zone: 'a' }, lbEndpoints: [lbEndpoint('10.0.0.1'), lbEndpoint('not-an-ip')] },
        {
          locality: { zone: 'b' },
          loadBalancingWeight: 1,
          lbEndpoints: [lbEndpoint('10.0.0.1', { healthStatus: 2 }), lbEndpoint('bad', { healthStatus: 4 })],
        },
      ],
    });
    assert.ok(assertSameAsReference(bytes, OPTION_SETS[0]!, 'skipped'));
  });

  test('A61: a duplicate additional address is a NACK; with dual-stack off it is not even read', () => {
    const bytes = cla({
      clusterName: 'd',
      endpoints: [
        {
          loadBalancingWeight: 1,
          lbEndpoints: [
            {
              hostIdentifier: {
                case: 'endpoint',
                value: {
                  address: socket('10.0.0.1', 80),
                  additionalAddresses: [{ address: socket('10.0.0.1', 80) }],
                },
              },
            },
          ],
        },
      ],
    });
    assert.equal(assertSameAsReference(bytes, OPTION_SETS[0]!, 'dual-stack on'), false);
    const nack = endpointResourceType.decode(bytes, OPTION_SETS[0]!);
    assert.ok(
      !nack.ok &&
        nack.error.startsWith(
          'endpoints[0].lb_endpoints[0].endpoint.additional_addresses[0].address: duplicate',
        ),
    );
    assert.ok(assertSameAsReference(bytes, OPTION_SETS[1]!, 'dual-stack off'));
  });

  test('the same host on two ports is two addresses; the same host and port twice is a NACK', () => {
    const of = (a: number, b: number) =>
      cla({
        clusterName: 'p',
        endpoints: [
          {
            loadBalancingWeight: 1,
            lbEndpoints: [
              { hostIdentifier: { case: 'endpoint', value: { address: socket('::1', a) } } },
              { hostIdentifier: { case: 'endpoint', value: { address: socket('::1', b) } } },
              { hostIdentifier: { case: 'endpoint', value: { address: socket('::1', 3) } } },
            ],
          },
        ],
      });
    assert.ok(assertSameAsReference(of(1, 2), OPTION_SETS[0]!, 'ports 1, 2, 3'));
    assert.equal(assertSameAsReference(of(1, 1), OPTION_SETS[0]!, 'ports 1, 1, 3'), false);
    assert.equal(assertSameAsReference(of(1, 3), OPTION_SETS[0]!, 'ports 1, 3, 3'), false);
  });

  test('unused schema fields still have to decode (typed metadata, proximity, health_check_config)', () => {
    const endpoint = create(LbEndpointSchema, lbEndpoint('10.0.0.1'));
    const entry = create(LocalityLbEndpointsSchema, { loadBalancingWeight: 1, lbEndpoints: [endpoint] });
    // proximity (6) holding a truncated varint: fromBinary fails, and so must the fast path.
    addUnknown(entry, {
      no: 6,
      wireType: WireType.LengthDelimited,
      data: lengthPrefixed(new Uint8Array([8, 0x80])),
    });
    const bytes = toBinary(
      ClusterLoadAssignmentSchema,
      create(ClusterLoadAssignmentSchema, { endpoints: [entry] }),
    );
    assert.equal(readClusterLoadAssignment(bytes, OPTION_SETS[0]!), undefined);
    assertSameAsReference(bytes, OPTION_SETS[0]!, 'bad proximity');
  });
});
