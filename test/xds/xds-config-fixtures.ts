// Builders for XdsConfig values (A74) as the dependency manager hands them to the LB tree: validated resource
// values, not protos, so policy tests need no control plane.
import {
  type Address,
  type ChannelArgs,
  parseAddress,
  type Status,
  type StatusOr,
} from '../../src/core/index.js';
import { defaultRegistry } from '../../src/policies/index.js';
import { Simulation, type SimulationOptions } from '../../src/sim/index.js';
import { registerXdsPolicies, XDS_CLUSTER_CALL_ATTRIBUTE } from '../../src/xds/balancer/index.js';
import { localityKey } from '../../src/xds/resources/cluster-load-assignment.js';
import type {
  XdsCluster,
  XdsClusterDiscovery,
  XdsEndpointResource,
  XdsLocality,
  XdsRouteConfiguration,
  XdsVirtualHost,
} from '../../src/xds/resources/types.js';
import { XDS_CONFIG_ATTRIBUTE, type XdsClusterConfig, type XdsConfig } from '../../src/xds/xds-config.js';

export const RR_POLICY = [{ xds_wrr_locality_experimental: { childPolicy: [{ round_robin: {} }] } }];

export function xdsCluster(name: string, fields: Partial<XdsCluster> = {}): XdsCluster {
  const discovery: XdsClusterDiscovery = { kind: 'eds', edsServiceName: name };
  return {
    name,
    discovery,
    lbPolicy: RR_POLICY,
    maxRequests: 1024,
    outlierDetection: undefined,
    lrsLoadReporting: false,
    overrideHostStatus: ['UNKNOWN', 'HEALTHY'],
    upstreamTls: undefined,
    ...fields,
  };
}

/** A locality in zone `zone` with the given `host:port` endpoints. */
export function locality(zone: string, weight: number, endpoints: readonly string[]): XdsLocality {
  const name = { region: 'r', zone, subZone: '' };
  return {
    name,
    key: localityKey(name),
    weight,
    endpoints: endpoints.map((e) => ({
      addresses: [parseAddress(e) as Address],
      weight: 1,
      healthStatus: 'UNKNOWN' as const,
      hashKey: undefined,
      hostname: '',
    })),
  };
}

export function endpointResource(
  clusterName: string,
  priorities: readonly (readonly XdsLocality[])[],
  drops: XdsEndpointResource['drops'] = [],
): XdsEndpointResource {
  return { clusterName, priorities, drops };
}

export function edsEntry(
  cluster: XdsCluster,
  endpoints: XdsEndpointResource | undefined,
  note = '',
): StatusOr<XdsClusterConfig> {
  return { ok: true, value: { cluster, children: { kind: 'endpoints', endpoints, resolutionNote: note } } };
}

export function aggregateEntry(name: string, leafClusters: readonly string[]): StatusOr<XdsClusterConfig> {
  return {
    ok: true,
    value: {
      cluster: xdsCluster(name, { discovery: { kind: 'aggregate', clusters: leafClusters } }),
      children: { kind: 'aggregate', leafClusters },
    },
  };
}

export function errorEntry(status: Status): StatusOr<XdsClusterConfig> {
  return { ok: false, status };
}

const VIRTUAL_HOST: XdsVirtualHost = { name: 'vh', domains: ['*'], routes: [], filterOverrides: new Map() };
const ROUTE_CONFIG: XdsRouteConfiguration = { name: 'rc', virtualHosts: [VIRTUAL_HOST] };

/** An XdsConfig with these cluster entries (listener and routes are placeholders the LB tree never reads). */
export function xdsConfig(clusters: Record<string, StatusOr<XdsClusterConfig>>): XdsConfig {
  return {
    listener: {
      name: 'listener',
      routeSource: { kind: 'inline', routeConfig: ROUTE_CONFIG },
      httpFilters: [],
      maxStreamDurationMs: undefined,
    },
    routeConfig: ROUTE_CONFIG,
    virtualHost: VIRTUAL_HOST,
    clusters: new Map(Object.entries(clusters)),
  };
}

/** The update attributes that carry `config` (A74: the XdsConfig travels as an attribute). */
export function withXdsConfig(config: XdsConfig): ChannelArgs {
  return { [XDS_CONFIG_ATTRIBUTE]: config };
}

/** Call attributes naming the cluster the config selector chose (A31). */
export function forCluster(name: string): ReadonlyMap<unknown, unknown> {
  return new Map([[XDS_CLUSTER_CALL_ATTRIBUTE, name]]);
}

/** A simulation whose registry has lbtree's policies and the xDS ones (cds, cluster_manager, cluster_impl). */
export function xdsSimulation(options: SimulationOptions = {}): Simulation {
  return new Simulation({ ...options, registry: registerXdsPolicies(defaultRegistry().clone()) });
}
