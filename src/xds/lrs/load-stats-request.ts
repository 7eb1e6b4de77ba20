// The LoadStatsRequest messages of an LRS call (A27, A64, A85): the first carries the node, every later one the
// clusters' load over the interval since their previous report.

import { create } from '@bufbuild/protobuf';
import { type Duration, DurationSchema } from '@bufbuild/protobuf/wkt';
import { LocalitySchema, type Node } from '../../protos/gen/envoy/config/core/v3/base_pb.js';
import {
  type ClusterStats,
  ClusterStats_DroppedRequestsSchema,
  ClusterStatsSchema,
  EndpointLoadMetricStatsSchema,
  type UnnamedEndpointLoadMetricStats,
  UnnamedEndpointLoadMetricStatsSchema,
  UpstreamLocalityStatsSchema,
} from '../../protos/gen/envoy/config/endpoint/v3/load_report_pb.js';
import {
  type LoadStatsRequest,
  LoadStatsRequestSchema,
} from '../../protos/gen/envoy/service/load_stats/v3/lrs_pb.js';
import type { ClusterLoadSnapshot, MetricSum } from '../load-store.js';

/** The client feature that tells the server it may set send_all_clusters (A27). */
export const LRS_SEND_ALL_CLUSTERS_FEATURE = 'envoy.lrs.supports_send_all_clusters';

/** The first request of a call: the node, with the LRS client feature beside the ADS ones. */
export function initialLoadStatsRequest(node: Node): LoadStatsRequest {
  const clientFeatures = node.clientFeatures.includes(LRS_SEND_ALL_CLUSTERS_FEATURE)
    ? node.clientFeatures
    : [...node.clientFeatures, LRS_SEND_ALL_CLUSTERS_FEATURE];
  return create(LoadStatsRequestSchema, { node: { ...node, clientFeatures } });
}

export function loadStatsRequest(snapshots: readonly ClusterLoadSnapshot[]): LoadStatsRequest {
  return create(LoadStatsRequestSchema, { clusterStats: snapshots.map(clusterStats) });
}

function clusterStats(s: ClusterLoadSnapshot): ClusterStats {
  return create(ClusterStatsSchema, {
    clusterName: s.cluster,
    clusterServiceName: s.edsServiceName,
    upstreamLocalityStats: s.localities.map((l) =>
      create(UpstreamLocalityStatsSchema, {
        locality: create(LocalitySchema, {
          region: l.locality.region,
          zone: l.locality.zone,
          subZone: l.locality.subZone,
        }),
        totalIssuedRequests: BigInt(l.issued),
        totalSuccessfulRequests: BigInt(l.succeeded),
        totalErrorRequests: BigInt(l.errored),
        totalRequestsInProgress: BigInt(l.inProgress),
        ...(l.cpuUtilization && { cpuUtilization: unnamed(l.cpuUtilization) }),
        ...(l.memUtilization && { memUtilization: unnamed(l.memUtilization) }),
        ...(l.applicationUtilization && { applicationUtilization: unnamed(l.applicationUtilization) }),
        loadMetricStats: l.namedMetrics.map((m) =>
          create(EndpointLoadMetricStatsSchema, {
            metricName: m.name,
            numRequestsFinishedWithMetric: BigInt(m.requests),
            totalMetricValue: m.total,
          }),
        ),
      }),
    ),
    totalDroppedRequests: BigInt(s.totalDrops),
    droppedRequests: s.drops.map((d) =>
      create(ClusterStats_DroppedRequestsSchema, { category: d.category, droppedCount: BigInt(d.count) }),
    ),
    loadReportInterval: duration(s.intervalMs),
  });
}

function unnamed(sum: MetricSum): UnnamedEndpointLoadMetricStats {
  return create(UnnamedEndpointLoadMetricStatsSchema, {
    numRequestsFinishedWithMetric: BigInt(sum.requests),
    totalMetricValue: sum.total,
  });
}

/** A google.protobuf.Duration of `ms` milliseconds (to the nanosecond the clock gives). */
export function duration(ms: number): Duration {
  const whole = Math.max(0, ms);
  const seconds = Math.floor(whole / 1000);
  const nanos = Math.min(999_999_999, Math.round((whole - seconds * 1000) * 1e6));
  return create(DurationSchema, { seconds: BigInt(seconds), nanos });
}
