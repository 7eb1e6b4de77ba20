// EDS: a ClusterLoadAssignment read straight from its wire bytes into the validated endpoint list, without
// the generated message objects in between (issue 25 §5: @bufbuild/protobuf's generic decode plus the
// validation of cluster-load-assignment.ts took about twice grpc-js-xds's decode for 10,000 endpoints).
//
// This is a fast path, not a second definition: it handles the encodings control planes send (fields in any
// order, unknown fields, metadata) and answers `undefined` for anything else — malformed bytes, a resource
// the validation rejects, a field it does not read (named_endpoints, endpoint_name, a pipe address, a named
// port), a repeated singular message — and the caller then runs the reference path (`fromBinary` and
// `parseClusterLoadAssignment`), which gives the value or the NACK with its field path. What it returns is
// equal to what the reference path returns (test/xds/resources/cluster-load-assignment-wire.test.ts).

import { isIP } from 'node:net';
import { create, type DescMessage, fromBinary, mergeFromBinary } from '@bufbuild/protobuf';
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { type Address, type TcpAddress, tcpAddress } from '../../core/index.js';
import { MAX_PROTO_NESTING } from '../../protos/decode.js';
import { AddressSchema, SocketAddressSchema } from '../../protos/gen/envoy/config/core/v3/address_pb.js';
import { LocalitySchema, MetadataSchema } from '../../protos/gen/envoy/config/core/v3/base_pb.js';
import { HealthStatus } from '../../protos/gen/envoy/config/core/v3/health_check_pb.js';
import {
  Endpoint_AdditionalAddressSchema,
  EndpointSchema,
  LbEndpointSchema,
  LocalityLbEndpointsSchema,
} from '../../protos/gen/envoy/config/endpoint/v3/endpoint_components_pb.js';
import {
  type ClusterLoadAssignment_Policy,
  ClusterLoadAssignment_PolicySchema,
  ClusterLoadAssignmentSchema,
} from '../../protos/gen/envoy/config/endpoint/v3/endpoint_pb.js';
import {
  localityIdentity,
  localityKey,
  parseDrops,
  type XdsEndpoint,
  type XdsEndpointResource,
  type XdsHealthStatus,
  type XdsLocality,
} from './cluster-load-assignment.js';
import type { ResolvedXdsOptions } from './xds-options.js';

/** Thrown inside the reader: the bytes are outside the fast path (the reference path decides). */
const NOT_LEAN: unique symbol = Symbol('not for the fast path');

const MAX_UINT32 = 0xffff_ffff;

/** Field numbers the schema knows: a known field the fast path does not read is checked or handed back. */
function known(schema: DescMessage): ReadonlyMap<number, DescMessage['fields'][number]> {
  return new Map(schema.fields.map((f) => [f.number, f]));
}
const CLA_FIELDS = known(ClusterLoadAssignmentSchema);
const LOCALITY_LB_ENDPOINTS_FIELDS = known(LocalityLbEndpointsSchema);
const LOCALITY_FIELDS = known(LocalitySchema);
const LB_ENDPOINT_FIELDS = known(LbEndpointSchema);
const ENDPOINT_FIELDS = known(EndpointSchema);
const ADDITIONAL_ADDRESS_FIELDS = known(Endpoint_AdditionalAddressSchema);
const ADDRESS_FIELDS = known(AddressSchema);
const SOCKET_ADDRESS_FIELDS = known(SocketAddressSchema);
/** google.protobuf.UInt32Value has one field, `value` (1). */
const WRAPPER_VALUE = 1;

/** An endpoint the validation rejects, inside a locality that may yet turn out to be skipped (weight 0). */
const INVALID: unique symbol = Symbol('invalid endpoint');

/** Per priority: its localities, their weight sum, the identities seen (duplicates are rejected). */
interface PriorityGroup {
  readonly localities: XdsLocality[];
  weightSum: number;
  readonly identities: Set<string>;
}

class LeanAssignmentReader {
  private readonly r: BinaryReader;
  private readonly byPriority = new Map<number, PriorityGroup>();
  /** The cluster's addresses so far: host → its port, or its ports when it has several. */
  private readonly seenHosts = new Map<string, number | Set<number>>();
  private clusterName = '';
  /** The hostname of the Endpoint read last. */
  private hostname = '';
  private readonly policies: Uint8Array[] = [];

  constructor(
    private readonly bytes: Uint8Array,
    private readonly options: ResolvedXdsOptions,
  ) {
    this.r = new BinaryReader(bytes);
  }

