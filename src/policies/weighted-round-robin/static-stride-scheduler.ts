/** The largest scaled weight: weights are scaled so that the (capped) largest one is 65,535. */
const MAX_WEIGHT = 0xffff;
/** Weights above 10 × the mean of known weights are capped there, bounding the skipped rounds of a pick. */
const MAX_RATIO = 10;
/** Known weights below 1 % of the mean are raised to it, so a tiny weight still gets an occasional pick. */
const MIN_RATIO = 0.01;
const HALF_MAX_WEIGHT = MAX_WEIGHT >>> 1;

/**
 * The static stride scheduler gRPC's weighted_round_robin uses in place of A58's EDF queue (same shares, no
 * heap, picks lock-free in gRPC and allocation-free here): each backend is visited in turn and taken
 * `weight` times out of every 65,535 rounds, spread evenly by `(weight × round + index × offset) mod 65,535`.
 * Weights of 0 mean "not known yet" and take the mean of the known ones.
 */
export class StaticStrideScheduler {
  private constructor(
    private readonly weights: Uint16Array,
    private sequence: number,
  ) {}

  /**
   * The scheduler for `weights`, or null when weighting would change nothing (fewer than two backends, or
   * no weight known): the caller then rotates plainly, as round_robin does. `start` is the first sequence
   * number (random, so clients do not march in step).
   */
  static build(weights: ArrayLike<number>, start: number): StaticStrideScheduler | null {
    const n = weights.length;
    if (n < 2) return null;
    let zeros = 0;
    let sum = 0;
    let max = 0;
    for (let i = 0; i < n; i++) {
      const w = weights[i]!;
      sum += w;
      if (w > max) max = w;
      if (w === 0) zeros++;
    }
    if (zeros === n) return null;
    const mean = sum / (n - zeros);
    if (max / mean > MAX_RATIO) max = MAX_RATIO * mean;
    const scale = MAX_WEIGHT / max;
    const scaledMean = Math.round(scale * mean);
    const lowerBound = Math.max(1, Math.round(scaledMean * MIN_RATIO));
    const scaled = new Uint16Array(n);
    for (let i = 0; i < n; i++) {
      const w = weights[i]!;
      scaled[i] = w === 0 ? scaledMean : Math.max(lowerBound, Math.round(Math.min(w, max) * scale));
    }
    return new StaticStrideScheduler(scaled, start >>> 0);
  }

  get size(): number {
    return this.weights.length;
  }

  /** The scaled weight of backend `i` (for tests and tracing). */
  scaledWeight(i: number): number {
    return this.weights[i]!;
  }

  /** The index of the next backend. */
  pick(): number {
    const weights = this.weights;
    const n = weights.length;
    for (;;) {
      const seq = this.sequence;
      this.sequence = (seq + 1) >>> 0; // a uint32 that wraps, as gRPC's sequence does
      const index = seq % n;
      const round = (seq - index) / n;
      const weight = weights[index]!;
      // weight × round < 2^48 and index × offset < 2^47: exact in a double.
      if ((weight * round + index * HALF_MAX_WEIGHT) % MAX_WEIGHT >= MAX_WEIGHT - weight) return index;
    }
  }
}
