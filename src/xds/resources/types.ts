// The validated, typed values of the four xDS resource types (A27 LDS / RDS / CDS / EDS). A resource type's
// `decode` produces one of these or a NACK reason; everything downstream (the dependency manager, the config
// selector, the cds / cluster_impl policies) reads only these shapes, never the protos.
//
// Conventions: durations are milliseconds (a number; fractions of a millisecond are kept); probabilities are
// parts per million (0 … 1,000,000); regular expressions are compiled RE2 (re2js), so matching a request never
// runs a backtracking engine; fields gRPC ignores are left out.

import type { RE2JS } from 're2js';
import type { Code } from '../../core/index.js';
import type { HashPolicy } from '../../hash/index.js';
import type { XdsBackendMetricPropagation } from './backend-metric-propagation.js';
import type { XdsHealthStatus } from './cluster-load-assignment.js';
import type { LbConfigList } from './lb-policy-registry.js';
import type { XdsUpstreamTls } from './tls-context.js';

export type {
  XdsDropCategory,
  XdsEndpoint,
  XdsEndpointResource,
  XdsHealthStatus,
  XdsLocality,
  XdsLocalityName,
} from './cluster-load-assignment.js';

/**
 * An extension config kept opaque (a `google.protobuf.Any`): the type URL and the encoded message. Used for the
 * per-route / per-virtual-host filter overrides (`typed_per_filter_config`) that a later HTTP filter may read.
 */
export interface XdsTypedConfig {
  readonly typeUrl: string;
  readonly value: Uint8Array;
  /** A55: set when the config is a StatefulSessionPerRoute (validated when the resource was). */
  readonly statefulSession?: XdsStatefulSessionOverride;
  /** A33 / A39: set when the config is an HTTPFault (it replaces the fault filter's config in its scope). */
  readonly fault?: XdsFaultInjection;
}

/** A55: the cookie a stateful_session filter sets and reads (CookieBasedSessionState.cookie). */
export interface XdsSessionCookie {
  readonly name: string;
  /** The cookie's Path; empty: every path (as `/`). */
  readonly path: string;
  /** Max-Age, set on the cookie but not enforced by gRPC; 0: none. */
  readonly ttlMs: number;
}

/** A55: a StatefulSession filter config; without a cookie (no session_state) the filter does nothing. */
export interface XdsStatefulSession {
  readonly cookie: XdsSessionCookie | undefined;
}

/** A55: StatefulSessionPerRoute — the filter turned off, or another config for this scope. */
export type XdsStatefulSessionOverride =
  | { readonly disabled: true }
  | { readonly disabled: false; readonly config: XdsStatefulSession };

/**
 * A33: a FractionalPercent as a fraction, not parts per million: the `-percentage` headers replace the
 * numerator only, over the config's denominator.
 */
export interface XdsFaultFraction {
  readonly numerator: number;
  /** 100, 10,000 or 1,000,000 (HUNDRED, TEN_THOUSAND, MILLION). */
  readonly denominator: number;
}

/** A33 "RPC delay injection": the HTTPFault's FaultDelay. */
export type XdsFaultDelay =
  | { readonly kind: 'fixed'; readonly delayMs: number; readonly percentage: XdsFaultFraction }
  /** header_delay: the delay comes from the call's `x-envoy-fault-delay-request` header. */
  | { readonly kind: 'header'; readonly percentage: XdsFaultFraction };

/** A33 "RPC abort injection": the HTTPFault's FaultAbort. */
export type XdsFaultAbort =
  /** grpc_status, or http_status mapped to its gRPC code ("Status Code Mapping"; `httpStatus` keeps it). */
  | {
      readonly kind: 'status';
      readonly code: Code;
      readonly httpStatus: number | undefined;
      readonly percentage: XdsFaultFraction;
    }
  /** header_abort: the code comes from the call's `x-envoy-fault-abort-grpc-request` / `-abort-request` header. */
  | { readonly kind: 'header'; readonly percentage: XdsFaultFraction };

/** A33: an HTTPFault config (the listener's, or a typed_per_filter_config override). */
export interface XdsFaultInjection {
  readonly delay: XdsFaultDelay | undefined;
  readonly abort: XdsFaultAbort | undefined;
  /** max_active_faults: the most calls with an active fault in the process; undefined: no limit. */
  readonly maxActiveFaults: number | undefined;
}

/** `typed_per_filter_config`: filter instance name → its override config. */
export type XdsFilterOverrides = ReadonlyMap<string, XdsTypedConfig>;

// ---------------------------------------------------------------------------------------------------------
// LDS: envoy.config.listener.v3.Listener whose api_listener is an HttpConnectionManager

/** One entry of HttpConnectionManager.http_filters that this client understands (unknown optional ones dropped). */
export interface XdsHttpFilter {
  /** The filter instance name (unique within the listener). */
  readonly name: string;
  /** The filter's config message type, e.g. `envoy.extensions.filters.http.router.v3.Router` (TypedStruct unwrapped). */
  readonly typeName: string;
  /** The filter's config as it came (the Any; a TypedStruct wrapper is kept, its inner type is `typeName`). */
  readonly config: XdsTypedConfig;
  /** A55: the parsed config of a stateful_session filter. */
  readonly statefulSession?: XdsStatefulSession;
  /** A33: the parsed config of a fault injection filter. */
  readonly fault?: XdsFaultInjection;
}

