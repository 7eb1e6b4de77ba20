import { findInstrument } from '../core/index.js';
import type { MeterProviderShape } from './meter-provider-shape.js';

/**
 * A stats plugin's configuration (A79 "Changes to gRPC OpenTelemetry Plugin"): given globally
 * (`register({ metrics })` in lbtree/grpc-js, or `addGlobalMetrics`) or per channel (the `lbtree.metrics`
 * channel option).
 */
export interface MetricsOptions {
  /**
   * The user's OpenTelemetry MeterProvider (e.g. @opentelemetry/sdk-metrics's). Without one, the metrics
   * enabled here are recorded for the live view (lbtree/admin) only.
   */
  readonly meterProvider?: MeterProviderShape;
  /**
   * Metrics to record besides those on by default. Every metric lbtree defines (A78, A91, A94) is
   * experimental, so off by default: name each one you want, e.g. `grpc.lb.wrr.rr_fallback`.
   */
  readonly enableMetrics?: readonly string[];
  /** Metrics not to record, even on by default. */
  readonly disableMetrics?: readonly string[];
  /** Optional labels to record where an instrument has them, e.g. `grpc.lb.locality` (A79: off unless asked). */
  readonly optionalLabels?: readonly string[];
}

/** Checks a MetricsOptions given at `path` (code may hand anything in a channel option); throws a TypeError naming the field. */
export function checkMetricsOptions(value: unknown, path: string): MetricsOptions {
  if (typeof value !== 'object' || value === null) {
    throw new TypeError(
      `${path}: expected an object (meterProvider, enableMetrics, …), got ${describe(value)}`,
    );
  }
  const options = value as Record<string, unknown>;
  const provider = options.meterProvider as { getMeter?: unknown } | undefined;
  if (
    provider !== undefined &&
    (typeof provider !== 'object' || provider === null || typeof provider.getMeter !== 'function')
  ) {
    throw new TypeError(
      `${path}.meterProvider: expected an OpenTelemetry MeterProvider (an object with getMeter()), got ${describe(provider)}`,
    );
  }
  for (const key of ['enableMetrics', 'disableMetrics', 'optionalLabels'] as const) {
    const list = options[key];
    if (list === undefined) continue;
    if (!Array.isArray(list))
      throw new TypeError(`${path}.${key}: expected an array of names, got ${describe(list)}`);
    list.forEach((name, i) => {
      if (typeof name !== 'string' || name === '') {
        throw new TypeError(`${path}.${key}[${i}]: expected a non-empty string, got ${describe(name)}`);
      }
    });
  }
  return options as unknown as MetricsOptions;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  return typeof value;
}

/**
 * The names in enableMetrics / disableMetrics that no registered instrument has: a typo, or a component whose
 * instruments are not loaded (the grpc-js adapter loads all of lbtree's).
 */
export function unknownMetricNames(options: MetricsOptions): string[] {
  return [...(options.enableMetrics ?? []), ...(options.disableMetrics ?? [])].filter(
    (name) => findInstrument(name) === undefined,
  );
}
