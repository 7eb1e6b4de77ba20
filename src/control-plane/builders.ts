// Builders for the resources gRPC's xDS reads, in proto3 JSON with "@type" (what `setResources` and the
// resources file take). They cover the common shapes: a listener with an RDS or inline route configuration,
// routes to clusters (one, or weighted) with hash policies, EDS clusters with a legacy or A52
// load_balancing_policy, ClusterLoadAssignments with localities, weights and priorities, A55 cookie-based
// session affinity (the stateful_session filter, its per-route overrides, override_host_status) and A33 fault
// injection (the HTTPFault filter and its per-route overrides).

import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE_URL,
  CLUSTER_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_CONFIGURATION_TYPE_URL,
  typeUrlOf,
} from '../protos/type-urls.js';
import type { ResourceJson } from './resource-set.js';

type Json = Record<string, unknown>;

const HCM_TYPE_URL = typeUrlOf(
  'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
);
const ROUTER_TYPE_URL = typeUrlOf('envoy.extensions.filters.http.router.v3.Router');
const AGGREGATE_CLUSTER_TYPE_URL = typeUrlOf('envoy.extensions.clusters.aggregate.v3.ClusterConfig');
const STATEFUL_SESSION_TYPE_URL = typeUrlOf(
  'envoy.extensions.filters.http.stateful_session.v3.StatefulSession',
);
const STATEFUL_SESSION_PER_ROUTE_TYPE_URL = typeUrlOf(
  'envoy.extensions.filters.http.stateful_session.v3.StatefulSessionPerRoute',
);
const COOKIE_SESSION_STATE_TYPE_URL = typeUrlOf(
  'envoy.extensions.http.stateful_session.cookie.v3.CookieBasedSessionState',
);
const HTTP_FAULT_TYPE_URL = typeUrlOf('envoy.extensions.filters.http.fault.v3.HTTPFault');
const LB_POLICY = 'envoy.extensions.load_balancing_policies';

// ---------------------------------------------------------------------------------------------- endpoints

/** "host:port" ("[::1]:80" for IPv6), or the parts. */
export type AddressSpec = string | { readonly host: string; readonly port: number };

export interface EndpointSpec {
  readonly address: AddressSpec;
  /** gRFC A61: more addresses of the same backend (e.g. its IPv6 one). */
  readonly additionalAddresses?: readonly AddressSpec[];
  /** load_balancing_weight (gRFC A28 endpoint weights). */
  readonly weight?: number;
  /** health_status, e.g. "HEALTHY", "UNHEALTHY", "DRAINING". */
  readonly healthStatus?: string;
  /** metadata filter_metadata "envoy.lb" hash_key (gRFC A76 ring hash keys). */
  readonly hashKey?: string;
}

export interface LocalitySpec {
  readonly region?: string;
  readonly zone?: string;
  readonly subZone?: string;
  /** load_balancing_weight of the locality; default 1 (gRPC ignores a locality without one). */
  readonly weight?: number;
  /** gRFC A56: 0 is the most preferred priority; default 0. */
  readonly priority?: number;
  readonly endpoints: readonly (EndpointSpec | AddressSpec)[];
}

export interface DropOverloadSpec {
  readonly category: string;
  readonly perMillion: number;
}

/** A ClusterLoadAssignment (EDS) for `clusterName` (the cluster's name, or its eds_service_name). */
export function clusterLoadAssignment(
  clusterName: string,
  localities: readonly LocalitySpec[],
  options: { readonly dropOverloads?: readonly DropOverloadSpec[] } = {},
): ResourceJson {
  const drops = options.dropOverloads ?? [];
  return {
    '@type': CLUSTER_LOAD_ASSIGNMENT_TYPE_URL,
    clusterName,
    endpoints: localities.map((l) => ({
      locality: {
        ...(l.region !== undefined ? { region: l.region } : {}),
        ...(l.zone !== undefined ? { zone: l.zone } : {}),
        ...(l.subZone !== undefined ? { subZone: l.subZone } : {}),
      },
      loadBalancingWeight: l.weight ?? 1,
      ...(l.priority ? { priority: l.priority } : {}),
      lbEndpoints: l.endpoints.map(lbEndpoint),
    })),
    ...(drops.length > 0
      ? {
          policy: {
            dropOverloads: drops.map((d) => ({
              category: d.category,
              dropPercentage: { numerator: d.perMillion, denominator: 'MILLION' },
            })),
          },
        }
      : {}),
  };
}