/** Where a listener's routes come from: an RDS resource to watch, or a RouteConfiguration inline in the HCM. */
export type XdsRouteSource =
  | { readonly kind: 'rds'; readonly routeConfigName: string }
  | { readonly kind: 'inline'; readonly routeConfig: XdsRouteConfiguration };

/** A validated client-side Listener (A27 "Listener Proto"). */
export interface XdsListener {
  readonly name: string;
  readonly routeSource: XdsRouteSource;
  /** The HTTP filters in order; the last one is always the router (A39). */
  readonly httpFilters: readonly XdsHttpFilter[];
  /** A31: HCM common_http_protocol_options.max_stream_duration, the default for routes that set none. */
  readonly maxStreamDurationMs: number | undefined;
}

// ---------------------------------------------------------------------------------------------------------
// RDS: envoy.config.route.v3.RouteConfiguration

/** A validated RouteConfiguration (A28). */
export interface XdsRouteConfiguration {
  readonly name: string;
  readonly virtualHosts: readonly XdsVirtualHost[];
}

export interface XdsVirtualHost {
  readonly name: string;
  /** Domain patterns: exact, `*.suffix`, `prefix.*` or `*` (A27 "RDS"); see selectVirtualHost. */
  readonly domains: readonly string[];
  /** The routes in order; the first whose match succeeds is used. Routes gRPC ignores are left out. */
  readonly routes: readonly XdsRoute[];
  readonly filterOverrides: XdsFilterOverrides;
  /** A44: retry_policy, for the routes that have none of their own (absent when unset). */
  readonly retryPolicy?: XdsRetryPolicy | undefined;
}

/**
 * A44: an Envoy RetryPolicy converted to gRPC's retry policy (A6) terms. An empty `retryableStatusCodes` (retry_on
 * names no condition gRPC supports) means no retry policy for the call.
 */
export interface XdsRetryPolicy {
  /** retry_on's cancelled, deadline-exceeded, internal, resource-exhausted and unavailable, as gRPC codes. */
  readonly retryableStatusCodes: readonly Code[];
  /**
   * num_retries + 1 (num_retries defaults to 1). Not capped here: A6's cap of 5 attempts belongs to the retry
   * machinery (grpc-js: the `grpc-node.retry_max_attempts_limit` channel option, 5 by default).
   */
  readonly maxAttempts: number;
  /** retry_back_off.base_interval (25 ms by default), at least 1 ms. */
  readonly initialBackoffMs: number;
  /** retry_back_off.max_interval (10 × base_interval by default), at least 1 ms. */
  readonly maxBackoffMs: number;
}

export interface XdsRoute {
  readonly match: XdsRouteMatch;
  readonly action: XdsRouteAction;
  readonly filterOverrides: XdsFilterOverrides;
}

/** RouteMatch.path_specifier. `case_sensitive: false` applies to prefix and path only (as in Envoy). */
export type XdsPathMatcher =
  | { readonly kind: 'prefix'; readonly prefix: string; readonly caseSensitive: boolean }
  | { readonly kind: 'path'; readonly path: string; readonly caseSensitive: boolean }
  /** The regex must match the whole `/service/method` path. */
  | { readonly kind: 'safe_regex'; readonly regex: RE2JS };

/** envoy.type.matcher.v3.StringMatcher (and the header matchers' legacy exact/prefix/suffix/contains forms). */
export type XdsStringMatcher =
  | {
      readonly kind: 'exact' | 'prefix' | 'suffix' | 'contains';
      readonly value: string;
      readonly ignoreCase: boolean;
    }
  /** The regex must match the whole value. */
  | { readonly kind: 'safe_regex'; readonly regex: RE2JS };

/** The test a HeaderMatcher applies to the header's value (A28). */
export type XdsHeaderMatch =
  | { readonly kind: 'string'; readonly matcher: XdsStringMatcher }
  /** The value parsed as an int64 is in [start, end). */
  | { readonly kind: 'range'; readonly start: bigint; readonly end: bigint }
  /** present_match: whether the header is present (the `present` value is what must be true). */
  | { readonly kind: 'present'; readonly present: boolean };

/**
 * RouteMatch.headers[i]. Multiple values of a header are joined with ',' before matching; `-bin` headers and
 * `grpc-` headers other than `content-type` are treated as absent (A28), which a matcher evaluator applies.
 */
export interface XdsHeaderMatcher {
  /** Lower-cased header name. */
  readonly name: string;
  readonly match: XdsHeaderMatch;
  readonly invert: boolean;
}

export interface XdsRouteMatch {
  readonly path: XdsPathMatcher;
  readonly headers: readonly XdsHeaderMatcher[];
  /** runtime_fraction.default_value as parts per million (the route matches that share of requests). */
  readonly runtimeFractionPerMillion: number | undefined;
}

