import { type DataPoint, type Histogram, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import type { MetricsRecorder } from '../../src/core/index.js';
import { type MetricsOptions, metricsRecorderFor } from '../../src/index.js';

/** A pull reader: each `collect()` reads every instrument's current points, as an exporter would. */
class PullReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export interface Point {
  readonly attributes: Readonly<Record<string, unknown>>;
  /** A counter's sum or a gauge's value; a histogram's points are in `histogram`. */
  readonly value: number;
  readonly histogram?: Histogram;
}

export interface CollectedMetric {
  readonly name: string;
  readonly unit: string;
  readonly description: string;
  readonly points: readonly Point[];
}

/**
 * The OpenTelemetry SDK's MeterProvider with a pull reader: what a user plugs in, read back the way an exporter
 * reads it.
 */
export class OtelMetrics {
  readonly reader = new PullReader();
  readonly meterProvider = new MeterProvider({ readers: [this.reader] });

  /** Options for lbtree with these metrics enabled (and every optional label lbtree has, unless given). */
  options(enableMetrics: readonly string[], optionalLabels?: readonly string[]): MetricsOptions {
    return {
      meterProvider: this.meterProvider,
      enableMetrics,
      optionalLabels: optionalLabels ?? [
        'grpc.lb.locality',
        'grpc.lb.backend_service',
        'grpc.disconnect_error',
      ],
    };
  }

  /** A channel recorder for `target` with these metrics enabled. */
  recorder(
    target: string,
    enableMetrics: readonly string[],
    optionalLabels?: readonly string[],
  ): MetricsRecorder {
    return metricsRecorderFor(target, this.options(enableMetrics, optionalLabels))!;
  }

  async collect(): Promise<Map<string, CollectedMetric>> {
    const { resourceMetrics, errors } = await this.reader.collect();
    if (errors.length > 0) throw errors[0];
    const out = new Map<string, CollectedMetric>();
    for (const scope of resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics) {
        const points = (metric.dataPoints as DataPoint<unknown>[]).map((p) =>
          typeof p.value === 'number'
            ? { attributes: p.attributes, value: p.value }
            : {
                attributes: p.attributes,
                value: (p.value as Histogram).count,
                histogram: p.value as Histogram,
              },
        );
        out.set(metric.descriptor.name, {
          name: metric.descriptor.name,
          unit: metric.descriptor.unit,
          description: metric.descriptor.description,
          points,
        });
      }
    }
    return out;
  }

  /** The sum of the points of `name` whose attributes include `match` (0 when none). */
  async value(name: string, match: Readonly<Record<string, string>> = {}): Promise<number> {
    return sumOf((await this.collect()).get(name), match);
  }

  shutdown(): Promise<void> {
    return this.meterProvider.shutdown();
  }
}

export function sumOf(
  metric: CollectedMetric | undefined,
  match: Readonly<Record<string, string>> = {},
): number {
  if (metric === undefined) return 0;
  let sum = 0;
  for (const p of metric.points) {
    if (Object.entries(match).every(([k, v]) => p.attributes[k] === v)) sum += p.value;
  }
  return sum;
}
