import type { Attributes } from './attributes.js';
import { CONNECTING, type ConnectivityState, READY, SHUTDOWN } from './connectivity-state.js';
import { registerInstrument } from './instrument-registry.js';
import {
  BACKEND_SERVICE_LABEL,
  LOCALITY_LABEL,
  METRIC_BACKEND_SERVICE,
  METRIC_LOCALITY,
  TARGET_LABEL,
} from './metric-labels.js';
import type { MetricLabels, MetricsRecorder } from './metrics-recorder.js';

// A94's subchannel metrics: experimental, so off by default.

const OPTIONAL = [BACKEND_SERVICE_LABEL, LOCALITY_LABEL];
export const DISCONNECT_ERROR_LABEL = 'grpc.disconnect_error';
/** A94: the security level of a connection, an optional label of `grpc.subchannel.open_connections`. */
export const SECURITY_LEVEL_LABEL = 'grpc.security_level';
/** A94's values of `grpc.security_level`. */
export type SecurityLevel = 'none' | 'integrity_only' | 'privacy_and_integrity';

export const SUBCHANNEL_DISCONNECTIONS = registerInstrument({
  name: 'grpc.subchannel.disconnections',
  description: 'Number of times the selected subchannel becomes disconnected.',
  unit: '{disconnection}',
  type: 'counter',
  labels: [TARGET_LABEL],
  optionalLabels: [...OPTIONAL, DISCONNECT_ERROR_LABEL],
  enabledByDefault: false,
});
export const SUBCHANNEL_CONNECTION_ATTEMPTS_SUCCEEDED = registerInstrument({
  name: 'grpc.subchannel.connection_attempts_succeeded',
  description: 'Number of successful connection attempts.',
  unit: '{attempt}',
  type: 'counter',
  labels: [TARGET_LABEL],
  optionalLabels: OPTIONAL,
  enabledByDefault: false,
});
export const SUBCHANNEL_CONNECTION_ATTEMPTS_FAILED = registerInstrument({
  name: 'grpc.subchannel.connection_attempts_failed',
  description: 'Number of failed connection attempts.',
  unit: '{attempt}',
  type: 'counter',
  labels: [TARGET_LABEL],
  optionalLabels: OPTIONAL,
  enabledByDefault: false,
});
export const SUBCHANNEL_OPEN_CONNECTIONS = registerInstrument({
  name: 'grpc.subchannel.open_connections',
  description: 'Number of open connections.',
  unit: '{connection}',
  type: 'up_down_counter',
  labels: [TARGET_LABEL],
  optionalLabels: [SECURITY_LEVEL_LABEL, ...OPTIONAL],
  enabledByDefault: false,
});

/** RFC 9113's error code names, as A94's "GOAWAY <ERROR_CODE>" gives them. */
const HTTP2_ERROR_CODE =
  /\b(NO_ERROR|PROTOCOL_ERROR|INTERNAL_ERROR|FLOW_CONTROL_ERROR|SETTINGS_TIMEOUT|STREAM_CLOSED|FRAME_SIZE_ERROR|REFUSED_STREAM|CANCEL|COMPRESSION_ERROR|CONNECT_ERROR|ENHANCE_YOUR_CALM|INADEQUATE_SECURITY|HTTP_1_1_REQUIRED)\b/;

/** A94's `grpc.disconnect_error` for a connection error text: the socket error codes it names, else "unknown". */
export function disconnectError(message: string | undefined): string {
  if (message === undefined) return 'unknown';
  if (message.includes('GOAWAY')) {
    const code = HTTP2_ERROR_CODE.exec(message);
    return code ? `GOAWAY ${code[1]}` : 'unknown';
  }
  if (message.includes('ECONNRESET')) return 'connection reset';
  if (message.includes('ETIMEDOUT')) return 'connection timed out';
  if (message.includes('ECONNABORTED')) return 'connection aborted';
  if (/\bE[A-Z]{3,}\b/.test(message)) return 'socket error';
  return 'unknown';
}

