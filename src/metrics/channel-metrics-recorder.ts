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
import type { ChannelMetricValues } from './channel-metric-values.js';
import type { BoundInstrument, StatsPlugin } from './stats-plugin.js';

const NOT_RECORDED: readonly BoundInstrument[] = Object.freeze([]);

/**
 * A channel's recorder (A79's StatsPluginGroup): the plugins that record this channel's metrics, and its
 * target, which it adds to every recording as `grpc.target`. Components record every value of a label set
 * with one labels object (WRR: a weight per endpoint at each scheduler update), so each plugin's recording of
 * an (instrument, labels object) is bound once and reused: a recording then allocates nothing.
 */
export class ChannelMetricsRecorder implements MetricsRecorder {
  /** Per labels object, per instrument index: the plugins' bound recordings. */
  private readonly bound = new WeakMap<MetricLabels, (readonly BoundInstrument[] | undefined)[]>();

  constructor(
    readonly target: string,
    private readonly plugins: readonly StatsPlugin[],
    /** lbtree's own copy of the values, which the live view shows (one of `plugins`). */
    readonly values?: ChannelMetricValues,
  ) {}

  isEnabled(instrument: InstrumentDescriptor): boolean {
    for (const plugin of this.plugins) if (plugin.isEnabled(instrument)) return true;
    return false;
  }

  addCounter(instrument: CounterInstrument, value: number, labels: MetricLabels): void {
    const bound = this.bind(instrument, labels);
    for (let i = 0; i < bound.length; i++) bound[i]!.record(value);
  }

  addUpDownCounter(instrument: UpDownCounterInstrument, value: number, labels: MetricLabels): void {
    const bound = this.bind(instrument, labels);
    for (let i = 0; i < bound.length; i++) bound[i]!.record(value);
  }

  recordHistogram(instrument: HistogramInstrument, value: number, labels: MetricLabels): void {
    const bound = this.bind(instrument, labels);
    for (let i = 0; i < bound.length; i++) bound[i]!.record(value);
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

  private bind(
    instrument: InstrumentDescriptor<'counter' | 'up_down_counter' | 'histogram'>,
    labels: MetricLabels,
  ): readonly BoundInstrument[] {
    let byInstrument = this.bound.get(labels);
    if (byInstrument === undefined) {
      byInstrument = [];
      this.bound.set(labels, byInstrument);
    }
    let bound = byInstrument[instrument.index];
    if (bound === undefined) {
      const made: BoundInstrument[] = [];
      for (const plugin of this.plugins) {
        const one = plugin.bind(instrument, labels, this.target);
        if (one !== null) made.push(one);
      }
      bound = made.length === 0 ? NOT_RECORDED : made;
      byInstrument[instrument.index] = bound;
    }
    return bound;
  }
}
