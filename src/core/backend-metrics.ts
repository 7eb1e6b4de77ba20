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

/** Hears each backend metrics report of an out-of-band (ORCA stream) watch. */
export type BackendMetricsListener = (report: BackendMetricReport) => void;

/** A full report from the fields given; the rest are unset (0, empty maps), as ORCA's proto3 defaults. */
export function completeBackendMetricReport(fields: Partial<BackendMetricReport>): BackendMetricReport {
  return {
    cpuUtilization: fields.cpuUtilization ?? 0,
    memUtilization: fields.memUtilization ?? 0,
    applicationUtilization: fields.applicationUtilization ?? 0,
    rpsFractional: fields.rpsFractional ?? 0,
    eps: fields.eps ?? 0,
    utilization: { ...fields.utilization },
    requestCost: { ...fields.requestCost },
    namedMetrics: { ...fields.namedMetrics },
  };
}
