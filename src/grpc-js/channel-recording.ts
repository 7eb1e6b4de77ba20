import { experimental, type status as GrpcStatus, type Metadata } from '@grpc/grpc-js';
import {
  addressKey,
  type CallMetadata,
  type CancelTimer,
  type ChannelArgs,
  type ConnectivityState,
  ENDPOINT_WEIGHT,
  type Endpoint,
  HASH_KEY,
  HIERARCHICAL_PATH,
  LOCALITY,
  LOCALITY_WEIGHT,
  realClock,
  type Status,
  type StatusOr,
  TRANSIENT_FAILURE,
} from '../core/index.js';
import { requestHeaderValue } from '../hash/index.js';
import type {
  EndpointCalls,
  FlightRecorder,
  RecordedCluster,
  RecordedEndpoint,
  RecordedHeaderMatch,
  RecordedRoute,
  RecordedRouteMatch,
  UpdateEvent,
} from '../recorder/index.js';
import {
  XDS_CLUSTER_CALL_ATTRIBUTE,
  XDS_PATH_CALL_ATTRIBUTE,
  XDS_ROUTE_CALL_ATTRIBUTE,
} from '../xds/call-attributes.js';
import type { XdsHeaderMatcher, XdsRoute, XdsRouteMatch } from '../xds/resources/types.js';
import { XDS_CHANNEL_ID_ATTRIBUTE, xdsClustersOf, xdsConfigOf } from '../xds/xds-config.js';
import { readBackendMetrics } from './backend-metrics.js';
import { fromGrpcState } from './connectivity.js';
import { FLIGHT_RECORDER_OPTION } from './recorded-channels.js';
import type { GrpcSubchannelHandle } from './subchannel-adapter.js';

/**
 * What one channel's root policy writes into its flight recorder: the updates it receives, the connection
 * states of the grpc-js subchannels its helper creates, the pickers it publishes, and (through the picker
 * adapter) how calls end, per endpoint.
 */
export class ChannelRecording {
  /** Per handle: its address's counters and the complete-pick result that counts the call's end. */
  private readonly handles = new WeakMap<
    GrpcSubchannelHandle,
    { readonly counter: EndpointCalls; readonly result: experimental.PickResult }
  >();

  /** The last state recorded per address. */
  private readonly states = new Map<string, ConnectivityState>();

  /** The values of the recorder's call class headers for the call being picked (reused: no allocation). */
  private readonly classValues: (string | undefined)[] = [];

  constructor(readonly recorder: FlightRecorder) {}

  update(
    endpoints: StatusOr<readonly Endpoint[]>,
    config: unknown,
    attributes: ChannelArgs,
    resolutionNote: string,
  ): void {
    const clusters = xdsClustersOf(attributes);
    const routes = xdsConfigOf(attributes)?.virtualHost.routes;
    const channelId = attributes[XDS_CHANNEL_ID_ATTRIBUTE];
    const event: Omit<UpdateEvent, 'type' | 'at'> = {
      config,
      ...(endpoints.ok
        ? { endpoints: endpoints.value.map(recordedEndpoint) }
        : { error: { code: endpoints.status.code, details: endpoints.status.details } }),
      ...(resolutionNote ? { resolutionNote } : {}),
      settings: plainSettings(attributes),
      ...(clusters
        ? { xdsClusters: [...clusters.clusters].map(([name, c]) => recordedCluster(name, c)) }
        : {}),
      ...(routes ? { xdsRoutes: routes.map(recordedRoute) } : {}),
      ...(typeof channelId === 'bigint' ? { xdsChannelId: channelId.toString() } : {}),
    };
    this.recorder.update(event);
  }

  /** A timer of the tree on the wall clock, recorded when it fires: the replay runs it as late as it ran. */
  timer(delayMs: number, fn: () => void): CancelTimer {
    const recorder = this.recorder;
    const setAt = recorder.now();
    return realClock.setTimer(delayMs, () => {
      recorder.timerFired(setAt, delayMs);
      fn();
    });
  }

  picker(state: ConnectivityState, status: Status): void {
    this.recorder.picker(state, status);
  }

