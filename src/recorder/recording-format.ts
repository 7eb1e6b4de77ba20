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

/**
 * A route of the xDS channel's virtual host (A28), as far as the tree reads it: the action's cluster choice.
 * `match` describes the route's match for people; a replay takes calls per route from the `calls` events.
 */
export interface RecordedRoute {
  readonly match: string;
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
