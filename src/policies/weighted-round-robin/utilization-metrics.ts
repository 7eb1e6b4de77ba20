import {
  type BackendMetricReport,
  ConfigError,
  describeValue,
  envFlag,
  expectArray,
} from '../../core/index.js';

/** A114's switch: `metric_names_for_computing_utilization` is read only when this is `true` (default false). */
export const WRR_CUSTOM_METRICS_ENV = 'GRPC_EXPERIMENTAL_WRR_CUSTOM_METRICS';

export function wrrCustomMetricsEnabled(): boolean {
  return envFlag(WRR_CUSTOM_METRICS_ENV, false);
}

/**
 * One configured metric name, resolved once at config time. A114 supports the top-level fields
 * application_utilization, cpu_utilization, mem_utilization and the maps named_metrics.<key> and
 * utilization.<key> (the first period separates the map from its key, so the key may hold periods). Any
 * other name never finds a value: it is accepted (a later ORCA field would be named so) and contributes
 * nothing.
 */
export type UtilizationMetric =
  | { readonly field: 'applicationUtilization' | 'cpuUtilization' | 'memUtilization' }
  | { readonly map: 'namedMetrics' | 'utilization'; readonly key: string }
  | { readonly unsupported: string };

const FIELDS: Readonly<Record<string, UtilizationMetric>> = {
  application_utilization: { field: 'applicationUtilization' },
  cpu_utilization: { field: 'cpuUtilization' },
  mem_utilization: { field: 'memUtilization' },
};
const MAPS: Readonly<Record<string, 'namedMetrics' | 'utilization'>> = {
  named_metrics: 'namedMetrics',
  utilization: 'utilization',
};

export function resolveUtilizationMetric(name: string): UtilizationMetric {
  const dot = name.indexOf('.');
  if (dot < 0) return Object.hasOwn(FIELDS, name) ? FIELDS[name]! : { unsupported: name };
  const map = name.slice(0, dot);
  return Object.hasOwn(MAPS, map) ? { map: MAPS[map]!, key: name.slice(dot + 1) } : { unsupported: name };
}

/** The JSON list of metric names: an array of strings; errors name the element. */
export function parseUtilizationMetrics(value: unknown, path: string): readonly UtilizationMetric[] {
  return expectArray(value, path).map((name, i) => {
    if (typeof name !== 'string')
      throw new ConfigError(`${path}[${i}]`, `expected a string, got ${describeValue(name)}`);
    return resolveUtilizationMetric(name);
  });
}

function metricValue(report: BackendMetricReport, metric: UtilizationMetric): number | undefined {
  if ('field' in metric) return report[metric.field];
  if ('map' in metric) {
    const values = report[metric.map];
    return Object.hasOwn(values, metric.key) ? values[metric.key] : undefined;
  }
  return undefined;
}

/**
 * A114 "Weight Calculation Logic": the largest positive, non-NaN value among the configured metrics; when
 * none has one (or none is configured), A58's rule: application_utilization when positive, else
 * cpu_utilization.
 */
export function utilizationOf(report: BackendMetricReport, metrics: readonly UtilizationMetric[]): number {
  let max = 0;
  for (let i = 0; i < metrics.length; i++) {
    const v = metricValue(report, metrics[i]!);
    if (v !== undefined && v > max) max = v; // NaN and values ≤ 0 are ignored (treated as missing)
  }
  if (max > 0) return max;
  return report.applicationUtilization > 0 ? report.applicationUtilization : report.cpuUtilization;
}
