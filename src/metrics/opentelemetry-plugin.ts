import type { GaugeInstrument, GaugeReporter, InstrumentDescriptor, MetricLabels } from '../core/index.js';
import type { MeterShape, MetricAttributesShape, ObservableResultShape } from './meter-provider-shape.js';
import { metricAttributes } from './metric-attributes.js';
import { MetricSelection } from './metric-selection.js';
import type { MetricsOptions } from './metrics-options.js';
import type { BoundInstrument, GaugeRegistration, StatsPlugin } from './stats-plugin.js';

export type { GaugeRegistration } from './stats-plugin.js';

const METER_NAME = 'lbtree';

type Adder = { add(value: number, attributes?: MetricAttributesShape): void };
type HistogramLike = { record(value: number, attributes?: MetricAttributesShape): void };

/**
 * A79's OpenTelemetry stats plugin over a user's MeterProvider: makes an OpenTelemetry instrument from a
 * registered descriptor when it is first recorded, keeps the labels the descriptor and the user's optional
 * label choice allow, and answers whether an instrument is enabled (A79: on by default or not, overridden by
 * name). A MeterProvider that throws is logged once and then left alone: nothing reaches a channel.
 */
export class OpenTelemetryStatsPlugin implements StatsPlugin {
  private meter: MeterShape | null = null;
  readonly selection: MetricSelection;
  private readonly made: unknown[] = [];
  private readonly gaugeCallbacks = new Map<number, Set<GaugeRegistration>>();
  private failure: unknown = null;

  constructor(
    private readonly options: MetricsOptions,
    private readonly log: (message: string) => void = (message) => console.error(message),
  ) {
    this.selection = new MetricSelection(options);
  }

  /** Whether this plugin records `instrument`. */
  isEnabled(instrument: InstrumentDescriptor): boolean {
    return this.selection.isEnabled(instrument) && this.failure === null;
  }

  /** Whether the MeterProvider threw (then nothing more is recorded to it). */
  get failed(): boolean {
    return this.failure !== null;
  }

  /**
   * The OpenTelemetry instrument and the attributes for `labels`, made once: an OpenTelemetry API 1.x
   * instrument has no bound form, so the attributes object is what is prebuilt.
   */
  bind(
    instrument: InstrumentDescriptor<'counter' | 'up_down_counter' | 'histogram'>,
    labels: MetricLabels,
    target: string,
  ): BoundInstrument | null {
    if (!this.isEnabled(instrument)) return null;
    let made: unknown;
    try {
      made = this.instrument(instrument);
    } catch (e) {
      this.fail(e);
      return null;
    }
    const attributes = metricAttributes(instrument, labels, target, this.selection.optionalLabels);
    return instrument.type === 'histogram'
      ? new BoundHistogram(this, made as HistogramLike, attributes)
      : new BoundAdder(this, made as Adder, attributes);
  }

  /** Adds `registration` to the observation of each of its enabled gauges. Returns its removal. */
  addGaugeCallback(registration: GaugeRegistration): () => void {
    const added: Set<GaugeRegistration>[] = [];
    for (const gauge of registration.gauges) {
      if (!this.isEnabled(gauge)) continue;
      let set = this.gaugeCallbacks.get(gauge.index);
      if (set === undefined) {
        try {
          this.observableGauge(gauge);
        } catch (e) {
          this.fail(e);
          continue;
        }
        set = new Set();
        this.gaugeCallbacks.set(gauge.index, set);
      }
      set.add(registration);
      added.push(set);
    }
    return () => {
      for (const set of added) set.delete(registration);
    };
  }

  private observableGauge(gauge: GaugeInstrument): void {
    const observable = this.meterOf().createObservableGauge(gauge.name, {
      description: gauge.description,
      unit: gauge.unit,
    });
    observable.addCallback((result: ObservableResultShape) => this.observe(gauge, result));
    this.made[gauge.index] = observable;
  }

  /** OpenTelemetry collects `gauge`: every registration that reports it is asked for its values. */
  private observe(gauge: GaugeInstrument, result: ObservableResultShape): void {
    const registrations = this.gaugeCallbacks.get(gauge.index);
    if (registrations === undefined || this.failure !== null) return;
    const optional = this.selection.optionalLabels;
    for (const registration of registrations) {
      const reporter: GaugeReporter = {
        report: (reported, value, labels) => {
          if (reported === gauge) {
            result.observe(value, metricAttributes(gauge, labels, registration.target, optional));
          }
        },
      };
      try {
        registration.callback(reporter);
      } catch (e) {
        this.log(`lbtree: a ${gauge.name} gauge callback failed: ${(e as Error)?.stack ?? e}`);
      }
    }
  }

  private instrument(instrument: InstrumentDescriptor): unknown {
    let made = this.made[instrument.index];
    if (made === undefined) {
      const meter = this.meterOf();
      const options = { description: instrument.description, unit: instrument.unit };
      switch (instrument.type) {
        case 'counter':
          made = meter.createCounter(instrument.name, options);
          break;
        case 'up_down_counter':
          made = meter.createUpDownCounter(instrument.name, options);
          break;
        case 'histogram':
          made = meter.createHistogram(
            instrument.name,
            instrument.bucketBoundaries === undefined
              ? options
              : { ...options, advice: { explicitBucketBoundaries: [...instrument.bucketBoundaries] } },
          );
          break;
        default:
          throw new Error(`${instrument.name} is a ${instrument.type}: it is reported through a callback`);
      }
      this.made[instrument.index] = made;
    }
    return made;
  }

  private meterOf(): MeterShape {
    if (this.meter === null) {
      const provider = this.options.meterProvider;
      if (provider === undefined) throw new Error('no MeterProvider was given');
      this.meter = provider.getMeter(METER_NAME);
    }
    return this.meter;
  }

  /** @internal The MeterProvider (or an instrument of it) threw: logged once, nothing recorded after. */
  fail(error: unknown): void {
    if (this.failure !== null) return;
    this.failure = error;
    this.log(
      `lbtree: the MeterProvider given for metrics threw, so lbtree records no more metrics to it: ${
        (error as Error)?.stack ?? error
      }`,
    );
  }
}

/** A counter or up-down counter of the user's MeterProvider with one prebuilt attributes object. */
class BoundAdder implements BoundInstrument {
  constructor(
    private readonly plugin: OpenTelemetryStatsPlugin,
    private readonly adder: Adder,
    private readonly attributes: MetricAttributesShape,
  ) {}
  record(value: number): void {
    if (this.plugin.failed) return;
    try {
      this.adder.add(value, this.attributes);
    } catch (e) {
      this.plugin.fail(e);
    }
  }
}

/** A histogram of the user's MeterProvider with one prebuilt attributes object. */
class BoundHistogram implements BoundInstrument {
  constructor(
    private readonly plugin: OpenTelemetryStatsPlugin,
    private readonly histogram: HistogramLike,
    private readonly attributes: MetricAttributesShape,
  ) {}
  record(value: number): void {
    if (this.plugin.failed) return;
    try {
      this.histogram.record(value, this.attributes);
    } catch (e) {
      this.plugin.fail(e);
    }
  }
}