function isAddressSpec(spec: EndpointSpec | AddressSpec): spec is AddressSpec {
  return typeof spec === 'string' || 'host' in spec;
}

function lbEndpoint(spec: EndpointSpec | AddressSpec): Json {
  const e: EndpointSpec = isAddressSpec(spec) ? { address: spec } : spec;
  const additional = e.additionalAddresses ?? [];
  return {
    endpoint: {
      address: socketAddress(e.address),
      ...(additional.length > 0
        ? { additionalAddresses: additional.map((a) => ({ address: socketAddress(a) })) }
        : {}),
    },
    ...(e.weight !== undefined ? { loadBalancingWeight: e.weight } : {}),
    ...(e.healthStatus !== undefined ? { healthStatus: e.healthStatus } : {}),
    ...(e.hashKey !== undefined
      ? { metadata: { filterMetadata: { 'envoy.lb': { hash_key: e.hashKey } } } }
      : {}),
  };
}

function socketAddress(spec: AddressSpec): Json {
  const { host, port } = typeof spec === 'string' ? parseHostPort(spec) : spec;
  return { socketAddress: { address: host, portValue: port } };
}

/** "10.0.0.1:80" / "[::1]:80" → host and port; throws naming the address when it has no port. */
export function parseHostPort(address: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(address);
  if (!match) throw new Error(`"${address}" is not host:port (IPv6 as [::1]:80)`);
  return { host: (match[1] ?? match[2])!, port: Number(match[3]) };
}

// ----------------------------------------------------------------------------------------- LB policies

/** One typed_extension_config of a Cluster's load_balancing_policy (gRFC A52): an "@type"d object. */
export type LbPolicyJson = ResourceJson;

export const lbPolicies = {
  roundRobin: (): LbPolicyJson => ({ '@type': typeUrlOf(`${LB_POLICY}.round_robin.v3.RoundRobin`) }),
  pickFirst: (shuffleAddressList = false): LbPolicyJson => ({
    '@type': typeUrlOf(`${LB_POLICY}.pick_first.v3.PickFirst`),
    ...(shuffleAddressList ? { shuffleAddressList } : {}),
  }),
  leastRequest: (choiceCount?: number): LbPolicyJson => ({
    '@type': typeUrlOf(`${LB_POLICY}.least_request.v3.LeastRequest`),
    ...(choiceCount !== undefined ? { choiceCount } : {}),
  }),
  /** gRFC A42. */
  ringHash: (ring: { minimumRingSize?: number; maximumRingSize?: number } = {}): LbPolicyJson => ({
    '@type': typeUrlOf(`${LB_POLICY}.ring_hash.v3.RingHash`),
    hashFunction: 'XX_HASH',
    ...ringSizes(ring),
  }),
  /** Locality weights above an endpoint-picking policy (gRFC A52). */
  wrrLocality: (...endpointPicking: LbPolicyJson[]): LbPolicyJson => ({
    '@type': typeUrlOf(`${LB_POLICY}.wrr_locality.v3.WrrLocality`),
    endpointPickingPolicy: loadBalancingPolicy(endpointPicking),
  }),
  /** gRFC A58 weighted round robin from ORCA load reports. */
  weightedRoundRobin: (fields: Json = {}): LbPolicyJson => ({
    '@type': typeUrlOf(`${LB_POLICY}.client_side_weighted_round_robin.v3.ClientSideWeightedRoundRobin`),
    ...fields,
  }),
  /** A custom policy by name (gRFC A52): a TypedStruct whose type_url names it and whose value is its config. */
  custom: (typeUrl: string, value: Json = {}): LbPolicyJson => ({
    '@type': typeUrlOf('xds.type.v3.TypedStruct'),
    typeUrl,
    value,
  }),
};

