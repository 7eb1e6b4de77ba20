import type { PickArgs, Picker, PickResult } from '../../core/index.js';
import { ArraySnapshot, SnapshotArray } from '../shared/snapshot-array.js';
import type { ReadyWeights } from './ready-weights.js';

/**
 * Vose's alias table over a list of positive integer weights, built once in O(n): one random number in
 * [0, 1) chooses a column (its integer part) and a threshold (its fraction), and a single comparison gives the
 * index. (A binary search over cumulative weights is O(log n) but its branches are unpredictable on random
 * input, which costs more than the search itself.) Built in integers, so the distribution is exactly the
 * weights'.
 */
export class AliasTable {
  readonly n: number;
  readonly total: number;
  /** Column i gives index i when `threshold < keep[i]` (threshold uniform in [0, total)), else `alias[i]`. */
  readonly keep: Float64Array;
  readonly alias: Int32Array;

  constructor(weights: readonly number[]) {
    const n = weights.length;
    if (n === 0) throw new RangeError('an alias table needs at least one weight');
    let total = 0;
    for (let i = 0; i < n; i++) {
      const w = weights[i]!;
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
    const alias = new Int32Array(n);
    // The columns still to settle, in one array sized once: short ones stacked from the front, full or
    // surplus ones from the back.
    const work = new Int32Array(n);
    let small = 0;
    let large = n;
    for (let i = 0; i < n; i++) {
      if (scaled[i]! < total) work[small++] = i;
      else work[--large] = i;
    }
    while (small > 0 && large < n) {
      const s = work[--small]!;
      const l = work[large++]!;
      keep[s] = scaled[s]!;
      alias[s] = l;
      scaled[l] = scaled[l]! - (total - scaled[s]!);
      if (scaled[l]! < total) work[small++] = l;
      else work[--large] = l;
    }
    // Whatever is left is exactly full.
    for (let i = 0; i < small; i++) keep[work[i]!] = total;
    for (let i = large; i < n; i++) keep[work[i]!] = total;
    for (let i = 0; i < n; i++) if (keep[i]! >= total) alias[i] = i;
    this.n = n;
    this.total = total;
    this.keep = keep;
    this.alias = alias;
  }
}

/**
 * What every picker of one weighted_target update shares (one object per update, not three fields per picker):
 * the alias table over the active targets' weights, the randomness, and the live READY weights (null when
 * every slot is present, as in a TRANSIENT_FAILURE picker over every target's picker).
 */
export interface WeightedPicking {
  readonly table: AliasTable;
  /** Uniform in [0, 1) (the policy's `helper.random`, bound). */
  readonly random: () => number;
  readonly ready: ReadyWeights | null;
}

/**
 * Picks a child at random in proportion to its weight and delegates to that child's picker (A28: "The WRR
 * algorithm will be random based"). The alias table covers every active target and is built once per config
 * update; the pickers are the policy's per-target slots, null where a target is not READY, and the picker is
 * itself the snapshot of them (made by the slots' SnapshotArray: a report makes one object, not a picker and
 * a snapshot). A draw that lands on a null slot is redrawn over the READY targets' weights alone (`ready`, a
 * Fenwick tree kept by the policy in O(log n) per change), so each READY target still gets exactly its
 * weight's share: w/W + (1 - R/W) * w/R = w/R. With every target READY a pick is one draw and one
 * comparison, and a child changing state costs the policy O(log n), not a rebuild over every target. The
 * READY weights this picker saw are their version and total.
 */
export class WeightedPicker extends ArraySnapshot<Picker | null> implements Picker {
  private readonly picking: WeightedPicking;
  /** The READY weights' version and sum when this picker was built. */
  private readonly readyVersion: number;
  /** @internal */
  readonly readyTotal: number;
  /** This picker's own READY-weights tree, built the first time it redraws after the live tree moved on. */
  private own: Float64Array | null = null;

  /** @internal Made through {@link over} (`SnapshotArray.snapshotWith`). */
  constructor(items: readonly (Picker | null)[], length: number, picking: WeightedPicking) {
    super(items, length);
    if (length !== picking.table.n) throw new RangeError('WeightedPicker needs one picker per weight');
    this.picking = picking;
    this.readyVersion = picking.ready?.version ?? 0;
    this.readyTotal = picking.ready?.total ?? 0;
  }

  /** A picker over the slots as they are now (one per weight of `picking.table`). */
  static over(slots: SnapshotArray<Picker | null>, picking: WeightedPicking): WeightedPicker {
    return slots.snapshotWith(weightedPicker, picking);
  }

  /** A picker over fixed lists, every child present. */
  static of(pickers: readonly Picker[], weights: readonly number[], random: () => number): WeightedPicker {
    if (pickers.length === 0 || pickers.length !== weights.length) {
      throw new RangeError('WeightedPicker needs one weight per picker, and at least one picker');
    }
    const table = new AliasTable(weights);
    return WeightedPicker.over(SnapshotArray.adopt<Picker | null>(pickers.slice()), {
      table,
      random,
      ready: null,
    });
  }

  pick(args: PickArgs): PickResult {
    // One random number: its integer part picks the column, its fraction the threshold within it.
    const table = this.picking.table;
    const n = table.n;
    const x = this.picking.random() * n;
    // x < n always in exact arithmetic; rounding of random() * n can reach n itself.
    const column = x < n ? x | 0 : n - 1;
    const threshold = (x - column) * table.total;
    const picker = this.at(threshold < table.keep[column]! ? column : table.alias[column]!);
    return picker !== null ? picker.pick(args) : this.pickReady(args);
  }

  /** The draw landed on a target that is not READY: draw again over the READY targets' weights. */
  private pickReady(args: PickArgs): PickResult {
    return this.at(this.sampleReady(this.picking.random()))!.pick(args);
  }

  /** @internal The READY slot `r` draws over the READY weights this picker was built with. */
  sampleReady(r: number): number {
    const ready = this.picking.ready!;
    const slot = ready.sampleAt(this.readyVersion, this.readyTotal, r);
    if (slot >= 0) return slot;
    this.own ??= ready.treeOf(this);
    return ready.sample(this.own, this.readyTotal, r);
  }
}

const weightedPicker = (
  items: readonly (Picker | null)[],
  length: number,
  picking: WeightedPicking,
): WeightedPicker => new WeightedPicker(items, length, picking);
