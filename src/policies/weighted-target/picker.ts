import type { PickArgs, Picker, PickResult } from '../../core/index.js';

/**
 * Picks a child at random in proportion to its weight and delegates to that child's picker (A28: "The WRR
 * algorithm will be random based"). An alias table (Vose) is built once, in O(n); a pick is O(1): one random
 * number chooses a column and a threshold, with a single comparison and no allocation. (A binary search over
 * cumulative weights is O(log n) but its branches are unpredictable on random input, which costs more than
 * the search itself.) The table is built in integers, so the distribution is exactly the weights'.
 */
export class WeightedPicker implements Picker {
  private readonly n: number;
  private readonly total: number;
  /** Column i keeps its own child when `threshold < keep[i]` (threshold uniform in [0, total)). */
  private readonly keep: Float64Array;
  private readonly own: readonly Picker[];
  private readonly alias: readonly Picker[];

  /** `random` is uniform in [0, 1) (the policy's `helper.random`, bound). */
  constructor(
    pickers: readonly Picker[],
    weights: readonly number[],
    private readonly random: () => number,
  ) {
    const n = pickers.length;
    if (n === 0 || n !== weights.length) {
      throw new RangeError('WeightedPicker needs one weight per picker, and at least one picker');
    }
    let total = 0;
    for (const w of weights) {
      if (!(Number.isInteger(w) && w > 0))
        throw new RangeError(`weights must be positive integers, got ${w}`);
      total += w;
    }
    // Column i holds weight total/n in units where each weight counts n times: scaled[i] = w[i] * n. A column
    // short of `total` is topped up by one with a surplus (its alias). All integers (weights are uint32 and
    // n * total stays far below 2^53), so the split is exact.
    const scaled = new Float64Array(n);
    for (let i = 0; i < n; i++) scaled[i] = weights[i]! * n;
    const keep = new Float64Array(n);
    const aliasIndex = new Int32Array(n);
    const small: number[] = [];
    const large: number[] = [];
    for (let i = 0; i < n; i++) (scaled[i]! < total ? small : large).push(i);
    while (small.length > 0 && large.length > 0) {
      const s = small.pop()!;
      const l = large.pop()!;
      keep[s] = scaled[s]!;
      aliasIndex[s] = l;
      scaled[l] = scaled[l]! - (total - scaled[s]!);
      (scaled[l]! < total ? small : large).push(l);
    }
    // Whatever is left is exactly full.
    for (const i of large) keep[i] = total;
    for (const i of small) keep[i] = total;
    this.n = n;
    this.total = total;
    this.keep = keep;
    this.own = pickers.slice();
    this.alias = Array.from(aliasIndex, (a, i) => (keep[i]! >= total ? pickers[i]! : pickers[a]!));
  }

  pick(args: PickArgs): PickResult {
    // One random number: its integer part picks the column, its fraction the threshold within it.
    const n = this.n;
    const x = this.random() * n;
    // x < n always in exact arithmetic; rounding of random() * n can reach n itself.
    const column = x < n ? x | 0 : n - 1;
    const threshold = (x - column) * this.total;
    return (threshold < this.keep[column]! ? this.own[column]! : this.alias[column]!).pick(args);
  }
}