function ringSizes(ring: { minimumRingSize?: number; maximumRingSize?: number }): Json {
  return {
    ...(ring.minimumRingSize !== undefined ? { minimumRingSize: String(ring.minimumRingSize) } : {}),
    ...(ring.maximumRingSize !== undefined ? { maximumRingSize: String(ring.maximumRingSize) } : {}),
  };
}

/** A LoadBalancingPolicy: the client uses the first policy it supports. */
export function loadBalancingPolicy(policies: readonly LbPolicyJson[]): Json {
  return {
    policies: policies.map((typedConfig, i) => ({
      typedExtensionConfig: { name: `policy-${i}`, typedConfig },
    })),
  };
}

// ---------------------------------------------------------------------------------------------- clusters

export interface ClusterSpec {
  readonly name: string;
  /** The ClusterLoadAssignment's name when it is not the cluster's. */
  readonly edsServiceName?: string;
  /** Legacy lb_policy: ROUND_ROBIN (default), RING_HASH, LEAST_REQUEST. */
  readonly lbPolicy?: 'ROUND_ROBIN' | 'RING_HASH' | 'LEAST_REQUEST';
  /** ring_hash_lb_config with lbPolicy RING_HASH. */
  readonly ringHash?: { readonly minimumRingSize?: number; readonly maximumRingSize?: number };
  /** gRFC A52 load_balancing_policy (wins over lbPolicy in clients that support it). */
  readonly loadBalancingPolicy?: readonly LbPolicyJson[];
  /** circuit_breakers max_requests of the DEFAULT priority. */
  readonly maxRequests?: number;
  /** outlier_detection, as proto3 JSON (gRFC A50). */
  readonly outlierDetection?: Json;
  /** gRFC A55 common_lb_config.override_host_status, e.g. ["UNKNOWN", "HEALTHY", "DRAINING"]. */
  readonly overrideHostStatus?: readonly string[];
  /** More Cluster fields, as proto3 JSON, merged last. */
  readonly fields?: Json;
}

/** An EDS Cluster whose endpoints come over ADS. */
export function cluster(spec: ClusterSpec): ResourceJson {
  return {
    '@type': CLUSTER_TYPE_URL,
    name: spec.name,
    type: 'EDS',
    edsClusterConfig: {
      edsConfig: { ads: {} },
      ...(spec.edsServiceName !== undefined ? { serviceName: spec.edsServiceName } : {}),
    },
    ...(spec.lbPolicy !== undefined ? { lbPolicy: spec.lbPolicy } : {}),
    ...(spec.ringHash !== undefined
      ? { ringHashLbConfig: { hashFunction: 'XX_HASH', ...ringSizes(spec.ringHash) } }
      : {}),
    ...(spec.loadBalancingPolicy !== undefined
      ? { loadBalancingPolicy: loadBalancingPolicy(spec.loadBalancingPolicy) }
      : {}),
    ...(spec.maxRequests !== undefined
      ? { circuitBreakers: { thresholds: [{ priority: 'DEFAULT', maxRequests: spec.maxRequests }] } }
      : {}),
    ...(spec.outlierDetection !== undefined ? { outlierDetection: spec.outlierDetection } : {}),
    ...(spec.overrideHostStatus !== undefined
      ? { commonLbConfig: { overrideHostStatus: { statuses: [...spec.overrideHostStatus] } } }
      : {}),
    ...spec.fields,
  };
}

/** gRFC A37: a cluster that tries `clusters` in order (the first with a usable priority wins). */
export function aggregateCluster(name: string, clusters: readonly string[]): ResourceJson {
  return {
    '@type': CLUSTER_TYPE_URL,
    name,
    clusterType: {
      name: 'envoy.clusters.aggregate',
      typedConfig: { '@type': AGGREGATE_CLUSTER_TYPE_URL, clusters },
    },
  };
}

