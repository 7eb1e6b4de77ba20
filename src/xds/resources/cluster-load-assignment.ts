// EDS: validates an `envoy.config.endpoint.v3.ClusterLoadAssignment` as gRPC's XdsClient does (A27
// "ClusterLoadAssignment Proto", A61 "Support Multiple Addresses Per Endpoint in xDS", A76 endpoint hash keys)
// and groups its endpoints by priority and locality.

import { isIP } from 'node:net';
import { type Address, addressKey, tcpAddress } from '../../core/index.js';
import type { Address as AddressMessage } from '../../protos/gen/envoy/config/core/v3/address_pb.js';
import type { Locality } from '../../protos/gen/envoy/config/core/v3/base_pb.js';
import { HealthStatus } from '../../protos/gen/envoy/config/core/v3/health_check_pb.js';
import type { LbEndpoint } from '../../protos/gen/envoy/config/endpoint/v3/endpoint_components_pb.js';
import {
  type ClusterLoadAssignment,
  type ClusterLoadAssignment_Policy,
  ClusterLoadAssignmentSchema,
} from '../../protos/gen/envoy/config/endpoint/v3/endpoint_pb.js';
import { decodeOrNack } from './decode-or-nack.js';
import { XdsResourceError } from './errors.js';
import type { XdsHealthStatus } from './health-status.js';
import { perMillion } from './validation.js';
import { resolveXdsOptions, type XdsOptions } from './xds-options.js';

export interface XdsLocalityName {
  readonly region: string;
  readonly zone: string;
  readonly subZone: string;
}

/**
 * The locality's text key: the LOCALITY endpoint attribute, and so the weighted_target child name that
 * xds_wrr_locality gives it. The same form lbtree's grpc-js adapter gives localities that @grpc/grpc-js-xds
 * hands it, so a locality has one name on every path: `{region=r,zone=z,sub_zone=s}`.
 */
export function localityKey(l: XdsLocalityName): string {
  return `{region=${l.region},zone=${l.zone},sub_zone=${l.subZone}}`;
}

/** An unambiguous identity for duplicate detection (a region may, in theory, contain ",zone="). */
export function localityIdentity(l: XdsLocalityName): string {
  return JSON.stringify([l.region, l.zone, l.subZone]);
}

/** Only these are used (A27, and A55 adds DRAINING); endpoints in any other state are left out. */
export type { XdsHealthStatus } from './health-status.js';

export interface XdsEndpoint {
  /** The endpoint's address first, then its additional addresses (A61). */
  readonly addresses: readonly Address[];
  /** LbEndpoint.load_balancing_weight; 1 when unset. */
  readonly weight: number;
  readonly healthStatus: XdsHealthStatus;
  /** A76: the `envoy.lb` filter metadata's `hash_key` string, when set and non-empty. */
  readonly hashKey: string | undefined;
  readonly hostname: string;
}

export interface XdsLocality {
  readonly name: XdsLocalityName;
  readonly key: string;
  /** LocalityLbEndpoints.load_balancing_weight (always at least 1: unweighted localities are ignored). */
  readonly weight: number;
  readonly endpoints: readonly XdsEndpoint[];
}

export interface XdsDropCategory {
  readonly category: string;
  /** The drop probability in parts per million. */
  readonly perMillion: number;
}

/** A validated ClusterLoadAssignment. */
export interface XdsEndpointResource {
  readonly clusterName: string;
  /** Localities by priority: `priorities[0]` is the highest priority. None is empty. */
  readonly priorities: readonly (readonly XdsLocality[])[];
  readonly drops: readonly XdsDropCategory[];
}

const MAX_UINT32 = 0xffff_ffff;

/** Decodes an encoded ClusterLoadAssignment (a NACK reason on malformed bytes). */
export function decodeClusterLoadAssignment(bytes: Uint8Array): ClusterLoadAssignment {
  return decodeOrNack(ClusterLoadAssignmentSchema, bytes);
}

