// What an LRS server asks for in a LoadStatsResponse (A27 "LRS"): which clusters, how often. A response that
// cannot be followed is an error naming its field; the stream keeps the last good request (nothing throws).

import type { LoadStatsResponse } from '../../protos/gen/envoy/service/load_stats/v3/lrs_pb.js';

/** Where a report goes and when. */
export interface LrsRequestedLoad {
  /** The clusters to report; undefined: every cluster (send_all_clusters). Unknown names are simply not reported. */
  readonly clusters: ReadonlySet<string> | undefined;
  readonly intervalMs: number;
}

/**
 * gRPC C-core's floor for the interval (GRPC_XDS_MIN_CLIENT_LOAD_REPORTING_INTERVAL_MS): a shorter positive
 * interval is raised to it, so a server cannot make clients report continuously.
 */
export const MIN_LOAD_REPORTING_INTERVAL_MS = 1_000;
/** The longest timer Node keeps (a longer one would fire at once). */
const MAX_INTERVAL_MS = 2 ** 31 - 1;

export class LrsResponseError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`LoadStatsResponse.${field}: ${message}`);
  }
}

/**
 * The load the response asks for. report_endpoint_granularity is ignored: gRPC reports per locality only (A27
 * "the EDS policy will not support per-endpoint stats"). Throws an LrsResponseError for a missing, zero,
 * negative, malformed or too long load_reporting_interval (grpc-go also fails a response without one).
 */
export function parseLrsResponse(response: LoadStatsResponse): LrsRequestedLoad {
  const interval = response.loadReportingInterval;
  const field = 'load_reporting_interval';
  if (interval === undefined) throw new LrsResponseError(field, 'missing');
  const { seconds, nanos } = interval;
  if (
    nanos < -999_999_999 ||
    nanos > 999_999_999 ||
    (seconds > 0n && nanos < 0) ||
    (seconds < 0n && nanos > 0)
  ) {
    throw new LrsResponseError(field, `not a valid Duration (seconds ${seconds}, nanos ${nanos})`);
  }
  if (seconds < 0n || (seconds === 0n && nanos <= 0)) {
    throw new LrsResponseError(field, `must be positive, got ${seconds}s ${nanos}ns`);
  }
  if (seconds > BigInt(Math.floor(MAX_INTERVAL_MS / 1000))) {
    throw new LrsResponseError(
      field,
      `${seconds}s is longer than the ${MAX_INTERVAL_MS} ms a timer can wait`,
    );
  }
  const intervalMs = Math.max(MIN_LOAD_REPORTING_INTERVAL_MS, Number(seconds) * 1000 + nanos / 1e6);
  return {
    clusters: response.sendAllClusters ? undefined : new Set(response.clusters),
    intervalMs,
  };
}

/** Whether two requests are the same (an identical response changes nothing, not even the timer). */
export function sameRequestedLoad(a: LrsRequestedLoad, b: LrsRequestedLoad): boolean {
  if (a.intervalMs !== b.intervalMs) return false;
  if (a.clusters === undefined || b.clusters === undefined) return a.clusters === b.clusters;
  if (a.clusters.size !== b.clusters.size) return false;
  for (const name of a.clusters) if (!b.clusters.has(name)) return false;
  return true;
}