/** gRFC A37: a LOGICAL_DNS cluster resolving one "host:port". */
export function logicalDnsCluster(name: string, address: AddressSpec): ResourceJson {
  return {
    '@type': CLUSTER_TYPE_URL,
    name,
    type: 'LOGICAL_DNS',
    loadAssignment: { clusterName: name, endpoints: [{ lbEndpoints: [lbEndpoint(address)] }] },
  };
}

// -------------------------------------------------------------------------------------- session affinity

/** gRFC A55: the cookie of a stateful session filter. */
export interface SessionCookieSpec {
  readonly name: string;
  /** The cookie's Path (default: every path). */
  readonly path?: string;
  /** Max-Age in seconds. */
  readonly ttlSeconds?: number;
}

function statefulSession(cookie: SessionCookieSpec): Json {
  return {
    sessionState: {
      name: 'envoy.http.stateful_session.cookie',
      typedConfig: {
        '@type': COOKIE_SESSION_STATE_TYPE_URL,
        cookie: {
          name: cookie.name,
          ...(cookie.path !== undefined ? { path: cookie.path } : {}),
          ...(cookie.ttlSeconds !== undefined ? { ttl: `${cookie.ttlSeconds}s` } : {}),
        },
      },
    },
  };
}

/** gRFC A55: an HttpConnectionManager http_filters entry for cookie-based stateful session affinity. */
export function statefulSessionFilter(
  cookie: SessionCookieSpec,
  name = 'envoy.filters.http.stateful_session',
): Json {
  return { name, typedConfig: { '@type': STATEFUL_SESSION_TYPE_URL, ...statefulSession(cookie) } };
}

/**
 * gRFC A55: a StatefulSessionPerRoute for typed_per_filter_config (keyed by the filter's name): turns the filter
 * off (`'disabled'`) or gives another cookie for a virtual host, route or weighted cluster.
 */
export function statefulSessionPerRoute(override: 'disabled' | SessionCookieSpec): Json {
  return {
    '@type': STATEFUL_SESSION_PER_ROUTE_TYPE_URL,
    ...(override === 'disabled' ? { disabled: true } : { statefulSession: statefulSession(override) }),
  };
}

// ------------------------------------------------------------------------------------------ fault injection

/** gRFC A33: the share of calls a fault applies to, `numerator` over HUNDRED (the default), TEN_THOUSAND or MILLION. */
export interface FaultPercentSpec {
  readonly numerator: number;
  readonly denominator?: 'HUNDRED' | 'TEN_THOUSAND' | 'MILLION';
}

/** gRFC A33: an HTTPFault. A header delay or abort takes its value from the call's `x-envoy-fault-*` headers. */
export interface FaultSpec {
  readonly delay?:
    | { readonly fixedMs: number; readonly percentage: FaultPercentSpec }
    | { readonly header: true; readonly percentage: FaultPercentSpec };
  readonly abort?:
    | { readonly grpcStatus: number; readonly percentage: FaultPercentSpec }
    | { readonly httpStatus: number; readonly percentage: FaultPercentSpec }
    | { readonly header: true; readonly percentage: FaultPercentSpec };
  readonly maxActiveFaults?: number;
}

function percentage(p: FaultPercentSpec): Json {
  return { numerator: p.numerator, denominator: p.denominator ?? 'HUNDRED' };
}

/** gRFC A33: an HTTPFault message with "@type", for a listener filter or a typed_per_filter_config entry. */
export function httpFault(spec: FaultSpec = {}): Json {
  const { delay, abort } = spec;
  return {
    '@type': HTTP_FAULT_TYPE_URL,
    ...(delay !== undefined
      ? {
          delay: {
            ...('header' in delay ? { headerDelay: {} } : { fixedDelay: `${delay.fixedMs / 1000}s` }),
            percentage: percentage(delay.percentage),
          },
        }
      : {}),
    ...(abort !== undefined
      ? {
          abort: {
            ...('header' in abort
              ? { headerAbort: {} }
              : 'grpcStatus' in abort
                ? { grpcStatus: abort.grpcStatus }
                : { httpStatus: abort.httpStatus }),
            percentage: percentage(abort.percentage),
          },
        }
      : {}),
    ...(spec.maxActiveFaults !== undefined ? { maxActiveFaults: spec.maxActiveFaults } : {}),
  };
}

