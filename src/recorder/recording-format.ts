// The flight recorder's file format (docs/recording-format.md): JSON lines, a header line first, one event
// per line, an `end` line last. The types here are the format; the writer (flight-recorder.ts) and the reader
// (read-recording.ts) both follow them, and the version says which revision of the page a file follows.

import type { ConnectivityState } from '../core/index.js';

export const RECORDING_FORMAT = 'lbtree-recording';
/** The revision of docs/recording-format.md this code reads (and older ones). Newer files are refused. */
export const RECORDING_VERSION = 2;
/** The first version with `switch` events; a file without one is written as version 1, which older readers read. */
export const SWITCH_EVENT_VERSION = 2;

export interface RecordedStatus {
  readonly code: number;
  readonly details: string;
}

export interface RecordingHeader {
  readonly format: typeof RECORDING_FORMAT;
  readonly version: number;
  /** Wall-clock time of the recorder's time 0 (ISO 8601); every `at` counts milliseconds from it. */
  readonly startedAt: string;
  /** The length the call-outcome intervals (`calls` events) are meant to have. */
  readonly intervalMs: number;
  /** The ring's size in events. */
  readonly maxEvents: number;
  /** Events the ring dropped (oldest first) before the export. */
  readonly droppedEvents: number;
  /** A name the application gave the recording (the channel's target, say), or ''. */
  readonly label: string;
  /** The most call classes (`callClasses`) one `calls` event holds; absent in files written before them. */
  readonly maxCallClasses?: number;
}

/** An endpoint of a plain update: its addresses and the per-endpoint attributes lbtree's policies read. */
export interface RecordedEndpoint {
  readonly addresses: readonly string[];
  readonly attributes?: {
    readonly path?: readonly string[];
    readonly weight?: number;
    readonly locality?: string;
    readonly localityWeight?: number;
    readonly hashKey?: string;
  };
}

export interface RecordedLocalityName {
  readonly region: string;
  readonly zone: string;
  readonly subZone: string;
}

/** A validated ClusterLoadAssignment, as the xDS client accepted it. */
export interface RecordedAssignment {
  /** Localities by priority, highest priority first. */
  readonly priorities: readonly (readonly {
    readonly locality: RecordedLocalityName;
    readonly weight: number;
    readonly endpoints: readonly {
      readonly addresses: readonly string[];
      readonly weight: number;
      readonly healthStatus: 'UNKNOWN' | 'HEALTHY' | 'DRAINING';
      readonly hashKey?: string;
    }[];
  }[])[];
  readonly drops: readonly { readonly category: string; readonly perMillion: number }[];
}

/** A cluster of an xDS channel's XdsConfig (gRFC A74): the parts of the validated Cluster the tree reads. */
export interface RecordedCluster {
  readonly name: string;
  /** `eds`, `logical_dns` or `aggregate`; replay runs EDS and LOGICAL_DNS clusters. */
  readonly kind: 'eds' | 'logical_dns' | 'aggregate';
  /** The endpoint-picking LoadBalancingConfig list (A52). */
  readonly lbPolicy: unknown;
  readonly maxRequests: number;
  /** A50 outlier detection, in the form the xDS client validated it to; absent when the Cluster has none. */
  readonly outlierDetection?: Readonly<Record<string, unknown>>;
  readonly overrideHostStatus: readonly string[];
  /** An aggregate cluster's leaf clusters, in priority order. */
  readonly leafClusters?: readonly string[];
  /** A LOGICAL_DNS cluster's DNS name and port (A37); its resolved addresses are the `assignment`. */
  readonly dns?: { readonly hostname: string; readonly port: number };
  /** The endpoints; absent when none were obtained yet (`resolutionNote` says why). */
  readonly assignment?: RecordedAssignment;
  readonly resolutionNote?: string;
}

/** A28 RouteMatch.path_specifier: `case_sensitive: false` applies to prefix and path only. */
export type RecordedPathMatch =
  | { readonly kind: 'prefix' | 'path'; readonly value: string; readonly caseSensitive: boolean }
  | { readonly kind: 'safe_regex'; readonly regex: string };

