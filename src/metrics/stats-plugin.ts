import type { GaugeInstrument, GaugeReporter, InstrumentDescriptor, MetricLabels } from '../core/index.js';

/**
 * One instrument with one label set, as a plugin records it: a counter's or up-down counter's add, or a
 * histogram's record. A channel's recorder binds each (instrument, labels object) once, so a recording costs
 * no attributes object and no lookup by string.
 */
export interface BoundInstrument {
  record(value: number): void;
}

/** One callback registered for gauges (A79 RegisterCallback), with the channel target it reports under. */
export interface GaugeRegistration {
  readonly gauges: readonly GaugeInstrument[];
  readonly callback: (reporter: GaugeReporter) => void;
  readonly target: string;
}

/** A79's stats plugin as a channel's recorder uses it. Nothing it does throws. */
export interface StatsPlugin {
  isEnabled(instrument: InstrumentDescriptor): boolean;
  /** The recording of a counter, up-down counter or histogram; null when this plugin does not record it. */
  bind(
    instrument: InstrumentDescriptor<'counter' | 'up_down_counter' | 'histogram'>,
    labels: MetricLabels,
    target: string,
  ): BoundInstrument | null;
  /** Adds `registration` to the observation of each of its enabled gauges. Returns its removal. */
  addGaugeCallback(registration: GaugeRegistration): () => void;
}