  read(): XdsEndpointResource {
    const r = this.r;
    const end = r.len;
    // The top-level message is at depth 1, as in fromBinary; unknown fields are skipped with what is left.
    while (r.pos < end) {
      const tag = this.tag();
      const no = tag >>> 3;
      const wt = tag & 7;
      if (no === 1 && wt === WireType.LengthDelimited) this.clusterName = r.string(true);
      else if (no === 2 && wt === WireType.LengthDelimited) this.localityLbEndpoints(this.lengthEnd());
      else if (no === 4 && wt === WireType.LengthDelimited) this.policies.push(r.bytes());
      else this.other(CLA_FIELDS, no, wt, 1);
    }
    const numbers = [...this.byPriority.keys()].sort((a, b) => a - b);
    for (let p = 0; p < numbers.length; p++) if (numbers[p] !== p) throw NOT_LEAN;
    // A repeated singular message merges: decoding the occurrences into one message, in order, does that.
    let policy: ClusterLoadAssignment_Policy | undefined;
    for (const bytes of this.policies) {
      policy ??= create(ClusterLoadAssignment_PolicySchema);
      mergeFromBinary(ClusterLoadAssignment_PolicySchema, policy, bytes, {
        recursionLimit: MAX_PROTO_NESTING - 1,
      });
    }
    return {
      clusterName: this.clusterName,
      priorities: numbers.map((p) => this.byPriority.get(p)!.localities),
      drops: parseDrops(policy),
    };
  }

  /** A tag as fromBinary's reader accepts it (field number ≥ 1, wire type ≤ 5, at most a uint32). */
  private tag(): number {
    const r = this.r;
    const start = r.pos;
    const tag = r.uint32();
    const read = r.pos - start;
    if (read > 5 || (read === 5 && this.bytes[r.pos - 1]! > 0x0f) || tag >>> 3 === 0 || (tag & 7) > 5)
      throw NOT_LEAN;
    return tag;
  }

  /** Reads a length prefix; the end of the nested message, which must lie inside the bytes. */
  private lengthEnd(): number {
    const r = this.r;
    const end = r.uint32() + r.pos;
    if (end > r.len) throw NOT_LEAN;
    return end;
  }

  /** After a nested message: it must end where its length said (fromBinary would read on otherwise). */
  private at(end: number): void {
    if (this.r.pos !== end) throw NOT_LEAN;
  }

  /**
   * A field the fast path does not read: unknown ones are skipped as fromBinary skips them; a known message
   * field that does not change the result (metadata, proximity, health_check_config, ...) must still decode;
   * anything else goes to the reference path.
   */
  private other(
    fields: ReadonlyMap<number, DescMessage['fields'][number]>,
    no: number,
    wt: number,
    depth: number,
  ): void {
    const field = fields.get(no);
    if (field === undefined) {
      this.r.skip(wt, no, MAX_PROTO_NESTING - depth);
      return;
    }
    if (field.fieldKind !== 'message' || field.delimitedEncoding || wt !== WireType.LengthDelimited) {
      throw NOT_LEAN;
    }
    fromBinary(field.message, this.r.bytes(), { recursionLimit: MAX_PROTO_NESTING - depth });
  }

  /** LocalityLbEndpoints (depth 2). */
  private localityLbEndpoints(end: number): void {
    const r = this.r;
    let region = '';
    let zone = '';
    let subZone = '';
    let weight = 0;
    let priority = 0;
    const endpoints: XdsEndpoint[] = [];
    let invalid = false;
    while (r.pos < end) {
      const tag = this.tag();
      const no = tag >>> 3;
      const wt = tag & 7;
      if (no === 2 && wt === WireType.LengthDelimited) {
        const e = this.lbEndpoint(this.lengthEnd());
        if (e === INVALID) invalid = true;
        else if (e !== null) endpoints.push(e);
      } else if (no === 1 && wt === WireType.LengthDelimited) {
        // Locality (depth 3); a repeated one merges, field by field, as these variables do.
        const localityEnd = this.lengthEnd();
        while (r.pos < localityEnd) {
          const t = this.tag();
          const n = t >>> 3;
          const w = t & 7;
          if (n === 1 && w === WireType.LengthDelimited) region = r.string(true);
          else if (n === 2 && w === WireType.LengthDelimited) zone = r.string(true);
          else if (n === 3 && w === WireType.LengthDelimited) subZone = r.string(true);
          else this.other(LOCALITY_FIELDS, n, w, 3);
        }
        this.at(localityEnd);
      } else if (no === 3 && wt === WireType.LengthDelimited) {
        weight = this.wrapper(weight, 3);
      } else if (no === 5 && wt === WireType.Varint) {
        priority = r.uint32();
      } else {
        this.other(LOCALITY_LB_ENDPOINTS_FIELDS, no, wt, 2);
      }
    }
    this.at(end);
    if (weight === 0) return; // A27: a locality without a weight is skipped (its endpoints unvalidated)
    if (invalid) throw NOT_LEAN;
    let group = this.byPriority.get(priority);
    if (group === undefined) {
      group = { localities: [], weightSum: 0, identities: new Set() };
      this.byPriority.set(priority, group);
    }
    const name = { region, zone, subZone };
    const identity = localityIdentity(name);
    if (group.identities.has(identity)) throw NOT_LEAN;
    group.identities.add(identity);
    group.weightSum += weight;
    if (group.weightSum > MAX_UINT32) throw NOT_LEAN;
    // Duplicate addresses are checked once the locality counts (a skipped one's addresses do not).
    for (let i = 0; i < endpoints.length; i++) {
      const addresses = endpoints[i]!.addresses as readonly TcpAddress[];
      for (let k = 0; k < addresses.length; k++) this.claim(addresses[k]!);
    }
    group.localities.push({ name, key: localityKey(name), weight, endpoints });
  }

