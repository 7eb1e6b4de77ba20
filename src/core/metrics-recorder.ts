import type {
  CounterInstrument,
  GaugeInstrument,
  HistogramInstrument,
  InstrumentDescriptor,
  UpDownCounterInstrument,
} from './instrument-registry.js';

/** Label values by label name. `grpc.target` is the channel's to add: components leave it out. */
export type MetricLabels = Readonly<Record<string, string>>;

export const NO_METRIC_LABELS: MetricLabels = Object.freeze({});

/** What a gauge callback reports its current values through. */
export interface GaugeReporter {
  report(gauge: GaugeInstrument, value: number, labels: MetricLabels): void;
}

/**
 * A79's recorder, as a helper hands it down the tree (`helper.metricsRecorder`, absent when no stats plugin
 * is configured): policies and the xDS client record through it and know nothing of OpenTelemetry. Nothing
 * it does throws.
 */
export interface MetricsRecorder {
  /** Whether any plugin records `instrument`: a caller may skip computing values nobody records. */
  isEnabled(instrument: InstrumentDescriptor): boolean;
  addCounter(instrument: CounterInstrument, value: number, labels: MetricLabels): void;
  addUpDownCounter(instrument: UpDownCounterInstrument, value: number, labels: MetricLabels): void;
  recordHistogram(instrument: HistogramInstrument, value: number, labels: MetricLabels): void;
  /**
   * A79 callback gauges: the component that owns the state registers a callback, called whenever a plugin
   * collects, that reports the current value of each of `gauges` it has. Returns the function that removes it.
   */
  registerGaugeCallback(
    gauges: readonly GaugeInstrument[],
    callback: (reporter: GaugeReporter) => void,
  ): () => void;
}
