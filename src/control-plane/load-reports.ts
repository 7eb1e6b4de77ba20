// What the control plane asks its clients to report (a LoadStatsResponse) and what they report (each
// LoadStatsRequest as a plain record), with the sums a test or a person reads: per node, cluster and locality.
import { create } from '@bufbuild/protobuf';
import { DurationSchema } from '@bufbuild/protobuf/wkt';
import type { ClusterStats } from '../protos/gen/envoy/config/endpoint/v3/load_report_pb.js';
import {
  type LoadStatsRequest,
  type LoadStatsResponse,
  LoadStatsResponseSchema,
} from '../protos/gen/envoy/service/load_stats/v3/lrs_pb.js';

/** The load the control plane asks for. */
export interface LoadReportingRequest {
  /** Every cluster (send_all_clusters), or only these. Default: every cluster. */
  readonly clusters?: readonly string[] | 'all';
  /** load_reporting_interval; default 10 s. */
  readonly intervalMs?: number;
}

export const DEFAULT_LOAD_REPORTING_INTERVAL_MS = 10_000;

export function loadStatsResponse(request: LoadReportingRequest): LoadStatsResponse {
  const ms = request.intervalMs ?? DEFAULT_LOAD_REPORTING_INTERVAL_MS;
  const seconds = Math.floor(ms / 1000);
  const all = request.clusters === undefined || request.clusters === 'all';
  return create(LoadStatsResponseSchema, {
    sendAllClusters: all,
    clusters: all ? [] : [...(request.clusters as readonly string[])],
    loadReportingInterval: create(DurationSchema, {
      seconds: BigInt(seconds),
      nanos: Math.round((ms - seconds * 1000) * 1e6),
    }),
  });
}

/** A sum over the requests that reported a metric. */
export interface ReceivedMetric {
  readonly requests: number;
  readonly total: number;
}

export interface ReceivedLocalityLoad {
  readonly region: string;
  readonly zone: string;
  readonly subZone: string;
  readonly issued: number;
  readonly succeeded: number;
  readonly errored: number;
  readonly inProgress: number;
  /** load_metric_stats by metric_name (A64 / A85), and A85's cpu / mem / application utilization. */
  readonly metrics: Readonly<Record<string, ReceivedMetric>>;
  readonly cpuUtilization?: ReceivedMetric;
  readonly memUtilization?: ReceivedMetric;
  readonly applicationUtilization?: ReceivedMetric;
}

export interface ReceivedClusterLoad {
  readonly cluster: string;
  readonly edsServiceName: string;
  /** load_report_interval, as the client measured it. */
  readonly intervalMs: number;
  readonly totalDrops: number;
  readonly drops: Readonly<Record<string, number>>;
  readonly localities: readonly ReceivedLocalityLoad[];
}

/** One LoadStatsRequest that carried load, from one LRS stream. */
export interface ReceivedLoadReport {
  readonly streamId: number;
  /** node.id of the stream's first request. */
  readonly nodeId: string;
  /** node.user_agent_name: which gRPC library reports. */
  readonly userAgent: string;
  /** Date.now() when it arrived. */
  readonly receivedAt: number;
  readonly clusters: readonly ReceivedClusterLoad[];
}

export function receivedLoadReport(
  streamId: number,
  nodeId: string,
  userAgent: string,
  request: LoadStatsRequest,
): ReceivedLoadReport {
  return {
    streamId,
    nodeId,
    userAgent,
    receivedAt: Date.now(),
    clusters: request.clusterStats.map(clusterLoad),
  };
}

function metric(m: { numRequestsFinishedWithMetric: bigint; totalMetricValue: number } | undefined) {
  return m && { requests: Number(m.numRequestsFinishedWithMetric), total: m.totalMetricValue };
}

