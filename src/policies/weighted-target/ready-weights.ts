import { workMeter } from '../../core/index.js';
import type { ArraySnapshot } from '../snapshot-array.js';

/**
 * The weights of the READY targets, by target slot, in a Fenwick tree (binary indexed tree): a target
 * turning READY or leaving READY is O(log n), and a snapshot samples a READY target in proportion to its
 * weight in O(log n), exactly (integer weights).
 *
 * A snapshot costs O(1) and copies nothing: it samples the live tree for as long as the tree has not changed
 * since it was taken (the newest picker, the only one a channel keeps using). An older snapshot, still held by
 * a picker some call raced with, builds its own tree once from the READY slots it was taken with, so it keeps
 * sampling exactly what it saw. (Preserving the O(log n) nodes each change overwrites, for every picker a
 * connect storm builds, cost more than all the picks on old pickers ever do.)
 */
export class ReadyWeights {
  /** tree[i] (1-based) sums the weights of slots (i - lowbit(i), i]. */
  private readonly tree: Float64Array;
  private total = 0;
  /** Bumped by every change; a snapshot reads the live tree while it still matches. */
  private version = 0;

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

  /** The READY weights now; `readySlots` is the picker's view of the slots, non-null exactly where READY. */
  snapshot(readySlots: ArraySnapshot<unknown>): ReadyWeightsSnapshot {
    return new ReadyWeightsSnapshot(this, this.version, this.total, readySlots);
  }

  /** @internal The live tree, when it is still at `version`; else null. */
  treeAt(version: number): Float64Array | null {
    return version === this.version ? this.tree : null;
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

/** The READY weights when a picker was built. */
export class ReadyWeightsSnapshot {
  private readonly top: number;
  /** This snapshot's own tree, built the first time it is sampled after the live tree moved on. */
  private own: Float64Array | null = null;

  constructor(
    private readonly weights: ReadyWeights,
    private readonly version: number,
    readonly total: number,
    private readonly readySlots: ArraySnapshot<unknown>,
  ) {
    const n = weights.weights.length;
    let top = 1;
    while (top * 2 <= n) top *= 2;
    this.top = n === 0 ? 0 : top;
  }

  /** The slot whose share of the READY weight holds `r * total` (r uniform in [0, 1)); a READY slot. */
  sample(r: number): number {
    const tree = this.weights.treeAt(this.version) ?? this.ownTree();
    const n = tree.length - 1;
    const total = this.total;
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

  private ownTree(): Float64Array {
    if (this.own === null) {
      const weights = this.weights.weights;
      const tree = new Float64Array(weights.length + 1);
      for (let slot = 0; slot < weights.length; slot++) {
        if (this.readySlots.at(slot) !== null) tree[slot + 1] = weights[slot]!;
      }
      buildFenwick(tree);
      this.own = tree;
    }
    return this.own;
  }
}
