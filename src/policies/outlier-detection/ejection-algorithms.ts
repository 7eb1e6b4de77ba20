import type { FailurePercentageEjection, SuccessRateEjection } from './config.js';
import type { EndpointOutlierState } from './endpoint-state.js';
import type { DetectionMethod, UnenforcedReason } from './metrics.js';

/** What the algorithms need of the policy: the endpoints, a [0, 1) random source, and ejection itself. */
export interface EjectionContext {
  readonly endpoints: Iterable<EndpointOutlierState>;
  readonly endpointCount: number;
  readonly ejectedCount: number;
  readonly maxEjectionPercent: number;
  random(): number;
  eject(endpoint: EndpointOutlierState, method: DetectionMethod): void;
  /** A91: an outlier was found but not ejected. */
  notEjected(method: DetectionMethod, reason: UnenforcedReason): void;
}

/** A50 steps "If the percentage of ejected addresses is greater than or equal to max_ejection_percent, stop." */
function ejectionCapReached(ctx: EjectionContext): boolean {
  return (ctx.ejectedCount * 100) / ctx.endpointCount >= ctx.maxEjectionPercent;
}

/**
 * An outlier found by `method`: ejected unless the ejection cap is reached or the enforcement draw ("choose a
 * random integer in [0, 100). If that number is less than enforcement_percentage, eject") says no. Past the
 * cap A50 ejects no more and draws no number; A91 counts each such outlier as unenforced.
 */
function onOutlier(
  ctx: EjectionContext,
  e: EndpointOutlierState,
  method: DetectionMethod,
  enforcementPercentage: number,
): void {
  if (ejectionCapReached(ctx)) ctx.notEjected(method, 'max_ejection_overflow');
  else if (Math.floor(ctx.random() * 100) < enforcementPercentage) ctx.eject(e, method);
  else ctx.notEjected(method, 'enforcement_percentage');
}

/** A50 "Success Rate Algorithm". */
export function runSuccessRateEjection(ctx: EjectionContext, config: SuccessRateEjection): void {
  const rates: number[] = [];
  for (const e of ctx.endpoints) {
    if (e.lastVolume >= config.requestVolume) rates.push(e.lastSuccesses / e.lastVolume);
  }
  // Step 1: too few endpoints with enough volume (also keeps the mean defined when minimumHosts is 0).
  if (rates.length < config.minimumHosts || rates.length === 0) return;
  // Step 2: mean and (population) standard deviation of the success rates.
  let sum = 0;
  for (const r of rates) sum += r;
  const mean = sum / rates.length;
  let squares = 0;
  for (const r of rates) squares += (r - mean) * (r - mean);
  const stdev = Math.sqrt(squares / rates.length);
  const threshold = mean - stdev * (config.stdevFactor / 1000);
  // Step 3: past the ejection cap A50 stops; the outliers left are only counted (A91).
  for (const e of ctx.endpoints) {
    if (e.lastVolume < config.requestVolume) continue;
    if (e.lastSuccesses / e.lastVolume < threshold)
      onOutlier(ctx, e, 'success_rate', config.enforcementPercentage);
  }
}

/** A50 "Failure Percentage Algorithm". */
export function runFailurePercentageEjection(ctx: EjectionContext, config: FailurePercentageEjection): void {
  let withVolume = 0;
  for (const e of ctx.endpoints) if (e.lastVolume >= config.requestVolume) withVolume++;
  // Step 1.
  if (withVolume < config.minimumHosts) return;
  // Step 2.
  for (const e of ctx.endpoints) {
    if (e.lastVolume === 0 || e.lastVolume < config.requestVolume) continue;
    const failurePercentage = (e.lastFailures * 100) / e.lastVolume;
    if (failurePercentage > config.threshold)
      onOutlier(ctx, e, 'failure_percentage', config.enforcementPercentage);
  }
}
