import { workMeter } from '../../core/index.js';
import { type ArraySnapshot, SnapshotArray } from '../snapshot-array.js';

/**
 * The weights of the READY targets, by target slot, in a Fenwick tree (binary indexed tree): a target
 * turning READY or leaving READY is O(log n), and a snapshot of the tree (a {@link SnapshotArray}) samples a
 * READY target in proportion to its weight in O(log n), exactly (integer weights).
 */
export class ReadyWeights {
  /** tree[i] (1-based) sums the weights of slots (i - lowbit(i), i]. */
  private readonly tree = new SnapshotArray<number>();
  private total = 0;
  private readonly n: number;

  /** `weights`: every slot's weight, `ready`: whether each slot counts now. O(n). */
  constructor(weights: readonly number[], ready: (slot: number) => boolean) {
    const n = weights.length;
    this.n = n;
    const tree = new Float64Array(n + 1);
    for (let slot = 0; slot < n; slot++) if (ready(slot)) tree[slot + 1] = weights[slot]!;
    // Linear build: each node passes its sum on to its parent.
    for (let i = 1; i <= n; i++) {
      const parent = i + (i & -i);
      if (parent <= n) tree[parent] = tree[parent]! + tree[i]!;
    }
    for (let i = 0; i <= n; i++) this.tree.push(tree[i]!);
    for (let slot = 0; slot < n; slot++) if (ready(slot)) this.total += weights[slot]!;
  }

  /** Adds `delta` (a weight, or its negation) to a slot. */
  add(slot: number, delta: number): void {
    this.total += delta;
    workMeter.visits += Math.ceil(Math.log2(this.n + 1));
    for (let i = slot + 1; i <= this.n; i += i & -i) this.tree.set(i, this.tree.at(i) + delta);
  }

  snapshot(): ReadyWeightsSnapshot {
    return new ReadyWeightsSnapshot(this.tree.snapshot(), this.total, this.n);
  }
}

/** The READY weights when a picker was built. */
export class ReadyWeightsSnapshot {
  private readonly top: number;

  constructor(
    private readonly tree: ArraySnapshot<number>,
    readonly total: number,
    private readonly n: number,
  ) {
    let top = 1;
    while (top * 2 <= n) top *= 2;
    this.top = n === 0 ? 0 : top;
  }

  /** The slot whose share of the READY weight holds `r * total` (r uniform in [0, 1)); a READY slot. */
  sample(r: number): number {
    const total = this.total;
    let rest = Math.floor(r * total);
    if (rest >= total) rest = total - 1;
    // The last position whose prefix sum is <= rest; the slot after it is the one drawn.
    let position = 0;
    const tree = this.tree;
    for (let step = this.top; step > 0; step >>= 1) {
      const next = position + step;
      if (next <= this.n) {
        const sum = tree.at(next);
        if (sum <= rest) {
          position = next;
          rest -= sum;
        }
      }
    }
    return position;
  }
}
