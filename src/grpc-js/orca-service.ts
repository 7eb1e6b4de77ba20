import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { durationMs } from '@bufbuild/protobuf/wkt';
import type * as grpc from '@grpc/grpc-js';
import type { BackendMetricReport } from '../core/index.js';
import {
  type OrcaLoadReport,
  OrcaLoadReportSchema,
} from '../protos/gen/xds/data/orca/v3/orca_load_report_pb.js';
import {
  type OrcaLoadReportRequest,
  OrcaLoadReportRequestSchema,
} from '../protos/gen/xds/service/orca/v3/orca_pb.js';
import { toOrcaLoadReport } from './backend-metrics.js';
import { STREAM_CORE_METRICS } from './orca-stream.js';

/** A51: the default lower bound of the interval a server reports at. */
export const DEFAULT_MIN_REPORT_INTERVAL_MS = 30_000;

const ORCA_SERVICE: grpc.ServiceDefinition = {
  streamCoreMetrics: {
    path: STREAM_CORE_METRICS,
    requestStream: false,
    responseStream: true,
    requestSerialize: (r: OrcaLoadReportRequest) => Buffer.from(toBinary(OrcaLoadReportRequestSchema, r)),
    requestDeserialize: (b: Buffer) => fromBinary(OrcaLoadReportRequestSchema, b),
    responseSerialize: (r: OrcaLoadReport) => Buffer.from(toBinary(OrcaLoadReportSchema, r)),
    responseDeserialize: (b: Buffer) => fromBinary(OrcaLoadReportSchema, b),
  },
};

export interface OrcaServiceOptions {
  /** A51: requested intervals below this (and 0) are raised to it. Default 30 s. */
  readonly minReportIntervalMs?: number;
}

/**
 * A grpc-js server's ORCA service (A51 "Out of Band Metrics Reporting", server side) with its per-server
 * metrics: set them at any time; every open StreamCoreMetrics call gets the whole current set at once and
 * then every interval its client asked for (never below the minimum).
 *
 * ```ts
 * const orca = new OrcaService({ minReportIntervalMs: 100 });
 * orca.addTo(server);
 * orca.set({ applicationUtilization: 0.4, rpsFractional: 120 });
 * ```
 */
export class OrcaService {
  private metrics: Partial<BackendMetricReport> = {};
  private readonly minReportIntervalMs: number;
  private readonly calls = new Set<() => void>();
  /** StreamCoreMetrics calls accepted so far. */
  streamsOpened = 0;

  constructor(options: OrcaServiceOptions = {}) {
    this.minReportIntervalMs = options.minReportIntervalMs ?? DEFAULT_MIN_REPORT_INTERVAL_MS;
  }

  /** Calls open now. */
  get openStreams(): number {
    return this.calls.size;
  }

  /** Merges `metrics` into the reported set (A51 set-style recording; utilization maps are replaced). */
  set(metrics: Partial<BackendMetricReport>): void {
    this.metrics = { ...this.metrics, ...metrics };
  }

  /** Clears every metric (A51: "All metrics are initially unset"). */
  clear(): void {
    this.metrics = {};
  }

  addTo(server: grpc.Server): void {
    server.addService(ORCA_SERVICE, {
      streamCoreMetrics: (call: grpc.ServerWritableStream<OrcaLoadReportRequest, OrcaLoadReport>) =>
        this.serve(call),
    });
  }

  /** Ends every open call (as when the service is restarted): clients retry. */
  endStreams(): void {
    for (const end of [...this.calls]) end();
  }

  private serve(call: grpc.ServerWritableStream<OrcaLoadReportRequest, OrcaLoadReport>): void {
    this.streamsOpened++;
    const requested = call.request.reportInterval ? durationMs(call.request.reportInterval) : 0;
    const interval = Math.max(requested, this.minReportIntervalMs);
    const send = () => call.write(this.report());
    const timer = setInterval(send, interval);
    const end = () => {
      clearInterval(timer);
      if (this.calls.delete(end)) call.end();
    };
    this.calls.add(end);
    call.on('cancelled', end);
    call.on('error', end);
    send();
  }

  private report(): OrcaLoadReport {
    return toOrcaLoadReport(this.metrics);
  }
}