  /**
   * Records an address of the cluster; one used before is a NACK (the reference path names it). Compared as
   * host and port, not as addressKey's text: for IP literals the two agree (the text form is `host:port` or
   * `[host]:port`, and an IP literal has no `]`), and the host strings are flat with their hash computed once.
   */
  private claim(a: TcpAddress): void {
    const ports = this.seenHosts.get(a.host);
    if (ports === undefined) this.seenHosts.set(a.host, a.port);
    else if (typeof ports === 'number') {
      if (ports === a.port) throw NOT_LEAN;
      this.seenHosts.set(a.host, new Set([ports, a.port]));
    } else {
      if (ports.has(a.port)) throw NOT_LEAN;
      ports.add(a.port);
    }
  }

  /** A google.protobuf.UInt32Value at `depth`, merged into `value` (what a repeated occurrence does). */
  private wrapper(value: number, depth: number): number {
    const r = this.r;
    const end = this.lengthEnd();
    while (r.pos < end) {
      const tag = this.tag();
      if (tag >>> 3 === WRAPPER_VALUE && (tag & 7) === WireType.Varint) value = r.uint32();
      else if (tag >>> 3 === WRAPPER_VALUE) throw NOT_LEAN;
      else r.skip(tag & 7, tag >>> 3, MAX_PROTO_NESTING - depth);
    }
    this.at(end);
    return value;
  }

  /**
   * LbEndpoint (depth 3): the validated endpoint, null when its health status leaves it out (A27), or
   * INVALID when the validation rejects it.
   */
  private lbEndpoint(end: number): XdsEndpoint | null | typeof INVALID {
    const r = this.r;
    let status = HealthStatus.UNKNOWN as number;
    let weight: number | undefined;
    let addresses: Address[] | typeof INVALID | undefined;
    let hostname = '';
    let metadata: Uint8Array | undefined;
    while (r.pos < end) {
      const tag = this.tag();
      const no = tag >>> 3;
      const wt = tag & 7;
      if (no === 1 && wt === WireType.LengthDelimited) {
        if (addresses !== undefined) throw NOT_LEAN; // a repeated Endpoint merges: left to the reference
        const endpointEnd = this.lengthEnd();
        addresses = this.endpoint(endpointEnd);
        hostname = this.hostname;
        this.at(endpointEnd);
      } else if (no === 2 && wt === WireType.Varint) {
        status = r.int32();
      } else if (no === 4 && wt === WireType.LengthDelimited) {
        weight = this.wrapper(weight ?? 0, 4);
      } else if (no === 3 && wt === WireType.LengthDelimited) {
        if (metadata !== undefined) throw NOT_LEAN;
        metadata = r.bytes();
      } else {
        this.other(LB_ENDPOINT_FIELDS, no, wt, 3);
      }
    }
    this.at(end);
    let healthStatus: XdsHealthStatus;
    if (status === HealthStatus.UNKNOWN) healthStatus = 'UNKNOWN';
    else if (status === HealthStatus.HEALTHY) healthStatus = 'HEALTHY';
    else if (status === HealthStatus.DRAINING && this.options.overrideHost) healthStatus = 'DRAINING';
    else {
      if (metadata !== undefined) this.checkMetadata(metadata);
      return null;
    }
    let hashKey: string | undefined;
    if (metadata !== undefined) {
      const message = this.checkMetadata(metadata);
      if (this.options.endpointHashKey) {
        const lb = message.filterMetadata['envoy.lb'];
        const value = lb !== undefined && Object.hasOwn(lb, 'hash_key') ? lb.hash_key : undefined;
        if (typeof value === 'string' && value !== '') hashKey = value;
      }
    }
    if (weight === 0 || addresses === undefined || addresses === INVALID) return INVALID;
    return { addresses, weight: weight ?? 1, healthStatus, hashKey, hostname };
  }

  /** Metadata (depth 4) decodes whether or not its hash key is used. */
  private checkMetadata(bytes: Uint8Array) {
    return fromBinary(MetadataSchema, bytes, { recursionLimit: MAX_PROTO_NESTING - 3 });
  }