/** A94's optional labels of a subchannel made with these (endpoint) attributes. */
export function subchannelMetricLabels(attributes: Attributes): MetricLabels {
  const labels: Record<string, string> = {};
  const backendService = attributes.get(METRIC_BACKEND_SERVICE);
  if (backendService !== undefined) labels[BACKEND_SERVICE_LABEL] = backendService;
  const locality = attributes.get(METRIC_LOCALITY);
  if (locality !== undefined) labels[LOCALITY_LABEL] = locality;
  return labels;
}

/**
 * A94's metrics of one subchannel, fed its state changes by whoever owns the connection (the grpc-js
 * adapter, once per grpc-js subchannel; the simulator, per fake subchannel). Counted from the subchannel's
 * side: a connection Happy Eyeballs does not choose still counts.
 */
export class SubchannelMetrics {
  private state: ConnectivityState;
  private readonly disconnectLabels = new Map<string, MetricLabels>();
  private readonly securityLabels = new Map<SecurityLevel, MetricLabels>();
  /** The labels the open connection was counted with (its security level), to count it closed with. */
  private openLabels: MetricLabels;

  /**
   * `labels`: the endpoint's backend service and locality (A94), when it has them. `securityLevel`: the level
   * of the connection just made (read when it is READY), or undefined where it is not known.
   */
  constructor(
    private readonly recorder: MetricsRecorder,
    private readonly labels: MetricLabels,
    state: ConnectivityState,
    private readonly securityLevel: () => SecurityLevel | undefined = () => undefined,
  ) {
    this.state = state;
    this.openLabels = labels;
    if (state === READY) this.opened();
  }

  onState(next: ConnectivityState, errorMessage?: string): void {
    const previous = this.state;
    if (next === previous || previous === SHUTDOWN) return;
    this.state = next;
    const recorder = this.recorder;
    if (previous === READY) {
      recorder.addUpDownCounter(SUBCHANNEL_OPEN_CONNECTIONS, -1, this.openLabels);
      recorder.addCounter(SUBCHANNEL_DISCONNECTIONS, 1, this.withError(disconnectError(errorMessage)));
    } else if (previous === CONNECTING) {
      if (next === READY) recorder.addCounter(SUBCHANNEL_CONNECTION_ATTEMPTS_SUCCEEDED, 1, this.labels);
      else recorder.addCounter(SUBCHANNEL_CONNECTION_ATTEMPTS_FAILED, 1, this.labels);
    }
    if (next === READY) this.opened();
  }

  /**
   * The subchannel is shut down: an open connection counts as a "subchannel shutdown" disconnection; an
   * attempt in flight counts as neither success nor failure (A94).
   */
  shutdown(): void {
    if (this.state === READY) {
      this.recorder.addUpDownCounter(SUBCHANNEL_OPEN_CONNECTIONS, -1, this.openLabels);
      this.recorder.addCounter(SUBCHANNEL_DISCONNECTIONS, 1, this.withError('subchannel shutdown'));
    }
    this.state = SHUTDOWN;
  }

  /** A connection is open: counted with its security level when that is known (and the metric is on). */
  private opened(): void {
    const recorder = this.recorder;
    const level = recorder.isEnabled(SUBCHANNEL_OPEN_CONNECTIONS) ? this.securityLevel() : undefined;
    this.openLabels = level === undefined ? this.labels : this.withSecurity(level);
    recorder.addUpDownCounter(SUBCHANNEL_OPEN_CONNECTIONS, 1, this.openLabels);
  }

  private withSecurity(level: SecurityLevel): MetricLabels {
    let labels = this.securityLabels.get(level);
    if (labels === undefined) {
      labels = Object.freeze({ ...this.labels, [SECURITY_LEVEL_LABEL]: level });
      this.securityLabels.set(level, labels);
    }
    return labels;
  }

  private withError(error: string): MetricLabels {
    let labels = this.disconnectLabels.get(error);
    if (labels === undefined) {
      labels = Object.freeze({ ...this.labels, [DISCONNECT_ERROR_LABEL]: error });
      this.disconnectLabels.set(error, labels);
    }
    return labels;
  }
}
