/** Statistics for tests of random choices (shuffles, weighted picks), run on the seeded sim RNG. */

/** Pearson's chi-square statistic of observed counts against expected relative weights (any scale). */
export function chiSquare(counts: readonly number[], weights: readonly number[]): number {
  const n = counts.reduce((a, b) => a + b, 0);
  const total = weights.reduce((a, b) => a + b, 0);
  return counts.reduce((sum, c, i) => {
    const expected = (n * weights[i]!) / total;
    return sum + (c - expected) ** 2 / expected;
  }, 0);
}

/** 0.999 quantiles of the chi-square distribution, indexed by degrees of freedom. */
export const CHI2_999 = [Number.NaN, 10.83, 13.82, 16.27, 18.47, 20.52, 22.46, 24.32, 26.12, 27.88];
