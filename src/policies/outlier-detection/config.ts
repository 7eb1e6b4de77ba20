import {
  ConfigReader,
  expectDurationMs,
  MAX_UINT32,
  type ParsedLbConfig,
  type PolicyLookup,
} from '../../core/index.js';

export const OUTLIER_DETECTION = 'outlier_detection_experimental';

/** A50 `SuccessRateEjection`, defaults applied. */
export interface SuccessRateEjection {
  /** Divided by 1000: 1900 means mean − 1.9 × stdev. */
  readonly stdevFactor: number;
  readonly enforcementPercentage: number;
  readonly minimumHosts: number;
  readonly requestVolume: number;
}

/** A50 `FailurePercentageEjection`, defaults applied. */
export interface FailurePercentageEjection {
  readonly threshold: number;
  readonly enforcementPercentage: number;
  readonly minimumHosts: number;
  readonly requestVolume: number;
}

/** A50 `OutlierDetectionLoadBalancingConfig`, durations in milliseconds, defaults applied. */
export interface OutlierDetectionConfig {
  readonly intervalMs: number;
  readonly baseEjectionTimeMs: number;
  readonly maxEjectionTimeMs: number;
  readonly maxEjectionPercent: number;
  readonly successRateEjection: SuccessRateEjection | null;
  readonly failurePercentageEjection: FailurePercentageEjection | null;
  readonly childPolicy: ParsedLbConfig;
}

/** A50 "LB Policy Config": the defaults of each field. */
export const OUTLIER_DETECTION_DEFAULTS = {
  intervalMs: 10_000,
  baseEjectionTimeMs: 30_000,
  maxEjectionTimeMs: 300_000,
  maxEjectionPercent: 10,
  successRate: { stdevFactor: 1900, enforcementPercentage: 100, minimumHosts: 5, requestVolume: 100 },
  failurePercentage: { threshold: 85, enforcementPercentage: 100, minimumHosts: 5, requestVolume: 50 },
} as const;

/**
 * Parses the A50 config (JSON names or proto names). A50 "Validation": durations must be valid and
 * non-negative; max_ejection_percent, both enforcement percentages and the failure threshold at most 100.
 */
export function parseOutlierDetectionConfig(
  json: unknown,
  path: string,
  registry: PolicyLookup,
): OutlierDetectionConfig {
  const reader = new ConfigReader(json, path);
  const d = OUTLIER_DETECTION_DEFAULTS;
  const duration = (name: string, fallback: number): number => {
    const field = reader.field(name);
    return field ? expectDurationMs(field.value, field.path) : fallback;
  };
  const successReader = reader.optionalObject('successRateEjection');
  const failureReader = reader.optionalObject('failurePercentageEjection');
  const childPolicy = reader.required('childPolicy');
  return {
    intervalMs: duration('interval', d.intervalMs),
    baseEjectionTimeMs: duration('baseEjectionTime', d.baseEjectionTimeMs),
    maxEjectionTimeMs: duration('maxEjectionTime', d.maxEjectionTimeMs),
    maxEjectionPercent: reader.optionalInteger('maxEjectionPercent', 0, 100) ?? d.maxEjectionPercent,
    successRateEjection: successReader
      ? {
          stdevFactor:
            successReader.optionalInteger('stdevFactor', 0, MAX_UINT32) ?? d.successRate.stdevFactor,
          enforcementPercentage:
            successReader.optionalInteger('enforcementPercentage', 0, 100) ??
            d.successRate.enforcementPercentage,
          minimumHosts:
            successReader.optionalInteger('minimumHosts', 0, MAX_UINT32) ?? d.successRate.minimumHosts,
          requestVolume:
            successReader.optionalInteger('requestVolume', 0, MAX_UINT32) ?? d.successRate.requestVolume,
        }
      : null,
    failurePercentageEjection: failureReader
      ? {
          threshold: failureReader.optionalInteger('threshold', 0, 100) ?? d.failurePercentage.threshold,
          enforcementPercentage:
            failureReader.optionalInteger('enforcementPercentage', 0, 100) ??
            d.failurePercentage.enforcementPercentage,
          minimumHosts:
            failureReader.optionalInteger('minimumHosts', 0, MAX_UINT32) ?? d.failurePercentage.minimumHosts,
          requestVolume:
            failureReader.optionalInteger('requestVolume', 0, MAX_UINT32) ??
            d.failurePercentage.requestVolume,
        }
      : null,
    childPolicy: registry.parseLbConfigList(childPolicy.value, childPolicy.path),
  };
}

/** Whether calls are counted at all: A50 counts only when an algorithm is configured. */
export function countsCalls(config: OutlierDetectionConfig): boolean {
  return config.successRateEjection !== null || config.failurePercentageEjection !== null;
}
