/**
 * Judging "a within 2 % of b" from paired measurements: one ratio a / b per pair (blocks measured side by side,
 * so drift and load bursts fall on both), their median, and a bootstrap 95 % interval of that median.
 */

// The simulator's seeded generator (mulberry32): the same ratios give the same interval on every run.
import { seededRandom } from 'lbtree/sim';

export interface RatioInterval {
  readonly median: number;
  /** The bootstrap 95 % interval of the median: its 2.5th and 97.5th percentiles over the resamples. */
  readonly low: number;
  readonly high: number;
  readonly pairs: number;
}

function medianOf(sorted: readonly number[]): number {
  const n = sorted.length;
  return n % 2 === 1 ? sorted[n >> 1]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
}

/**
 * The median of the ratios and its bootstrap 95 % interval, the ratios given in groups (the pairs of one
 * generation of channels, which share whatever sets those channels apart): each resample draws groups with
 * replacement and then pairs within each drawn group, so the interval holds the groups' differences too.
 */
export function medianInterval(groups: readonly (readonly number[])[], resamples = 4000): RatioInterval {
  const kept = groups.filter((g) => g.length > 0);
  const all = kept.flat();
  if (all.length < 2) throw new Error(`a ratio interval needs 2 pairs or more, got ${all.length}`);
  const random = seededRandom(0x1b7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const medians: number[] = [];
  for (let r = 0; r < resamples; r++) {
    const sample: number[] = [];
    for (let g = 0; g < kept.length; g++) {
      const group = pick(kept);
      for (let i = 0; i < group.length; i++) sample.push(pick(group));
    }
    sample.sort((a, b) => a - b);
    medians.push(medianOf(sample));
  }
  medians.sort((a, b) => a - b);
  return {
    median: medianOf([...all].sort((a, b) => a - b)),
    low: medians[Math.floor(0.025 * (resamples - 1))]!,
    high: medians[Math.ceil(0.975 * (resamples - 1))]!,
    pairs: all.length,
  };
}

/**
 * The verdict on a cost ratio (a / b, higher is worse, e.g. CPU per call) against a goal of at most 1 + goal:
 * met when the whole interval is at or under it, missed when the whole interval is over it.
 */
export function costVerdict(r: RatioInterval, goal = 0.02): 'met' | 'missed' | 'not resolved' {
  if (r.high <= 1 + goal) return 'met';
  if (r.low > 1 + goal) return 'missed';
  return 'not resolved';
}

/**
 * The verdict on a rate ratio (a / b, lower is worse, e.g. calls per second) against a goal of at least
 * 1 − goal: met when the whole interval is at or above it, missed when the whole interval is under it.
 */
export function rateVerdict(r: RatioInterval, goal = 0.02): 'met' | 'missed' | 'not resolved' {
  if (r.low >= 1 - goal) return 'met';
  if (r.high < 1 - goal) return 'missed';
  return 'not resolved';
}

/** "1.004 (0.997–1.011)" */
export function intervalText(r: RatioInterval): string {
  return `${r.median.toFixed(3)} (${r.low.toFixed(3)}–${r.high.toFixed(3)})`;
}
