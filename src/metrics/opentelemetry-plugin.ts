import {
  type GaugeInstrument,
  type GaugeReporter,
  type InstrumentDescriptor,
  type MetricLabels,
  TARGET_LABEL,
} from '../core/index.js';
import type { MeterShape, MetricAttributesShape, ObservableResultShape } from './meter-provider-shape.js';
import type { MetricsOptions } from './metrics-options.js';

const METER_NAME = 'lbtree';

type Adder = { add(value: number, attributes?: MetricAttributesShape): void };
type HistogramLike = { record(value: number, attributes?: MetricAttributesShape): void };

/** One callback registered for gauges (A79 RegisterCallback), with the channel target it reports under. */
export interface GaugeRegistration {
  readonly gauges: readonly GaugeInstrument[];
  readonly callback: (reporter: GaugeReporter) => void;
  readonly target: string;
}

/**
 * A79's OpenTelemetry stats plugin over a user's MeterProvider: makes an OpenTelemetry instrument from a
 * registered descriptor when it is first recorded, keeps the labels the descriptor and the user's optional
 * label choice allow, and answers whether an instrument is enabled (A79: on by default or not, overridden by
 * name). A MeterProvider that throws is logged once and then left alone: nothing reaches a channel.
 */
export class OpenTelemetryStatsPlugin {
  private meter: MeterShape | null = null;
  private readonly enabledNames: ReadonlySet<string>;
  private readonly disabledNames: ReadonlySet<string>;
  private readonly optionalLabels: ReadonlySet<string>;
  /** Per instrument index: 1 enabled, 0 disabled, undefined not yet decided. */
  private readonly enabled: (0 | 1 | undefined)[] = [];
  private readonly made: unknown[] = [];
  private readonly gaugeCallbacks = new Map<number, Set<GaugeRegistration>>();
  /**
   * The attributes made for a labels object, per instrument index and target: a policy records every value of
   * an update with one labels object (WRR: a weight per endpoint), which then costs one attributes object.
   */
  private readonly attributeCache = new WeakMap<MetricLabels, Map<string, MetricAttributesShape>>();
  private failure: unknown = null;

  constructor(
    private readonly options: MetricsOptions,
    private readonly log: (message: string) => void = (message) => console.error(message),
  ) {
    this.enabledNames = new Set(options.enableMetrics ?? []);
    this.disabledNames = new Set(options.disableMetrics ?? []);
    this.optionalLabels = new Set(options.optionalLabels ?? []);
  }

  /** Whether this plugin records `instrument`. */
  isEnabled(instrument: InstrumentDescriptor): boolean {
    let on = this.enabled[instrument.index];
    if (on === undefined) {
      const name = instrument.name;
      on =
        !this.disabledNames.has(name) && (this.enabledNames.has(name) || instrument.enabledByDefault) ? 1 : 0;
      this.enabled[instrument.index] = on;
    }
    return on === 1 && this.failure === null;
  }

  add(
    instrument: InstrumentDescriptor<'counter' | 'up_down_counter'>,
    value: number,
    labels: MetricLabels,
    target: string,
  ): void {
    if (!this.isEnabled(instrument)) return;
    try {
      (this.instrument(instrument) as Adder).add(value, this.attributes(instrument, labels, target));
    } catch (e) {
      this.fail(e);
    }
  }

  record(
    instrument: InstrumentDescriptor<'histogram'>,
    value: number,
    labels: MetricLabels,
    target: string,
  ): void {
    if (!this.isEnabled(instrument)) return;
    try {
      (this.instrument(instrument) as HistogramLike).record(
        value,
        this.attributes(instrument, labels, target),
      );
    } catch (e) {
      this.fail(e);
    }
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
    for (const registration of registrations) {
      const reporter: GaugeReporter = {
        report: (reported, value, labels) => {
          if (reported === gauge) result.observe(value, this.attributes(gauge, labels, registration.target));
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
    this.meter ??= this.options.meterProvider.getMeter(METER_NAME);
    return this.meter;
  }

  /** The descriptor's labels, `grpc.target` first, plus the optional ones the user asked for. */
  private attributes(
    instrument: InstrumentDescriptor,
    labels: MetricLabels,
    target: string,
  ): MetricAttributesShape {
    let cached = this.attributeCache.get(labels);
    if (cached === undefined) {
      cached = new Map();
      this.attributeCache.set(labels, cached);
    }
    const key = `${instrument.index} ${target}`;
    let attributes = cached.get(key);
    if (attributes === undefined) {
      attributes = this.makeAttributes(instrument, labels, target);
      cached.set(key, attributes);
    }
    return attributes;
  }

  private makeAttributes(
    instrument: InstrumentDescriptor,
    labels: MetricLabels,
    target: string,
  ): MetricAttributesShape {
    const attributes: MetricAttributesShape = {};
    for (const key of instrument.labels) {
      attributes[key] = key === TARGET_LABEL ? target : (labels[key] ?? '');
    }
    for (const key of instrument.optionalLabels) {
      const value = labels[key];
      if (value !== undefined && this.optionalLabels.has(key)) attributes[key] = value;
    }
    return attributes;
  }

  private fail(error: unknown): void {
    if (this.failure !== null) return;
    this.failure = error;
    this.log(
      `lbtree: the MeterProvider given for metrics threw, so lbtree records no more metrics to it: ${
        (error as Error)?.stack ?? error
      }`,
    );
  }
}
