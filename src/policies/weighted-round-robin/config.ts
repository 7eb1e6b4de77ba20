import { ConfigError, ConfigReader, expectDurationMs } from '../../core/index.js';
import {
  parseUtilizationMetrics,
  type UtilizationMetric,
  wrrCustomMetricsEnabled,
} from './utilization-metrics.js';

export const WEIGHTED_ROUND_ROBIN = 'weighted_round_robin';

/** A58 `WeightedRoundRobinLbConfig`, durations in milliseconds, defaults applied. */
export interface WeightedRoundRobinConfig {
  readonly enableOobLoadReport: boolean;
  readonly oobReportingPeriodMs: number;
  readonly blackoutPeriodMs: number;
  readonly weightExpirationPeriodMs: number;
  /** At least 100 ms (A58: "Values less than 100ms are capped at 100ms"). */
  readonly weightUpdatePeriodMs: number;
  readonly errorUtilizationPenalty: number;
  /**
   * A114 `metric_names_for_computing_utilization`, resolved. Empty unless GRPC_EXPERIMENTAL_WRR_CUSTOM_METRICS
   * is `true` (A114: the field is ignored while the switch is off).
   */
  readonly utilizationMetrics: readonly UtilizationMetric[];
}

/** A58 "LB Policy Config and Parameters": the defaults. */
export const WEIGHTED_ROUND_ROBIN_DEFAULTS: WeightedRoundRobinConfig = Object.freeze({
  enableOobLoadReport: false,
  oobReportingPeriodMs: 10_000,
  blackoutPeriodMs: 10_000,
  weightExpirationPeriodMs: 180_000,
  weightUpdatePeriodMs: 1_000,
  errorUtilizationPenalty: 1,
  utilizationMetrics: Object.freeze([]),
});

export const MIN_WEIGHT_UPDATE_PERIOD_MS = 100;

/** Parses the A58 config (JSON or proto field names); a negative error_utilization_penalty is rejected. */
export function parseWeightedRoundRobinConfig(json: unknown, path: string): WeightedRoundRobinConfig {
  const reader = new ConfigReader(json, path);
  const d = WEIGHTED_ROUND_ROBIN_DEFAULTS;
  const duration = (name: string, fallback: number): number => {
    const field = reader.field(name);
    return field ? expectDurationMs(field.value, field.path) : fallback;
  };
  let penalty = d.errorUtilizationPenalty;
  const penaltyField = reader.field('errorUtilizationPenalty');
  if (penaltyField) {
    // proto3 JSON may write a float as a string.
    const raw = penaltyField.value;
    const v = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw new ConfigError(
        penaltyField.path,
        `expected a finite number, got ${JSON.stringify(raw) ?? String(raw)}`,
      );
    }
    if (v < 0) throw new ConfigError(penaltyField.path, `must not be negative, got ${v}`);
    penalty = v;
  }
  const metricNames = wrrCustomMetricsEnabled()
    ? reader.field('metricNamesForComputingUtilization')
    : undefined;
  return {
    enableOobLoadReport: reader.optionalBoolean('enableOobLoadReport') ?? d.enableOobLoadReport,
    oobReportingPeriodMs: duration('oobReportingPeriod', d.oobReportingPeriodMs),
    blackoutPeriodMs: duration('blackoutPeriod', d.blackoutPeriodMs),
    weightExpirationPeriodMs: duration('weightExpirationPeriod', d.weightExpirationPeriodMs),
    weightUpdatePeriodMs: Math.max(
      MIN_WEIGHT_UPDATE_PERIOD_MS,
      duration('weightUpdatePeriod', d.weightUpdatePeriodMs),
    ),
    errorUtilizationPenalty: penalty,
    utilizationMetrics: metricNames
      ? parseUtilizationMetrics(metricNames.value, metricNames.path)
      : d.utilizationMetrics,
  };
}