  /**
   * Records the states and health of a grpc-js subchannel until the returned function is called. An address
   * can have more than one grpc-js subchannel (made with other options); a state it already has is not
   * recorded again.
   */
  watch(address: string, subchannel: experimental.SubchannelInterface): () => void {
    const recorder = this.recorder;
    const states = this.states;
    const record = (state: ConnectivityState, details?: string) => {
      if (states.get(address) === state) return;
      states.set(address, state);
      recorder.subchannelState(address, state, state === TRANSIENT_FAILURE ? details : undefined);
    };
    record(fromGrpcState(subchannel.getConnectivityState()));
    const onState: experimental.ConnectivityStateListener = (_s, _previous, next, _k, errorMessage) =>
      record(fromGrpcState(next), errorMessage);
    const onHealth: experimental.HealthListener = (healthy) => recorder.subchannelHealth(address, healthy);
    subchannel.addConnectivityStateListener(onState);
    subchannel.addHealthStateWatcher(onHealth);
    return () => {
      subchannel.removeConnectivityStateListener(onState);
      subchannel.removeHealthStateWatcher(onHealth);
    };
  }

  /**
   * Counts a pick of the handle's endpoint and returns the complete-pick result without policy hooks, which
   * counts the call's end (both made on the handle's first pick and kept: nothing is allocated per pick).
   */
  picked(handle: GrpcSubchannelHandle): experimental.PickResult {
    let entry = this.handles.get(handle);
    if (entry === undefined) {
      const counter = this.recorder.endpoint(handle.key);
      entry = {
        counter,
        result: Object.freeze({
          pickResultType: experimental.PickResultType.COMPLETE,
          subchannel: handle.grpc,
          status: null,
          onCallStarted: null,
          onCallEnded: this.callEnded(handle.key, null),
        }),
      };
      this.handles.set(handle, entry);
    }
    this.recorder.picked(entry.counter);
    return entry.result;
  }

  /** A call-end hook that counts the call, then runs the policy's own hook (`then`) when there is one. */
  callEnded(
    address: string,
    then: ((code: GrpcStatus, details: string, trailers: Metadata) => void) | null,
  ): (code: GrpcStatus, details: string, trailers: Metadata) => void {
    const recorder = this.recorder;
    const counter: EndpointCalls = recorder.endpoint(address);
    return (code, details, trailers) => {
      recorder.callEnded(counter, code === 0, cpuUtilization(trailers));
      then?.(code, details, trailers);
    };
  }

  /**
   * Counts the pick under the xDS route and cluster of its call, when the config selector named them, and
   * under its call class: its path and the values of the headers the routes match or hash on.
   */
  routePicked(pickInfo: Readonly<Record<string, string>>, metadata: CallMetadata): void {
    const route = pickInfo[XDS_ROUTE_CALL_ATTRIBUTE];
    const child = pickInfo[XDS_CLUSTER_CALL_ATTRIBUTE];
    if (typeof route !== 'string' || typeof child !== 'string') return;
    const recorder = this.recorder;
    recorder.routePicked(route, child);
    const path = pickInfo[XDS_PATH_CALL_ATTRIBUTE];
    if (typeof path !== 'string') return;
    const names = recorder.callClassHeaders;
    const values = this.classValues;
    if (values.length !== names.length) values.length = names.length;
    for (let i = 0; i < names.length; i++) values[i] = requestHeaderValue(metadata, names[i]!);
    recorder.callClassPicked(route, child, path, values);
  }

  pickFailed(dropped: boolean): void {
    this.recorder.pickFailed(dropped);
  }
}

/** Channel options with plain values (settings such as `grpc.priority_failover_timeout_ms`), not grpc-js's own. */
function plainSettings(attributes: ChannelArgs): Record<string, string | number | boolean> {
  const settings: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (key.startsWith('grpc.internal.') || key === FLIGHT_RECORDER_OPTION) continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      settings[key] = value;
  }
  return settings;
}

/** The per-call ORCA report's CPU utilization (A51), read only when the trailer is there. */
function cpuUtilization(trailers: Metadata | undefined): number | undefined {
  return trailers === undefined ? undefined : readBackendMetrics(trailers)?.cpuUtilization;
}

function recordedEndpoint(e: Endpoint): RecordedEndpoint {
  const a = e.attributes;
  const path = a.get(HIERARCHICAL_PATH);
  const weight = a.get(ENDPOINT_WEIGHT);
  const locality = a.get(LOCALITY);
  const localityWeight = a.get(LOCALITY_WEIGHT);
  const hashKey = a.get(HASH_KEY);
  const attributes = {
    ...(path !== undefined ? { path: [...path] } : {}),
    ...(weight !== undefined ? { weight } : {}),
    ...(locality !== undefined ? { locality } : {}),
    ...(localityWeight !== undefined ? { localityWeight } : {}),
    ...(hashKey !== undefined ? { hashKey } : {}),
  };
  return {
    addresses: e.addresses.map(addressKey),
    ...(Object.keys(attributes).length > 0 ? { attributes } : {}),
  };
}