/** A28 RouteMatch.headers[i], lower-cased name; what it tests of the header's value. */
export type RecordedHeaderMatch = { readonly name: string; readonly invert: boolean } & (
  | {
      readonly kind: 'exact' | 'prefix' | 'suffix' | 'contains';
      readonly value: string;
      readonly ignoreCase: boolean;
    }
  | { readonly kind: 'safe_regex'; readonly regex: string }
  /** The value as an int64 in [start, end): decimal strings (int64 does not fit a JSON number). */
  | { readonly kind: 'range'; readonly start: string; readonly end: string }
  | { readonly kind: 'present'; readonly present: boolean }
);

/** A route's whole match (A28), as the config selector applies it. */
export interface RecordedRouteMatch {
  readonly path: RecordedPathMatch;
  readonly headers: readonly RecordedHeaderMatch[];
  /** runtime_fraction in parts per million, when the route has one. */
  readonly runtimeFractionPerMillion?: number;
}

/** A42: one hash policy of a route, as lbtree's RequestHasher reads it. */
export type RecordedHashPolicy =
  | {
      readonly type: 'header';
      readonly headerName: string;
      readonly regexRewrite?: { readonly pattern: string; readonly substitution: string };
      readonly terminal?: boolean;
    }
  | { readonly type: 'filter_state'; readonly key: string; readonly terminal?: boolean }
  | {
      readonly type: 'cookie' | 'connection_properties' | 'query_parameter' | 'unknown';
      readonly terminal?: boolean;
    };

/**
 * A route of the xDS channel's virtual host (A28): its match and the action's cluster choice and hash
 * policies. `match` describes the match for people; `matcher` is the match itself, which a replay runs again
 * through lbtree's config selector over the calls' recorded inputs (`callClasses`).
 */
export interface RecordedRoute {
  readonly match: string;
  /** The route's match (absent in files written before call classes were). */
  readonly matcher?: RecordedRouteMatch;
  /** A42: a forwarding route's hash policies, when it has any. */
  readonly hashPolicies?: readonly RecordedHashPolicy[];
  /** A single cluster. */
  readonly cluster?: string;
  /** weighted_clusters: each call chooses one at random by weight (A28). */
  readonly weightedClusters?: readonly { readonly name: string; readonly weight: number }[];
  /** A route whose action is not `route` (its calls fail before any pick): the action's name. */
  readonly nonForwarding?: string;
}

/** What the resolver (or the xDS resolver) delivered to the root policy. */
export interface UpdateEvent {
  readonly type: 'update';
  readonly at: number;
  /** The root's LoadBalancingConfig, as one `{ name: config }` entry. */
  readonly config: unknown;
  /** The endpoints; absent when the update is a resolver error. */
  readonly endpoints?: readonly RecordedEndpoint[];
  readonly error?: RecordedStatus;
  readonly resolutionNote?: string;
  /** The channel settings the tree reads (`grpc.priority_failover_timeout_ms`, …): options with plain values. */
  readonly settings?: Readonly<Record<string, string | number | boolean>>;
  /** On an xDS channel: every cluster of the XdsConfig the update carries, or an error per cluster. */
  readonly xdsClusters?: readonly (
    | RecordedCluster
    | { readonly name: string; readonly error: RecordedStatus }
  )[];
  /** On an xDS channel: the routes of the virtual host the channel uses, in order (A28). */
  readonly xdsRoutes?: readonly RecordedRoute[];
  /**
   * On an xDS channel: A42's `io.grpc.channel_id` (a decimal string: 64 bits do not fit a JSON number), which
   * a filter_state hash policy hashes calls by.
   */
  readonly xdsChannelId?: string;
}

/** A connectivity state change of the channel's connection to one address. */
export interface SubchannelEvent {
  readonly type: 'subchannel';
  readonly at: number;
  readonly address: string;
  readonly state: ConnectivityState;
  /** Why, for TRANSIENT_FAILURE. */
  readonly details?: string;
}

/** A health change (grpc-js health checking) of the connection to one address. */
export interface HealthEvent {
  readonly type: 'health';
  readonly at: number;
  readonly address: string;
  readonly healthy: boolean;
}