/**
 * gRFC A33: an HttpConnectionManager http_filters entry for fault injection, named as Istio names it. With no
 * spec it injects nothing (istiod's listeners carry it so, and set the faults per route).
 */
export function faultFilter(spec: FaultSpec = {}, name = 'envoy.filters.http.fault'): Json {
  return { name, typedConfig: httpFault(spec) };
}

// ------------------------------------------------------------------------------------------------ routes

/** gRFC A42 hash policies of a route. */
export type HashPolicySpec =
  | { readonly header: string; readonly terminal?: boolean }
  | { readonly channelId: true; readonly terminal?: boolean };

export interface RouteSpec {
  /** path prefix to match; default "" (every RPC). */
  readonly prefix?: string;
  /** exact path to match instead of a prefix, e.g. "/pkg.Service/Method". */
  readonly path?: string;
  /** Envoy HeaderMatchers the request must also match, as JSON, e.g. `{ name: 'x-canary', presentMatch: true }`. */
  readonly headers?: readonly Json[];
  /** the cluster RPCs go to … */
  readonly cluster?: string;
  /** … or weighted clusters (gRFC A28), each with its own filter overrides if wanted. */
  readonly weightedClusters?: readonly {
    readonly name: string;
    readonly weight: number;
    readonly typedPerFilterConfig?: Json;
  }[];
  readonly hashPolicy?: readonly HashPolicySpec[];
  /** gRFC A44: Envoy's RetryPolicy as JSON (`retryOn`, `numRetries`, `retryBackOff`); over the virtual host's. */
  readonly retryPolicy?: Json;
  /** HTTP filter overrides by filter name (gRFC A39), e.g. a statefulSessionPerRoute. */
  readonly typedPerFilterConfig?: Json;
}

export interface VirtualHostSpec {
  readonly name?: string;
  /** default ["*"]. */
  readonly domains?: readonly string[];
  readonly routes: readonly RouteSpec[];
  /** gRFC A44: the retry policy of the routes that give none. */
  readonly retryPolicy?: Json;
  /** HTTP filter overrides by filter name (gRFC A39). */
  readonly typedPerFilterConfig?: Json;
}

/** A RouteConfiguration; `routeConfig` below is the same without "@type" (for a listener's inline one). */
export function routeConfiguration(name: string, virtualHosts: readonly VirtualHostSpec[]): ResourceJson {
  return { '@type': ROUTE_CONFIGURATION_TYPE_URL, ...routeConfig(name, virtualHosts) };
}

function routeConfig(name: string, virtualHosts: readonly VirtualHostSpec[]): Json {
  return {
    name,
    virtualHosts: virtualHosts.map((vh, i) => ({
      name: vh.name ?? `vhost-${i}`,
      domains: vh.domains ?? ['*'],
      ...(vh.retryPolicy !== undefined ? { retryPolicy: vh.retryPolicy } : {}),
      routes: vh.routes.map(route),
      ...(vh.typedPerFilterConfig !== undefined ? { typedPerFilterConfig: vh.typedPerFilterConfig } : {}),
    })),
  };
}

function route(spec: RouteSpec): Json {
  const match = {
    ...(spec.path !== undefined ? { path: spec.path } : { prefix: spec.prefix ?? '' }),
    ...(spec.headers !== undefined ? { headers: spec.headers } : {}),
  };
  const target =
    spec.weightedClusters !== undefined
      ? {
          weightedClusters: {
            clusters: spec.weightedClusters.map((c) => ({
              name: c.name,
              weight: c.weight,
              ...(c.typedPerFilterConfig !== undefined
                ? { typedPerFilterConfig: c.typedPerFilterConfig }
                : {}),
            })),
          },
        }
      : { cluster: spec.cluster ?? '' };
  const hashPolicy = (spec.hashPolicy ?? []).map((h) =>
    'header' in h
      ? { header: { headerName: h.header }, ...(h.terminal ? { terminal: true } : {}) }
      : { filterState: { key: 'io.grpc.channel_id' }, ...(h.terminal ? { terminal: true } : {}) },
  );
  return {
    match,
    route: {
      ...target,
      ...(hashPolicy.length > 0 ? { hashPolicy } : {}),
      ...(spec.retryPolicy !== undefined ? { retryPolicy: spec.retryPolicy } : {}),
    },
    ...(spec.typedPerFilterConfig !== undefined ? { typedPerFilterConfig: spec.typedPerFilterConfig } : {}),
  };
}