/**
 * Validates a ClusterLoadAssignment. Rejected (an {@link XdsResourceError} naming the field): an endpoint or
 * additional address that is missing, not an IP address with a port, or used twice in the cluster; an
 * endpoint weight of 0; a locality listed twice in one priority; locality weights in one priority summing past
 * uint32; a gap in the priorities. Ignored: localities whose weight is unset or 0, and endpoints whose health
 * status is not UNKNOWN, HEALTHY or (A55, unless GRPC_EXPERIMENTAL_XDS_ENABLE_OVERRIDE_HOST is "false") DRAINING.
 * `additional_addresses` are read unless GRPC_EXPERIMENTAL_XDS_DUALSTACK_ENDPOINTS
 * is "false".
 */
export function parseClusterLoadAssignment(
  cla: ClusterLoadAssignment,
  options: XdsOptions = {},
): XdsEndpointResource {
  const { dualstackEndpoints, endpointHashKey, overrideHost } = resolveXdsOptions(options);
  const byPriority = new Map<
    number,
    { localities: XdsLocality[]; weightSum: number; keys: Map<string, number> }
  >();
  const seenAddresses = new Map<string, string>();
  for (let i = 0; i < cla.endpoints.length; i++) {
    const entry = cla.endpoints[i]!;
    const at = `endpoints[${i}]`;
    const weight = entry.loadBalancingWeight ?? 0;
    if (weight === 0) continue; // A27: a locality without a weight is skipped
    const name = localityName(entry.locality);
    const key = localityKey(name);
    const identity = localityIdentity(name);
    let priority = byPriority.get(entry.priority);
    if (!priority) {
      priority = { localities: [], weightSum: 0, keys: new Map() };
      byPriority.set(entry.priority, priority);
    }
    const first = priority.keys.get(identity);
    if (first !== undefined) {
      throw new XdsResourceError(
        `${at}.locality`,
        `duplicate locality ${key} in priority ${entry.priority} (also endpoints[${first}])`,
      );
    }
    priority.keys.set(identity, i);
    priority.weightSum += weight;
    if (priority.weightSum > MAX_UINT32) {
      throw new XdsResourceError(
        `${at}.load_balancing_weight`,
        `the locality weights of priority ${entry.priority} add up to more than ${MAX_UINT32}`,
      );
    }
    const endpoints: XdsEndpoint[] = [];
    for (let j = 0; j < entry.lbEndpoints.length; j++) {
      const parsed = parseLbEndpoint(
        entry.lbEndpoints[j]!,
        `${at}.lb_endpoints[${j}]`,
        dualstackEndpoints,
        endpointHashKey,
        overrideHost,
        seenAddresses,
      );
      if (parsed) endpoints.push(parsed);
    }
    priority.localities.push({ name, key, weight, endpoints });
  }
  const numbers = [...byPriority.keys()].sort((a, b) => a - b);
  for (let p = 0; p < numbers.length; p++) {
    if (numbers[p] !== p) {
      const index = cla.endpoints.findIndex(
        (e) => e.priority === numbers[p] && (e.loadBalancingWeight ?? 0) > 0,
      );
      throw new XdsResourceError(
        `endpoints[${index}].priority`,
        `priority ${numbers[p]} has no priority ${p} before it (priorities must be contiguous from 0)`,
      );
    }
  }
  return {
    clusterName: cla.clusterName,
    priorities: numbers.map((p) => byPriority.get(p)!.localities),
    drops: parseDrops(cla.policy),
  };
}

function localityName(l: Locality | undefined): XdsLocalityName {
  return { region: l?.region ?? '', zone: l?.zone ?? '', subZone: l?.subZone ?? '' };
}

