import {
  type DataPoint,
  DataPointType,
  type Histogram,
  MeterProvider,
  MetricReader,
} from '@opentelemetry/sdk-metrics';
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
  /** The SDK's data point type: SUM, GAUGE or HISTOGRAM. */
  readonly type: string;
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
          type: DataPointType[metric.dataPointType],
          unit: metric.descriptor.unit,
          description: metric.descriptor.description,
          points,
        });
      }
    }
    return out;
  }

  /**
   * The collected metrics in the live view's shape (src/metrics's InstrumentValues, points ordered by their
   * labels), to compare with what lbtree kept for the view.
   */
  async asValues(): Promise<Map<string, { type: string; unit: string; points: unknown[] }>> {
    const out = new Map<string, { type: string; unit: string; points: unknown[] }>();
    for (const m of (await this.collect()).values()) {
      const points = m.points.map((p) => {
        const labels = p.attributes as Record<string, string>;
        if (p.histogram === undefined) return { labels, value: p.value };
        const h = p.histogram;
        return {
          labels,
          count: h.count,
          sum: h.sum,
          min: h.min,
          max: h.max,
          buckets: { boundaries: h.buckets.boundaries, counts: h.buckets.counts },
        };
      });
      const key = (p: { labels: Record<string, string> }) => JSON.stringify(p.labels);
      points.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
      out.set(m.name, { type: m.type, unit: m.unit, points });
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
