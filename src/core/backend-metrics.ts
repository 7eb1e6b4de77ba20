import type { Status } from './status.js';

/**
 * A51 backend metrics: what a server reported about its load (an ORCA `OrcaLoadReport`), in a call's
 * trailers or on an out-of-band stream. The channel layer decodes it; policies only read it.
 */
export interface BackendMetricReport {
  readonly cpuUtilization: number;
  readonly memUtilization: number;
  readonly applicationUtilization: number;
  /** Queries per second (ORCA `rps_fractional`). */
  readonly rpsFractional: number;
  /** Errors per second. */
  readonly eps: number;
  readonly utilization: Readonly<Record<string, number>>;
  readonly requestCost: Readonly<Record<string, number>>;
  readonly namedMetrics: Readonly<Record<string, number>>;
}

/** What a call left behind when it ended, beyond its status. */
export interface CallEndDetails {
  /** The per-call backend metrics (the `endpoint-load-metrics-bin` trailer, A51), decoded on first read. */
  readonly backendMetrics: BackendMetricReport | undefined;
}

/** A pick's call-end hook: the status, and what else the channel knows of how the call ended. */
export type CallEndedHook = (status: Status, details?: CallEndDetails) => void;

/**
 * The out-of-band backend metrics a subchannel can stream (A51 "Out-of-Band Metrics Reporting"): a
 * subchannel that supports it exposes this; `listener` hears each report; the returned function stops it.
 */
export interface OobMetricsSource {
  watchBackendMetrics(periodMs: number, listener: (report: BackendMetricReport) => void): () => void;
}