function clusterLoad(c: ClusterStats): ReceivedClusterLoad {
  const interval = c.loadReportInterval;
  return {
    cluster: c.clusterName,
    edsServiceName: c.clusterServiceName,
    intervalMs: interval ? Number(interval.seconds) * 1000 + interval.nanos / 1e6 : 0,
    totalDrops: Number(c.totalDroppedRequests),
    drops: Object.fromEntries(c.droppedRequests.map((d) => [d.category, Number(d.droppedCount)])),
    localities: c.upstreamLocalityStats.map((l) => {
      const cpu = metric(l.cpuUtilization);
      const mem = metric(l.memUtilization);
      const application = metric(l.applicationUtilization);
      return {
        region: l.locality?.region ?? '',
        zone: l.locality?.zone ?? '',
        subZone: l.locality?.subZone ?? '',
        issued: Number(l.totalIssuedRequests),
        succeeded: Number(l.totalSuccessfulRequests),
        errored: Number(l.totalErrorRequests),
        inProgress: Number(l.totalRequestsInProgress),
        metrics: Object.fromEntries(l.loadMetricStats.map((m) => [m.metricName, metric(m)!])),
        ...(cpu && { cpuUtilization: cpu }),
        ...(mem && { memUtilization: mem }),
        ...(application && { applicationUtilization: application }),
      };
    }),
  };
}

/** `{region=r,zone=z,sub_zone=s}`, the locality key lbtree and grpc-js-xds both print. */
export function localityName(l: { region: string; zone: string; subZone: string }): string {
  return `{region=${l.region},zone=${l.zone},sub_zone=${l.subZone}}`;
}

/** One locality's load summed over reports; in progress is the last report's. */
export interface LocalityLoadTotals {
  issued: number;
  succeeded: number;
  errored: number;
  inProgress: number;
  /** load_metric_stats by name, and A85's utilizations as `cpu_utilization`, `mem_utilization`, `application_utilization`. */
  readonly metrics: Record<string, { requests: number; total: number }>;
}

export interface ClusterLoadTotals {
  totalDrops: number;
  readonly drops: Record<string, number>;
  /** By locality name ({@link localityName}). */
  readonly localities: Record<string, LocalityLoadTotals>;
  /** How many reports carried the cluster. */
  reports: number;
}

/** The reports' load summed per cluster and locality (filter them first to sum one client's). */
export function sumLoadReports(reports: readonly ReceivedLoadReport[]): Record<string, ClusterLoadTotals> {
  const totals: Record<string, ClusterLoadTotals> = {};
  for (const report of reports) {
    for (const c of report.clusters) {
      const cluster = entry<ClusterLoadTotals>(totals, c.cluster, () => ({
        totalDrops: 0,
        drops: {},
        localities: {},
        reports: 0,
      }));
      cluster.reports++;
      cluster.totalDrops += c.totalDrops;
      for (const [category, n] of Object.entries(c.drops))
        cluster.drops[category] = (cluster.drops[category] ?? 0) + n;
      for (const l of c.localities) {
        const sum = entry<LocalityLoadTotals>(cluster.localities, localityName(l), () => ({
          issued: 0,
          succeeded: 0,
          errored: 0,
          inProgress: 0,
          metrics: {},
        }));
        sum.issued += l.issued;
        sum.succeeded += l.succeeded;
        sum.errored += l.errored;
        sum.inProgress = l.inProgress;
        const utilizations = {
          ...(l.cpuUtilization && { cpu_utilization: l.cpuUtilization }),
          ...(l.memUtilization && { mem_utilization: l.memUtilization }),
          ...(l.applicationUtilization && { application_utilization: l.applicationUtilization }),
        };
        for (const [metricName, m] of Object.entries({ ...l.metrics, ...utilizations })) {
          const s = entry(sum.metrics, metricName, () => ({ requests: 0, total: 0 }));
          s.requests += m.requests;
          s.total += m.total;
        }
      }
    }
  }
  return totals;
}

function entry<T>(record: Record<string, T>, key: string, make: () => T): T {
  let value = record[key];
  if (value === undefined) {
    value = make();
    record[key] = value;
  }
  return value;
}
