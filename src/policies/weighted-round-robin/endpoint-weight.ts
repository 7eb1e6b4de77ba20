import type { BackendMetricReport, Clock } from '../../core/index.js';
import type { WeightedRoundRobinConfig } from './config.js';
import { utilizationOf } from './utilization-metrics.js';

/**
 * One endpoint's weight (A58 "Subchannel Weights"), kept per endpoint across updates as A61 asks. Fed by
 * per-call or out-of-band load reports; read by the scheduler rebuild every weight_update_period.
 */
export class EndpointWeight {
  private weight = 0;
  /** When the first non-zero report of the current run arrived (Infinity: none since the reset). */
  private nonEmptySince = Number.POSITIVE_INFINITY;
  /** When the last non-zero report arrived. */
  private lastUpdated = Number.NEGATIVE_INFINITY;
  /** Why the last {@link current} gave 0 (A78 counts both kinds per scheduler update), or null if it did not. */
  unusable: 'not_yet_usable' | 'stale' | null = null;

  constructor(
    private readonly clock: Clock,
    private config: WeightedRoundRobinConfig,
  ) {}

  setConfig(config: WeightedRoundRobinConfig): void {
    this.config = config;
  }

  /**
   * A58 `UpdateWeight`, with A114's utilization: the configured metrics' largest value, else
   * application_utilization when set, else cpu_utilization.
   */
  onReport(report: BackendMetricReport): void {
    const qps = report.rpsFractional;
    let utilization = utilizationOf(report, this.config.utilizationMetrics);
    if (utilization > 0 && qps > 0) utilization += (report.eps / qps) * this.config.errorUtilizationPenalty;
    const weight = utilization === 0 ? 0 : qps / utilization;
    if (!(weight > 0) || !Number.isFinite(weight)) return;
    const now = this.clock.now();
    if (this.nonEmptySince === Number.POSITIVE_INFINITY) this.nonEmptySince = now;
    this.lastUpdated = now;
    this.weight = weight;
  }

  /** A58 `OnSubchannelBecomesReady`: a new connection starts a new blackout period. */
  onReady(): void {
    this.nonEmptySince = Number.POSITIVE_INFINITY;
  }

  /** {@link current} without resetting an expired run: what the live view shows. */
  peek(now: number): number {
    if (now - this.lastUpdated >= this.config.weightExpirationPeriodMs) return 0;
    const blackout = this.config.blackoutPeriodMs;
    if (blackout > 0 && now - this.nonEmptySince < blackout) return 0;
    return this.weight;
  }

  /** A58 `GetWeight`: 0 (unknown) when the reports are stale or still within the blackout period. */
  current(now: number): number {
    if (now - this.lastUpdated >= this.config.weightExpirationPeriodMs) {
      this.nonEmptySince = Number.POSITIVE_INFINITY;
      // A78: with no report yet the weight is not yet usable; a report too old is stale.
      this.unusable = this.lastUpdated === Number.NEGATIVE_INFINITY ? 'not_yet_usable' : 'stale';
      return 0;
    }
    const blackout = this.config.blackoutPeriodMs;
    if (blackout > 0 && now - this.nonEmptySince < blackout) {
      this.unusable = 'not_yet_usable';
      return 0;
    }
    this.unusable = null;
    return this.weight;
  }
}
