import type {
  CounterInstrument,
  GaugeInstrument,
  GaugeReporter,
  HistogramInstrument,
  InstrumentDescriptor,
  MetricLabels,
  MetricsRecorder,
  UpDownCounterInstrument,
} from '../core/index.js';
import type { OpenTelemetryStatsPlugin } from './opentelemetry-plugin.js';

/**
 * A channel's recorder (A79's StatsPluginGroup): the plugins that record this channel's metrics, and its
 * target, which it adds to every recording as `grpc.target`.
 */
export class ChannelMetricsRecorder implements MetricsRecorder {
  constructor(
    readonly target: string,
    private readonly plugins: readonly OpenTelemetryStatsPlugin[],
  ) {}

  isEnabled(instrument: InstrumentDescriptor): boolean {
    for (const plugin of this.plugins) if (plugin.isEnabled(instrument)) return true;
    return false;
  }

  addCounter(instrument: CounterInstrument, value: number, labels: MetricLabels): void {
    for (const plugin of this.plugins) plugin.add(instrument, value, labels, this.target);
  }

  addUpDownCounter(instrument: UpDownCounterInstrument, value: number, labels: MetricLabels): void {
    for (const plugin of this.plugins) plugin.add(instrument, value, labels, this.target);
  }

  recordHistogram(instrument: HistogramInstrument, value: number, labels: MetricLabels): void {
    for (const plugin of this.plugins) plugin.record(instrument, value, labels, this.target);
  }

  registerGaugeCallback(
    gauges: readonly GaugeInstrument[],
    callback: (reporter: GaugeReporter) => void,
  ): () => void {
    const registration = { gauges, callback, target: this.target };
    const removals = this.plugins.map((plugin) => plugin.addGaugeCallback(registration));
    return () => {
      for (const remove of removals) remove();
    };
  }
}
