import {
  type GaugeInstrument,
  type InstrumentDescriptor,
  type InstrumentType,
  type MetricLabels,
  registeredInstruments,
} from '../core/index.js';
import type { MetricAttributesShape } from './meter-provider-shape.js';
import { metricAttributes } from './metric-attributes.js';
import type { MetricSelection } from './metric-selection.js';
import type { BoundInstrument, GaugeRegistration, StatsPlugin } from './stats-plugin.js';

/**
 * The OpenTelemetry SDK's default explicit bucket boundaries (the metrics SDK specification's default
 * histogram aggregation): the live view buckets a histogram with no recommended boundaries (A96's have them,
 * handed to OpenTelemetry as advice) as a user's exporter receives it by default.
 */
export const DEFAULT_HISTOGRAM_BOUNDARIES: readonly number[] = Object.freeze([
  0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000,
]);

/** A counter's sum, an up-down counter's sum or a gauge's last value, for one label set. */
export interface MetricPointValue {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A histogram's values for one label set, as the SDK's explicit bucket aggregation keeps them. */
export interface HistogramPointValue {
  readonly labels: Readonly<Record<string, string>>;
  readonly count: number;
  readonly sum: number;
  readonly min: number;
  readonly max: number;
  /** `counts[i]` values fell in (boundaries[i-1], boundaries[i]]; the last count is above every boundary. */
  readonly buckets: { readonly boundaries: readonly number[]; readonly counts: readonly number[] };
}

/** One enabled instrument with its values (no points while nothing was recorded). */
export interface InstrumentValues {
  readonly name: string;
  readonly type: InstrumentType;
  readonly unit: string;
  readonly description: string;
  readonly points: readonly (MetricPointValue | HistogramPointValue)[];
}

// As the SDK's instruments do, a counter and a histogram drop a negative value (and a histogram NaN).

class SumSeries implements BoundInstrument {
  value = 0;
  constructor(
    readonly labels: MetricAttributesShape,
    private readonly monotonic: boolean,
  ) {}
  record(value: number): void {
    if (this.monotonic && value < 0) return;
    this.value += value;
  }
  view(): MetricPointValue {
    return { labels: this.labels, value: this.value };
  }
}

class HistogramSeries implements BoundInstrument {
  count = 0;
  sum = 0;
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;
  readonly counts: number[];
  constructor(
    readonly labels: MetricAttributesShape,
    private readonly boundaries: readonly number[],
  ) {
    this.counts = new Array<number>(boundaries.length + 1).fill(0);
  }
  record(value: number): void {
    if (!(value >= 0)) return;
    this.count++;
    this.sum += value;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
    const boundaries = this.boundaries;
    let i = 0;
    while (i < boundaries.length && value > boundaries[i]!) i++;
    this.counts[i]!++;
  }
  view(): HistogramPointValue {
    return {
      labels: this.labels,
      count: this.count,
      sum: this.sum,
      min: this.min,
      max: this.max,
      buckets: { boundaries: this.boundaries, counts: this.counts.slice() },
    };
  }
}

type Series = SumSeries | HistogramSeries;

/**
 * One channel's metric values, kept by lbtree itself for the live view: a stats plugin beside the user's
 * OpenTelemetry ones, recording the instruments any of the channel's metrics configurations enables with the
 * attributes they get (the union of the optional labels asked for), aggregated as the SDK's default
 * aggregations do (sums, last values, explicit bucket histograms), cumulative since the channel started.
 */
export class ChannelMetricValues implements StatsPlugin {
  private readonly optionalLabels: ReadonlySet<string>;
  /** Per instrument index, its series by their attributes (as JSON). */
  private readonly series = new Map<number, Map<string, Series>>();
  private readonly gauges = new Set<GaugeRegistration>();

  constructor(private readonly selections: readonly MetricSelection[]) {
    const optional = new Set<string>();
    for (const s of selections) for (const label of s.optionalLabels) optional.add(label);
    this.optionalLabels = optional;
  }

  isEnabled(instrument: InstrumentDescriptor): boolean {
    for (const s of this.selections) if (s.isEnabled(instrument)) return true;
    return false;
  }

  bind(
    instrument: InstrumentDescriptor<'counter' | 'up_down_counter' | 'histogram'>,
    labels: MetricLabels,
    target: string,
  ): BoundInstrument | null {
    if (!this.isEnabled(instrument)) return null;
    const attributes = metricAttributes(instrument, labels, target, this.optionalLabels);
    const key = JSON.stringify(attributes);
    let byKey = this.series.get(instrument.index);
    if (byKey === undefined) {
      byKey = new Map();
      this.series.set(instrument.index, byKey);
    }
    let series = byKey.get(key);
    if (series === undefined) {
      series =
        instrument.type === 'histogram'
          ? new HistogramSeries(attributes, instrument.bucketBoundaries ?? DEFAULT_HISTOGRAM_BOUNDARIES)
          : new SumSeries(attributes, instrument.type === 'counter');
      byKey.set(key, series);
    }
    return series;
  }

  addGaugeCallback(registration: GaugeRegistration): () => void {
    this.gauges.add(registration);
    return () => this.gauges.delete(registration);
  }

  /**
   * Every enabled instrument, in registry order, with its points ordered by their labels. Gauges are read
   * now: each callback is asked for its current values, the last report per label set counting (as an
   * OpenTelemetry collection does). A callback that throws adds nothing. `only`: the instruments to read
   * (default every enabled one).
   */
  read(only?: ReadonlySet<InstrumentDescriptor>): InstrumentValues[] {
    const gaugeValues = this.readGauges();
    const out: InstrumentValues[] = [];
    for (const instrument of registeredInstruments()) {
      if (!this.isEnabled(instrument) || (only !== undefined && !only.has(instrument))) continue;
      let points: (MetricPointValue | HistogramPointValue)[];
      if (instrument.type === 'gauge') {
        points = [...(gaugeValues.get(instrument.index)?.values() ?? [])];
      } else {
        points = [...(this.series.get(instrument.index)?.values() ?? [])].map((s) => s.view());
      }
      points.sort((a, b) => compareLabels(a.labels, b.labels));
      out.push({
        name: instrument.name,
        type: instrument.type,
        unit: instrument.unit,
        description: instrument.description,
        points,
      });
    }
    return out;
  }

  private readGauges(): Map<number, Map<string, MetricPointValue>> {
    const values = new Map<number, Map<string, MetricPointValue>>();
    for (const registration of this.gauges) {
      const enabled = registration.gauges.filter((g) => this.isEnabled(g));
      if (enabled.length === 0) continue;
      try {
        registration.callback({
          report: (gauge: GaugeInstrument, value, labels) => {
            if (!enabled.includes(gauge)) return;
            const attributes = metricAttributes(gauge, labels, registration.target, this.optionalLabels);
            let byKey = values.get(gauge.index);
            if (byKey === undefined) {
              byKey = new Map();
              values.set(gauge.index, byKey);
            }
            byKey.set(JSON.stringify(attributes), { labels: attributes, value });
          },
        });
      } catch {
        // The OpenTelemetry plugin logs a failing callback when it collects; the view shows what was reported.
      }
    }
    return values;
  }
}

function compareLabels(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): number {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