type ClusterEntry = ReturnType<NonNullable<ReturnType<typeof xdsClustersOf>>['clusters']['get']> & {};

function recordedCluster(
  name: string,
  entry: ClusterEntry,
): RecordedCluster | { name: string; error: { code: number; details: string } } {
  if (!entry.ok) return { name, error: { code: entry.status.code, details: entry.status.details } };
  const { cluster, children } = entry.value;
  const base = {
    name,
    kind: cluster.discovery.kind,
    lbPolicy: cluster.lbPolicy,
    maxRequests: cluster.maxRequests,
    ...(cluster.outlierDetection ? { outlierDetection: { ...cluster.outlierDetection } } : {}),
    overrideHostStatus: [...cluster.overrideHostStatus],
  };
  if (children.kind === 'aggregate') return { ...base, leafClusters: [...children.leafClusters] };
  const discovery = cluster.discovery;
  const dns =
    discovery.kind === 'logical_dns' ? { dns: { hostname: discovery.hostname, port: discovery.port } } : {};
  const assignment = children.endpoints;
  return {
    ...base,
    ...dns,
    ...(children.resolutionNote ? { resolutionNote: children.resolutionNote } : {}),
    ...(assignment
      ? {
          assignment: {
            priorities: assignment.priorities.map((localities) =>
              localities.map((l) => ({
                locality: { ...l.name },
                weight: l.weight,
                endpoints: l.endpoints.map((e) => ({
                  addresses: e.addresses.map(addressKey),
                  weight: e.weight,
                  healthStatus: e.healthStatus,
                  ...(e.hashKey !== undefined ? { hashKey: e.hashKey } : {}),
                })),
              })),
            ),
            drops: assignment.drops.map((d) => ({ category: d.category, perMillion: d.perMillion })),
          },
        }
      : {}),
  };
}

/**
 * A route as the recording keeps it: its match (described for people, and as the config selector applies it),
 * its cluster choice and its hash policies.
 */
function recordedRoute(route: XdsRoute): RecordedRoute {
  const action = route.action;
  const match = describeMatch(route);
  const matcher = recordedMatch(route.match);
  if (action.kind === 'non_forwarding') return { match, matcher, nonForwarding: action.action };
  const hashPolicies =
    action.hashPolicies.length > 0 ? { hashPolicies: action.hashPolicies.map((p) => ({ ...p })) } : {};
  if (action.kind === 'cluster') return { match, matcher, cluster: action.cluster, ...hashPolicies };
  return {
    match,
    matcher,
    weightedClusters: action.clusters.map((c) => ({ name: c.name, weight: c.weight })),
    ...hashPolicies,
  };
}

function recordedMatch(m: XdsRouteMatch): RecordedRouteMatch {
  const p = m.path;
  return {
    path:
      p.kind === 'safe_regex'
        ? { kind: 'safe_regex', regex: p.regex.pattern() }
        : { kind: p.kind, value: p.kind === 'prefix' ? p.prefix : p.path, caseSensitive: p.caseSensitive },
    headers: m.headers.map(recordedHeaderMatch),
    ...(m.runtimeFractionPerMillion !== undefined
      ? { runtimeFractionPerMillion: m.runtimeFractionPerMillion }
      : {}),
  };
}

function recordedHeaderMatch(h: XdsHeaderMatcher): RecordedHeaderMatch {
  const base = { name: h.name, invert: h.invert };
  const m = h.match;
  if (m.kind === 'present') return { ...base, kind: 'present', present: m.present };
  if (m.kind === 'range') return { ...base, kind: 'range', start: String(m.start), end: String(m.end) };
  const s = m.matcher;
  if (s.kind === 'safe_regex') return { ...base, kind: 'safe_regex', regex: s.regex.pattern() };
  return { ...base, kind: s.kind, value: s.value, ignoreCase: s.ignoreCase };
}

function describeMatch(route: XdsRoute): string {
  const { path, headers, runtimeFractionPerMillion } = route.match;
  const text =
    path.kind === 'safe_regex'
      ? `safe_regex ${JSON.stringify(path.regex.pattern())}`
      : `${path.kind} ${JSON.stringify(path.kind === 'prefix' ? path.prefix : path.path)}${path.caseSensitive ? '' : ' (any case)'}`;
  return (
    text +
    (headers.length > 0 ? `, headers ${headers.map((h) => h.name).join(', ')}` : '') +
    (runtimeFractionPerMillion !== undefined ? `, runtime_fraction ${runtimeFractionPerMillion} ppm` : '')
  );
}