/** One entry of weighted_clusters (weight > 0; entries of weight 0 are left out). */
export interface XdsWeightedCluster {
  readonly name: string;
  readonly weight: number;
  readonly filterOverrides: XdsFilterOverrides;
}

/** What every forwarding RouteAction carries besides the cluster choice. */
export interface XdsForwardingOptions {
  /** A42: hash_policy, evaluated per call by src/hash's RequestHasher. */
  readonly hashPolicies: readonly HashPolicy[];
  /** A31: max_stream_duration.max_stream_duration (undefined: use the listener's default). */
  readonly maxStreamDurationMs: number | undefined;
  /** A31: max_stream_duration.grpc_timeout_header_max (when set, it replaces max_stream_duration). */
  readonly grpcTimeoutHeaderMaxMs: number | undefined;
  /** A44: retry_policy; when absent, the virtual host's applies (absent when unset). */
  readonly retryPolicy?: XdsRetryPolicy | undefined;
}

export type XdsRouteAction =
  | ({ readonly kind: 'cluster'; readonly cluster: string } & XdsForwardingOptions)
  | ({
      readonly kind: 'weighted_clusters';
      readonly clusters: readonly XdsWeightedCluster[];
      /** The sum of the weights (> 0, ≤ uint32 max). */
      readonly totalWeight: number;
    } & XdsForwardingOptions)
  /**
   * A route whose action is not `route` (non_forwarding_action, redirect, direct_response, filter_action, or a
   * kind this client does not know): the route still matches, and RPCs it matches fail with UNAVAILABLE.
   */
  | { readonly kind: 'non_forwarding'; readonly action: string };

// ---------------------------------------------------------------------------------------------------------
// CDS: envoy.config.cluster.v3.Cluster

/**
 * A50 outlier detection, in the form of the `outlier_detection_experimental` LB config JSON (add `childPolicy`):
 * durations as proto3 JSON strings (`"10s"`); fields the Cluster leaves unset are absent, so the policy's
 * defaults apply. An algorithm the Cluster disables (enforcing_success_rate 0; enforcing_failure_percentage
 * 0 or unset) is absent.
 */
export interface XdsOutlierDetectionConfig {
  readonly interval?: string;
  readonly baseEjectionTime?: string;
  readonly maxEjectionTime?: string;
  /** 0 … 100. */
  readonly maxEjectionPercent?: number;
  readonly successRateEjection?: {
    readonly stdevFactor?: number;
    /** 0 … 100. */
    readonly enforcementPercentage?: number;
    readonly minimumHosts?: number;
    readonly requestVolume?: number;
  };
  readonly failurePercentageEjection?: {
    /** 0 … 100. */
    readonly threshold?: number;
    /** 0 … 100. */
    readonly enforcementPercentage?: number;
    readonly minimumHosts?: number;
    readonly requestVolume?: number;
  };
}

/** A27 / A37: circuit_breakers.thresholds (priority DEFAULT) max_requests when unset. */
export const DEFAULT_MAX_CONCURRENT_REQUESTS = 1024;

/** How a cluster finds its endpoints (A27 EDS, A37 LOGICAL_DNS and aggregate). */
export type XdsClusterDiscovery =
  /** Watch the ClusterLoadAssignment `edsServiceName` (eds_cluster_config.service_name, else the cluster name). */
  | { readonly kind: 'eds'; readonly edsServiceName: string }
  /** Resolve `hostname` with DNS; every address gets `port` (A37). */
  | { readonly kind: 'logical_dns'; readonly hostname: string; readonly port: number }
  /** An ordered list of clusters, expanded to leaf clusters by the dependency manager (A37 / A75). */
  | { readonly kind: 'aggregate'; readonly clusters: readonly string[] };

/** A validated Cluster. */
export interface XdsCluster {
  readonly name: string;
  readonly discovery: XdsClusterDiscovery;
  /** The endpoint-picking LoadBalancingConfig (A52, or the legacy lb_policy fields); validated by the registry. */
  readonly lbPolicy: LbConfigList;
  /** Circuit breaking: the most concurrent requests the cluster may carry. */
  readonly maxRequests: number;
  /** A50: set when the Cluster has an outlier_detection field. */
  readonly outlierDetection: XdsOutlierDetectionConfig | undefined;
  /** Whether load reports go to the xDS server the cluster came from (lrs_server is `self`). */
  readonly lrsLoadReporting: boolean;
  /** A85 (A64 with its switch off): what of the backends' per-call ORCA reports the load reports carry; absent: nothing. */
  readonly backendMetricPropagation?: XdsBackendMetricPropagation;
  /**
   * A55: common_lb_config.override_host_status — the EDS health statuses of endpoints a session cookie may
   * still pick (UNKNOWN, HEALTHY, DRAINING; other values are ignored). [UNKNOWN, HEALTHY] when unset.
   */
  readonly overrideHostStatus: readonly XdsHealthStatus[];
  /** A29: transport_socket's UpstreamTlsContext; absent: connections use the channel's fallback credentials. */
  readonly upstreamTls: XdsUpstreamTls | undefined;
}
