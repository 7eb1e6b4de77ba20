import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Metadata } from '@grpc/grpc-js';
import {
  type BackendMetricReport,
  type CallEndDetails,
  type Code,
  completeBackendMetricReport,
  type Status,
} from '../core/index.js';
import {
  type OrcaLoadReport,
  OrcaLoadReportSchema,
} from '../protos/gen/xds/data/orca/v3/orca_load_report_pb.js';

/** The trailer a server puts its per-call ORCA load report in (A51). */
export const BACKEND_METRICS_TRAILER = 'endpoint-load-metrics-bin';

/**
 * How a call ended, as lbtree's call-end hooks read it: the backend metrics in the trailers are decoded only
 * if a policy asks (weighted_round_robin does; most policies never look).
 */
export class TrailerCallEndDetails implements CallEndDetails {
  private decoded: BackendMetricReport | undefined | null = null;
  constructor(private readonly trailers: Metadata | undefined) {}

  get backendMetrics(): BackendMetricReport | undefined {
    if (this.decoded === null) this.decoded = readBackendMetrics(this.trailers);
    return this.decoded;
  }
}

/**
 * A grpc-js call's end as a call-end hook gets it: the status, and as the details the same object (one object per
 * call end, not two).
 */
export class GrpcCallEnd extends TrailerCallEndDetails implements Status {
  constructor(
    readonly code: Code,
    readonly details: string,
    trailers: Metadata | undefined,
  ) {
    super(trailers);
  }
}

/** The ORCA report in `trailers`, or undefined when there is none or it does not decode (A58: ignored). */
export function readBackendMetrics(trailers: Metadata | undefined): BackendMetricReport | undefined {
  const value = trailers?.get(BACKEND_METRICS_TRAILER)[0];
  if (!(value instanceof Uint8Array)) return undefined;
  try {
    return toBackendMetricReport(fromBinary(OrcaLoadReportSchema, value));
  } catch {
    return undefined;
  }
}

/** An ORCA `OrcaLoadReport` message as lbtree's policies read it. */
export function toBackendMetricReport(r: OrcaLoadReport): BackendMetricReport {
  return {
    cpuUtilization: r.cpuUtilization,
    memUtilization: r.memUtilization,
    applicationUtilization: r.applicationUtilization,
    rpsFractional: r.rpsFractional,
    eps: r.eps,
    utilization: r.utilization,
    requestCost: r.requestCost,
    namedMetrics: r.namedMetrics,
  };
}

/** The ORCA message for the metrics given (the others unset). */
export function toOrcaLoadReport(report: Partial<BackendMetricReport>): OrcaLoadReport {
  return create(OrcaLoadReportSchema, completeBackendMetricReport(report));
}

/**
 * For servers: trailers carrying a per-call ORCA load report (A51), for a handler's callback
 * (`callback(null, reply, backendMetricsTrailer({ cpuUtilization: 0.4, rpsFractional: 120 }))`).
 */
export function backendMetricsTrailer(
  report: Partial<BackendMetricReport>,
  trailers = new Metadata(),
): Metadata {
  const message = toOrcaLoadReport(report);
  trailers.set(BACKEND_METRICS_TRAILER, Buffer.from(toBinary(OrcaLoadReportSchema, message)));
  return trailers;
}
