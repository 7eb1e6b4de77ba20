import type { InstrumentDescriptor } from '../core/index.js';
import type { MetricsOptions } from './metrics-options.js';

/**
 * Which instruments and optional labels one metrics configuration records (A79: an instrument is on by default
 * or not, enabled or disabled by name, `disableMetrics` winning; optional labels only when named).
 */
export class MetricSelection {
  private readonly enabledNames: ReadonlySet<string>;
  private readonly disabledNames: ReadonlySet<string>;
  readonly optionalLabels: ReadonlySet<string>;
  /** Per instrument index: 1 enabled, 0 disabled, undefined not yet decided. */
  private readonly decided: (0 | 1 | undefined)[] = [];

  constructor(options: Pick<MetricsOptions, 'enableMetrics' | 'disableMetrics' | 'optionalLabels'>) {
    this.enabledNames = new Set(options.enableMetrics ?? []);
    this.disabledNames = new Set(options.disableMetrics ?? []);
    this.optionalLabels = new Set(options.optionalLabels ?? []);
  }

  isEnabled(instrument: InstrumentDescriptor): boolean {
    let on = this.decided[instrument.index];
    if (on === undefined) {
      const name = instrument.name;
      on =
        !this.disabledNames.has(name) && (this.enabledNames.has(name) || instrument.enabledByDefault) ? 1 : 0;
      this.decided[instrument.index] = on;
    }
    return on === 1;
  }
}
