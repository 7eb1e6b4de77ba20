import { type ChannelOptions, experimental, logVerbosity } from '@grpc/grpc-js';
import type { MetricsRecorder } from '../core/index.js';
import {
  ChannelMetricsRecorder,
  checkMetricsOptions,
  type MetricsOptions,
  metricsRecorderFor,
  unknownMetricNames,
} from '../metrics/index.js';
// The XdsClient's instruments, registered now (a few descriptors; the client itself loads with the first xds:
// channel), so that the names a user enables can be checked against every instrument lbtree has.
import '../xds/client/metrics.js';
import { CHANNEL_TARGET_OPTION } from './channel-registry.js';

/**
 * The channel option that records a channel's metrics to a MeterProvider of its own (beside the global ones
 * `register({ metrics })` adds): a {@link MetricsOptions} object.
 */
export const METRICS_CHANNEL_OPTION = 'lbtree.metrics';
/**
 * The value for the `lbtree.metrics` channel option: `options` as they are, plus a `toJSON` that leaves the
 * MeterProvider out. grpc-js prints a channel's options as JSON when its `channel` tracer is on, and the SDK's
 * MeterProvider with a reader is a circular structure: given bare, it would make the channel's constructor
 * throw under GRPC_TRACE=channel. Make it once per MeterProvider and reuse it: channels given the same object
 * share their instruments.
 */
export function metricsChannelOption(options: MetricsOptions): MetricsOptions {
  const checked = checkMetricsOptions(options, 'metricsChannelOption');
  return Object.freeze({
    ...checked,
    toJSON: () => ({
      ...(checked.meterProvider !== undefined && { meterProvider: '[MeterProvider]' }),
      enableMetrics: checked.enableMetrics,
      disableMetrics: checked.disableMetrics,
      optionalLabels: checked.optionalLabels,
    }),
  });
}

/**
 * The channel option lbtree's xds resolver hands the root policy: the recorder it made for the channel's xDS
 * client, so the client's metrics and the tree's go through one recorder (and one set of live-view values).
 */
export const CHANNEL_METRICS_RECORDER_OPTION = 'grpc.internal.lbtree.metrics_recorder';

/** `grpc.target` for a channel whose resolver is not lbtree's (grpc-js's ipv4:, ipv6:, unix:): A66 lets it be synthesised. */
export const UNKNOWN_TARGET = 'unknown:///';

/** A66's canonical target: `scheme://[authority]/path`. */
export function canonicalTarget(target: experimental.GrpcUri): string {
  const path = target.path.startsWith('/') ? target.path.slice(1) : target.path;
  return `${target.scheme ?? 'dns'}://${target.authority ?? ''}/${path}`;
}

/** The option values already reported as invalid or as naming unknown metrics: each is logged once. */
const reported = new WeakSet<object>();

/**
 * Logs once, at grpc-js's ERROR level, the names in `options` that are no lbtree metric (a typo records
 * nothing, silently otherwise).
 */
export function reportUnknownMetricNames(options: MetricsOptions, where: string): void {
  if (reported.has(options)) return;
  reported.add(options);
  const unknown = unknownMetricNames(options);
  if (unknown.length === 0) return;
  experimental.log(
    logVerbosity.ERROR,
    `lbtree: ${where} names no lbtree metric: ${unknown.map((n) => JSON.stringify(n)).join(', ')} (they record nothing; the metrics are listed in lbtree's docs/metrics.md)`,
  );
}

/**
 * The recorder for a channel with these options (the update's, resolver attributes included): the one the
 * resolver made when it did, else a new one; undefined when no metrics options apply. An invalid `lbtree.metrics` is logged once, naming the field, and left out.
 */
export function channelMetricsRecorder(options: ChannelOptions): MetricsRecorder | undefined {
  const made: unknown = options[CHANNEL_METRICS_RECORDER_OPTION];
  if (made instanceof ChannelMetricsRecorder) return made;
  const target =
    typeof options[CHANNEL_TARGET_OPTION] === 'string' ? options[CHANNEL_TARGET_OPTION] : UNKNOWN_TARGET;
  return metricsRecorderFor(target, channelMetricsOptions(options));
}

/** The channel's own metrics options, checked; undefined when absent or invalid (logged). */
export function channelMetricsOptions(options: ChannelOptions): MetricsOptions | undefined {
  const value: unknown = options[METRICS_CHANNEL_OPTION];
  if (value === undefined) return undefined;
  try {
    const checked = checkMetricsOptions(value, `channel option ${METRICS_CHANNEL_OPTION}`);
    reportUnknownMetricNames(checked, `channel option ${METRICS_CHANNEL_OPTION}`);
    return checked;
  } catch (e) {
    const key = typeof value === 'object' && value !== null ? value : null;
    if (key === null || !reported.has(key)) {
      if (key !== null) reported.add(key);
      experimental.log(
        logVerbosity.ERROR,
        `lbtree: ${(e as Error).message}; this channel records no metrics to it`,
      );
    }
    return undefined;
  }
}