function parseLbEndpoint(
  e: LbEndpoint,
  at: string,
  dualstack: boolean,
  hashKeys: boolean,
  overrideHost: boolean,
  seen: Map<string, string>,
): XdsEndpoint | null {
  let healthStatus: XdsHealthStatus;
  if (e.healthStatus === HealthStatus.UNKNOWN) healthStatus = 'UNKNOWN';
  else if (e.healthStatus === HealthStatus.HEALTHY) healthStatus = 'HEALTHY';
  else if (e.healthStatus === HealthStatus.DRAINING && overrideHost)
    healthStatus = 'DRAINING'; // A55
  else return null; // A27: "the entry will be ignored"
  const weight = e.loadBalancingWeight ?? 1;
  if (weight === 0) throw new XdsResourceError(`${at}.load_balancing_weight`, 'must be greater than 0');
  const endpoint = e.hostIdentifier.case === 'endpoint' ? e.hostIdentifier.value : undefined;
  if (endpoint === undefined) throw new XdsResourceError(`${at}.endpoint`, 'field not present');
  const addresses: Address[] = [parseAddress(endpoint.address, `${at}.endpoint.address`)];
  if (dualstack) {
    const extra = endpoint.additionalAddresses;
    for (let k = 0; k < extra.length; k++) {
      addresses.push(parseAddress(extra[k]!.address, `${at}.endpoint.additional_addresses[${k}].address`));
    }
  }
  for (let k = 0; k < addresses.length; k++) {
    const key = addressKey(addresses[k]!);
    const field =
      k === 0 ? `${at}.endpoint.address` : `${at}.endpoint.additional_addresses[${k - 1}].address`;
    const first = seen.get(key);
    if (first !== undefined) {
      throw new XdsResourceError(field, `duplicate endpoint address ${key} (also at ${first})`);
    }
    seen.set(key, field);
  }
  let hashKey: string | undefined;
  if (hashKeys) {
    const lb = e.metadata?.filterMetadata['envoy.lb'];
    const value = lb !== undefined && Object.hasOwn(lb, 'hash_key') ? lb.hash_key : undefined;
    if (typeof value === 'string' && value !== '') hashKey = value;
  }
  return { addresses, weight, healthStatus, hashKey, hostname: endpoint.hostname };
}

/** A27: `socket_address` with an IPv4 or IPv6 `address` and a `port_value`; A61: the same for additional ones. */
function parseAddress(a: AddressMessage | undefined, at: string): Address {
  if (a === undefined) throw new XdsResourceError(at, 'field not present');
  if (a.address.case !== 'socketAddress') {
    const kind =
      a.address.case === 'pipe'
        ? 'pipe'
        : a.address.case === 'envoyInternalAddress'
          ? 'envoy_internal_address'
          : '';
    throw new XdsResourceError(
      `${at}.socket_address`,
      kind === '' ? 'field not present' : `field not present (${kind} addresses are not supported)`,
    );
  }
  const socket = a.address.value;
  if (isIP(socket.address) === 0) {
    throw new XdsResourceError(
      `${at}.socket_address.address`,
      `${JSON.stringify(socket.address)} is not an IPv4 or IPv6 address`,
    );
  }
  const port = socket.portSpecifier;
  if (port.case !== 'portValue') {
    throw new XdsResourceError(
      `${at}.socket_address.port_value`,
      port.case === 'namedPort' ? 'field not present (named ports are not supported)' : 'field not present',
    );
  }
  if (port.value > 65535) {
    throw new XdsResourceError(`${at}.socket_address.port_value`, `${port.value} is not a valid port`);
  }
  return tcpAddress(socket.address, port.value);
}

/** policy.drop_overloads, as parts per million (capped at 100%); applied by xds_cluster_impl. */
export function parseDrops(policy: ClusterLoadAssignment_Policy | undefined): XdsDropCategory[] {
  const drops = policy?.dropOverloads ?? [];
  return drops.map((d, i) => ({
    category: d.category,
    perMillion:
      d.dropPercentage === undefined
        ? 0
        : perMillion(d.dropPercentage, `policy.drop_overloads[${i}].drop_percentage`),
  }));
}