// --------------------------------------------------------------------------------------------- listeners

/**
 * A client-side Listener (api_listener with an HttpConnectionManager whose last filter is the router): its
 * routes come over RDS (`{ rds: name }`) or inline (`{ inline: virtual hosts }`); `httpFilters` (e.g. a
 * statefulSessionFilter) run before the router.
 */
export function listener(
  name: string,
  routes:
    | { readonly rds: string }
    | { readonly inline: readonly VirtualHostSpec[]; readonly routeConfigName?: string },
  options: { readonly httpFilters?: readonly Json[] } = {},
): ResourceJson {
  const routeSource =
    'rds' in routes
      ? { rds: { routeConfigName: routes.rds, configSource: { ads: {} } } }
      : { routeConfig: routeConfig(routes.routeConfigName ?? `${name}-routes`, routes.inline) };
  return {
    '@type': LISTENER_TYPE_URL,
    name,
    apiListener: {
      apiListener: {
        '@type': HCM_TYPE_URL,
        ...routeSource,
        httpFilters: [
          ...(options.httpFilters ?? []),
          { name: 'router', typedConfig: { '@type': ROUTER_TYPE_URL } },
        ],
      },
    },
  };
}

// ------------------------------------------------------------------------------------ a whole service

export interface ServiceClusterSpec extends Omit<ClusterSpec, 'edsServiceName'> {
  readonly localities: readonly LocalitySpec[];
  /** Share of the service's RPCs when it has several clusters (weighted clusters); default 1. */
  readonly weight?: number;
}

export interface ServiceSpec {
  /** The listener's name: what a client's `xds:///NAME` target asks for. */
  readonly name: string;
  readonly clusters: readonly ServiceClusterSpec[];
  /** Route configuration inline in the listener instead of over RDS. */
  readonly inlineRoutes?: boolean;
  readonly hashPolicy?: readonly HashPolicySpec[];
  /** gRFC A55: cookie-based session affinity for the whole service. */
  readonly sessionCookie?: SessionCookieSpec;
}

/**
 * Everything a client needs for `xds:///NAME`: Listener → RouteConfiguration (RDS or inline) → one route to
 * the cluster (weighted clusters when several) → each Cluster → its ClusterLoadAssignment.
 */
export function xdsService(spec: ServiceSpec): ResourceJson[] {
  const [only] = spec.clusters;
  if (!only) throw new Error(`service "${spec.name}": at least one cluster is needed`);
  const routeSpec: RouteSpec =
    spec.clusters.length === 1
      ? { cluster: only.name, ...(spec.hashPolicy ? { hashPolicy: spec.hashPolicy } : {}) }
      : {
          weightedClusters: spec.clusters.map((c) => ({ name: c.name, weight: c.weight ?? 1 })),
          ...(spec.hashPolicy ? { hashPolicy: spec.hashPolicy } : {}),
        };
  const virtualHosts: VirtualHostSpec[] = [{ domains: ['*'], routes: [routeSpec] }];
  const routeName = `${spec.name}-routes`;
  const filters = { httpFilters: spec.sessionCookie ? [statefulSessionFilter(spec.sessionCookie)] : [] };
  const head = spec.inlineRoutes
    ? [listener(spec.name, { inline: virtualHosts, routeConfigName: routeName }, filters)]
    : [listener(spec.name, { rds: routeName }, filters), routeConfiguration(routeName, virtualHosts)];
  return [
    ...head,
    ...spec.clusters.flatMap(({ localities, weight: _, ...c }) => [
      cluster(c),
      clusterLoadAssignment(c.name, localities),
    ]),
  ];
}