/** A picker the root published to the channel. */
export interface PickerEvent {
  readonly type: 'picker';
  readonly at: number;
  readonly state: ConnectivityState;
  readonly status: RecordedStatus;
}

export interface EndpointCallsRecord {
  readonly address: string;
  /** Calls the root's picker sent to this endpoint in the interval (its share of picks). */
  readonly picks: number;
  /** Calls to this endpoint that ended in the interval. */
  readonly calls: number;
  /** Calls that ended with a status other than OK. */
  readonly errors: number;
  /** Calls whose trailers carried an ORCA load report (A51). */
  readonly orcaReports: number;
  /** The mean CPU utilization of those reports (0 when there were none). */
  readonly cpuUtilization: number;
}

/**
 * Picks and call outcomes of one interval, `[at, at + durationMs)`: picks when made, outcomes when calls ended.
 * An interval lasts about `intervalMs`; `durationMs` is how long it really lasted (its timer may run late).
 */
export interface CallsEvent {
  readonly type: 'calls';
  readonly at: number;
  readonly durationMs: number;
  readonly endpoints: readonly EndpointCallsRecord[];
  /** Picks the root's picker failed (TRANSIENT_FAILURE) or dropped. */
  readonly failedPicks: number;
  readonly droppedPicks: number;
  /**
   * On an xDS channel: the interval's picks (complete, failed and dropped) per route of the latest update's
   * `xdsRoutes` and cluster: which route each call took, and which cluster the config selector chose for it
   * (the call attribute the tree was given, an input of the tree like the endpoints).
   */
  readonly routes?: readonly RoutePicks[];
  /**
   * On an xDS channel: the interval's picks per call class — the route and cluster, and what the config
   * selector matched and hashed the call by (its path and the headers the routes read). At most the header's
   * `maxCallClasses` classes; the picks of the calls of further classes are in `routes` only.
   */
  readonly callClasses?: readonly CallClassPicks[];
}

export interface CallClassPicks extends RoutePicks {
  /** The call's path, `/service/method`. */
  readonly path: string;
  /**
   * The values of the headers the latest update's routes match or hash on (A28, A42), by lower-cased name,
   * several values joined with `,`; a header the call did not carry is absent.
   */
  readonly headers: Readonly<Record<string, string>>;
}

export interface RoutePicks {
  /** The index of the route in the latest update's `xdsRoutes`. */
  readonly route: number;
  /** The xds_cluster_manager child the calls were sent to: `cluster:NAME`. */
  readonly child: string;
  readonly picks: number;
}

/**
 * A timer of the tree fired (`at`), set at `setAt` for `delayMs`: on a busy process timers run late, and a
 * decision taken on a timer (an outlier detection interval) happens when it ran, not when it was due.
 */
export interface TimerEvent {
  readonly type: 'timer';
  readonly at: number;
  readonly setAt: number;
  readonly delayMs: number;
}

/**
 * grpc-js switched the channel to another root policy (a service config naming another policy): it builds the
 * new root beside the serving one (`started`; the new root's first update follows), and uses it from its
 * first picker that is not CONNECTING, when it destroys the old root (`done`).
 */
export interface SwitchEvent {
  readonly type: 'switch';
  readonly at: number;
  /** The root policy serving before the switch (its name as grpc-js knows it). */
  readonly from: string;
  readonly to: string;
  readonly phase: 'started' | 'done';
}

export type RecordedEvent =
  | UpdateEvent
  | SwitchEvent
  | SubchannelEvent
  | HealthEvent
  | PickerEvent
  | CallsEvent
  | TimerEvent;

/** The last line: its presence tells a complete file from a truncated one. */
export interface EndLine {
  readonly type: 'end';
  readonly at: number;
  /** The number of event lines between the header and this line. */
  readonly events: number;
}

export interface Recording {
  readonly header: RecordingHeader;
  /** In time order. */
  readonly events: readonly RecordedEvent[];
  /** When the recording was exported (the `end` line's `at`). */
  readonly endAt: number;
}

/** A recording file that cannot be read: the message names the line and field, or the version. */
export class RecordingError extends Error {
  override readonly name = 'RecordingError';
}
