import { workMeter } from '../../core/index.js';
import type { ArraySnapshot } from '../shared/snapshot-array.js';

/**
 * The weights of the READY targets, by target slot, in a Fenwick tree (binary indexed tree): a target
 * turning READY or leaving READY is O(log n), and a picker samples a READY target in proportion to its weight
 * in O(log n), exactly (integer weights).
 *
 * A picker remembers the version and total it was built at, which costs it two numbers and copies nothing: it
 * samples the live tree for as long as the tree has not changed since (the newest picker, the only one a
 * channel keeps using). An older picker, still held by some call that raced with a change, builds its own tree
 * once from the READY slots it was built with ({@link treeOf}), so it keeps sampling exactly what it saw.
 * (Preserving the O(log n) nodes each change overwrites, for every picker a connect storm builds, cost more
 * than all the picks on old pickers ever do.)
 */
export class ReadyWeights {
  /** tree[i] (1-based) sums the weights of slots (i - lowbit(i), i]. */
  private readonly tree: Float64Array;
  /** The READY weights' sum now. */
  total = 0;
  /** Bumped by every change; a picker samples the live tree while it still matches. */
  version = 0;
  /** The largest power of two not above the slot count (0 with no slots): where a descent starts. */
  readonly top: number;

  /** `weights`: every slot's weight (kept, never changed), `ready`: whether each slot counts now. O(n). */
  constructor(
    readonly weights: readonly number[],
    ready: (slot: number) => boolean,
  ) {
    const n = weights.length;
    const tree = new Float64Array(n + 1);
    for (let slot = 0; slot < n; slot++) {
      if (ready(slot)) {
        tree[slot + 1] = weights[slot]!;
        this.total += weights[slot]!;
      }
    }
    buildFenwick(tree);
    this.tree = tree;
    let top = 1;
    while (top * 2 <= n) top *= 2;
    this.top = n === 0 ? 0 : top;
  }

  /** Adds `delta` (a weight, or its negation) to a slot. */
  add(slot: number, delta: number): void {
    this.total += delta;
    this.version++;
    const tree = this.tree;
    const n = tree.length - 1;
    workMeter.visits += Math.ceil(Math.log2(n + 1));
    for (let i = slot + 1; i <= n; i += i & -i) tree[i] = tree[i]! + delta;
  }

  /** The slot `r` draws from the READY weights at `version` (their sum `total`), or -1 if the tree has moved on. */
  sampleAt(version: number, total: number, r: number): number {
    return version === this.version ? this.sample(this.tree, total, r) : -1;
  }

  /** A tree of the weights of the slots that are non-null in `readySlots`: an older picker's own. O(n). */
  treeOf(readySlots: ArraySnapshot<unknown>): Float64Array {
    const weights = this.weights;
    const tree = new Float64Array(weights.length + 1);
    for (let slot = 0; slot < weights.length; slot++) {
      if (readySlots.at(slot) !== null) tree[slot + 1] = weights[slot]!;
    }
    buildFenwick(tree);
    return tree;
  }

  /** The slot whose share of `tree`'s weight (summing to `total`) holds `r * total` (r uniform in [0, 1)). */
  sample(tree: Float64Array, total: number, r: number): number {
    const n = tree.length - 1;
    let rest = Math.floor(r * total);
    if (rest >= total) rest = total - 1;
    // The last position whose prefix sum is <= rest; the slot after it is the one drawn.
    let position = 0;
    for (let step = this.top; step > 0; step >>= 1) {
      const next = position + step;
      if (next <= n) {
        const sum = tree[next]!;
        if (sum <= rest) {
          position = next;
          rest -= sum;
        }
      }
    }
    return position;
  }
}

/** Each node passes its sum on to its parent: a tree of per-slot weights (tree[slot + 1]) in O(n). */
function buildFenwick(tree: Float64Array): void {
  const n = tree.length - 1;
  for (let i = 1; i <= n; i++) {
    const parent = i + (i & -i);
    if (parent <= n) tree[parent] = tree[parent]! + tree[i]!;
  }
}
