import { experimental, type status as GrpcStatus, type Metadata } from '@grpc/grpc-js';
import {
  addressKey,
  type ChannelArgs,
  type ConnectivityState,
  ENDPOINT_WEIGHT,
  type Endpoint,
  HASH_KEY,
  HIERARCHICAL_PATH,
  LOCALITY,
  LOCALITY_WEIGHT,
  type Status,
  type StatusOr,
  TRANSIENT_FAILURE,
} from '../core/index.js';
import type {
  EndpointCalls,
  FlightRecorder,
  RecordedCluster,
  RecordedEndpoint,
  UpdateEvent,
} from '../recorder/index.js';
import { xdsClustersOf } from '../xds/xds-config.js';
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
  /** Complete-pick results that count the call's end, one per handle (built on its first pick). */
  private readonly results = new WeakMap<GrpcSubchannelHandle, experimental.PickResult>();

  constructor(readonly recorder: FlightRecorder) {}

  update(
    endpoints: StatusOr<readonly Endpoint[]>,
    config: unknown,
    attributes: ChannelArgs,
    resolutionNote: string,
  ): void {
    const clusters = xdsClustersOf(attributes);
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
    };
    this.recorder.update(event);
  }

  picker(state: ConnectivityState, status: Status): void {
    this.recorder.picker(state, status);
  }

  /** Records the states and health of a grpc-js subchannel until the returned function is called. */
  watch(address: string, subchannel: experimental.SubchannelInterface): () => void {
    const recorder = this.recorder;
    recorder.subchannelState(address, fromGrpcState(subchannel.getConnectivityState()));
    const onState: experimental.ConnectivityStateListener = (_s, _previous, next, _k, errorMessage) => {
      const state = fromGrpcState(next);
      recorder.subchannelState(address, state, state === TRANSIENT_FAILURE ? errorMessage : undefined);
    };
    const onHealth: experimental.HealthListener = (healthy) => recorder.subchannelHealth(address, healthy);
    subchannel.addConnectivityStateListener(onState);
    subchannel.addHealthStateWatcher(onHealth);
    return () => {
      subchannel.removeConnectivityStateListener(onState);
      subchannel.removeHealthStateWatcher(onHealth);
    };
  }

  /** The handle's complete-pick result, counting each call's end on the handle's address. */
  completeResult(handle: GrpcSubchannelHandle): experimental.PickResult {
    let result = this.results.get(handle);
    if (result === undefined) {
      result = Object.freeze({
        pickResultType: experimental.PickResultType.COMPLETE,
        subchannel: handle.grpc,
        status: null,
        onCallStarted: null,
        onCallEnded: this.callEnded(handle.key, null),
      });
      this.results.set(handle, result);
    }
    return result;
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
  const assignment = children.endpoints;
  return {
    ...base,
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