  /** Endpoint (depth 4): its address, then its additional addresses when A61 is on; its hostname in `hostname`. */
  private endpoint(end: number): Address[] | typeof INVALID {
    const r = this.r;
    let first: Address | typeof INVALID | undefined;
    let additional: Address[] | undefined;
    let invalid = false;
    let hostname = '';
    const dualstack = this.options.dualstackEndpoints;
    while (r.pos < end) {
      const tag = this.tag();
      const no = tag >>> 3;
      const wt = tag & 7;
      if (no === 1 && wt === WireType.LengthDelimited) {
        if (first !== undefined) throw NOT_LEAN; // a repeated Address merges
        first = this.address(this.lengthEnd(), 5);
      } else if (no === 4 && wt === WireType.LengthDelimited) {
        // AdditionalAddress (depth 5): its one field is an Address (depth 6).
        const additionalEnd = this.lengthEnd();
        let address: Address | typeof INVALID | undefined;
        while (r.pos < additionalEnd) {
          const t = this.tag();
          const n = t >>> 3;
          const w = t & 7;
          if (n === 1 && w === WireType.LengthDelimited) {
            if (address !== undefined) throw NOT_LEAN;
            address = this.address(this.lengthEnd(), 6);
          } else {
            this.other(ADDITIONAL_ADDRESS_FIELDS, n, w, 5);
          }
        }
        this.at(additionalEnd);
        if (!dualstack) continue; // A61 off: read (it must decode) but not used nor validated
        if (address === undefined || address === INVALID) invalid = true;
        else if (additional === undefined) additional = [address];
        else additional.push(address);
      } else if (no === 3 && wt === WireType.LengthDelimited) {
        hostname = r.string(true);
      } else {
        this.other(ENDPOINT_FIELDS, no, wt, 4);
      }
    }
    this.at(end);
    this.hostname = hostname;
    if (invalid || first === undefined || first === INVALID) return INVALID;
    if (additional === undefined) return [first];
    additional.unshift(first);
    return additional;
  }

  /** Address at `depth`: A27's socket_address with an IP address and a port_value, else INVALID. */
  private address(end: number, depth: number): Address | typeof INVALID {
    const r = this.r;
    let result: Address | typeof INVALID = INVALID;
    let socketSeen = false;
    while (r.pos < end) {
      const tag = this.tag();
      const no = tag >>> 3;
      const wt = tag & 7;
      if (no === 1 && wt === WireType.LengthDelimited && !socketSeen) {
        socketSeen = true;
        const socketEnd = this.lengthEnd();
        result = this.socketAddress(socketEnd, depth + 1);
        this.at(socketEnd);
      } else if (ADDRESS_FIELDS.has(no)) {
        throw NOT_LEAN; // another case of the oneof, or a repeated socket_address
      } else {
        r.skip(wt, no, MAX_PROTO_NESTING - depth);
      }
    }
    this.at(end);
    return result;
  }

  /** SocketAddress at `depth`. */
  private socketAddress(end: number, depth: number): Address | typeof INVALID {
    const r = this.r;
    let host = '';
    let port: number | undefined;
    while (r.pos < end) {
      const tag = this.tag();
      const no = tag >>> 3;
      const wt = tag & 7;
      if (no === 2 && wt === WireType.LengthDelimited) host = r.string(true);
      else if (no === 3 && wt === WireType.Varint) port = r.uint32();
      else if (no === 1 && wt === WireType.Varint)
        r.int32(); // protocol: only TCP is meant; not checked (A27)
      else if (no === 6 && wt === WireType.Varint)
        r.bool(); // ipv4_compat
      else if (no === 5 && wt === WireType.LengthDelimited)
        r.string(true); // resolver_name
      else if (SOCKET_ADDRESS_FIELDS.has(no))
        throw NOT_LEAN; // named_port, or a field in an unusual encoding
      else r.skip(wt, no, MAX_PROTO_NESTING - depth);
    }
    this.at(end);
    if (port === undefined || port > 65535 || isIP(host) === 0) return INVALID;
    return tcpAddress(host, port);
  }
}

/**
 * The validated ClusterLoadAssignment encoded in `bytes`, as the reference path (`decodeClusterLoadAssignment`
 * and `parseClusterLoadAssignment`) gives it; `undefined` when the bytes are outside the fast path, malformed
 * or rejected: the caller then runs the reference path for the value or the NACK.
 */
export function readClusterLoadAssignment(
  bytes: Uint8Array,
  options: ResolvedXdsOptions,
): XdsEndpointResource | undefined {
  try {
    return new LeanAssignmentReader(bytes, options).read();
  } catch {
    // NOT_LEAN, or an error of the wire reader or of fromBinary: the reference path says what is wrong.
    return undefined;
  }
}
