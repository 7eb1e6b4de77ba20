// A50 "xDS Integration": a Cluster's outlier_detection → the outlier_detection_experimental config, NACKing
// what the LB config would reject (A50 "Validation": durations valid and not negative; max_ejection_percent,
// enforcement percentages and the failure percentage threshold at most 100).

import type { OutlierDetection } from '../../protos/gen/envoy/config/cluster/v3/outlier_detection_pb.js';
import type { XdsOutlierDetectionConfig } from './types.js';
import { durationJson, fail } from './validation.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A percentage field: at most 100 when set. */
function percent(value: number | undefined, field: string): number | undefined {
  if (value !== undefined && value > 100) fail(field, `${value} is greater than 100`);
  return value;
}

/** Copies the fields that are set (unset fields keep the policy's defaults). */
function defined<T extends object>(o: T): T {
  for (const key of Object.keys(o) as (keyof T)[]) if (o[key] === undefined) delete o[key];
  return o;
}

export function parseOutlierDetection(od: OutlierDetection, at: string): XdsOutlierDetectionConfig {
  const config: Mutable<XdsOutlierDetectionConfig> = defined({
    interval: od.interval && durationJson(od.interval, `${at}.interval`),
    baseEjectionTime: od.baseEjectionTime && durationJson(od.baseEjectionTime, `${at}.base_ejection_time`),
    maxEjectionTime: od.maxEjectionTime && durationJson(od.maxEjectionTime, `${at}.max_ejection_time`),
    maxEjectionPercent: percent(od.maxEjectionPercent, `${at}.max_ejection_percent`),
  });
  const enforcingSuccessRate = percent(od.enforcingSuccessRate, `${at}.enforcing_success_rate`);
  if (enforcingSuccessRate !== 0) {
    config.successRateEjection = defined({
      stdevFactor: od.successRateStdevFactor,
      enforcementPercentage: enforcingSuccessRate,
      minimumHosts: od.successRateMinimumHosts,
      requestVolume: od.successRateRequestVolume,
    });
  }
  const enforcingFailure = percent(od.enforcingFailurePercentage, `${at}.enforcing_failure_percentage`);
  if (enforcingFailure !== undefined && enforcingFailure !== 0) {
    config.failurePercentageEjection = defined({
      threshold: percent(od.failurePercentageThreshold, `${at}.failure_percentage_threshold`),
      enforcementPercentage: enforcingFailure,
      minimumHosts: od.failurePercentageMinimumHosts,
      requestVolume: od.failurePercentageRequestVolume,
    });
  }
  return config;
}
