export {
  CALL_HEDGES,
  CALL_RETRIES,
  CALL_RETRY_DELAY,
  CALL_TRANSPARENT_RETRIES,
  CallAttempt,
  CallRetryTracer,
  CallRetryTracers,
  LATENCY_BUCKETS,
  METHOD_LABEL,
  recordsCallRetries,
} from './call-retry-metrics.js';
export {
  ChannelMetricValues,
  DEFAULT_HISTOGRAM_BOUNDARIES,
  type HistogramPointValue,
  type InstrumentValues,
  type MetricPointValue,
} from './channel-metric-values.js';
export { ChannelMetricsRecorder } from './channel-metrics-recorder.js';
export type {
  InstrumentOptionsShape,
  MeterProviderShape,
  MeterShape,
  MetricAttributesShape,
  ObservableResultShape,
} from './meter-provider-shape.js';
export { MetricSelection } from './metric-selection.js';
export { checkMetricsOptions, type MetricsOptions, unknownMetricNames } from './metrics-options.js';
export { OpenTelemetryStatsPlugin } from './opentelemetry-plugin.js';
export type { BoundInstrument, GaugeRegistration, StatsPlugin } from './stats-plugin.js';
export { addGlobalMetrics, metricsRecorderFor } from './stats-plugins.js';
