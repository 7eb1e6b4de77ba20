/**
 * A dense array that changes one slot at a time (append, replace, swap-remove: O(1) each) and hands out
 * immutable snapshots in O(1). It is what lets a petiole or parent build a new picker for every child report
 * without copying its READY children: a connect storm of n children costs O(n) in total, not O(n²).
 *
 * A snapshot reads the live array directly for as long as nothing has changed since it was taken (the
 * newest picker: a pick is one extra field check). From the first change on, the array records the values
 * the snapshot saw in the slots it overwrites (or vacates) in that snapshot's overrides, and links the
 * snapshot to the next one taken, so an older snapshot still reads exactly what it was built with (its
 * overrides, then the newer snapshots'). Only the newest snapshot is referenced by the array; older ones
 * live only as long as the pickers that hold them. The first override sits in two fields of the snapshot
 * (a parent replacing one child's picker per report, the common case, allocates nothing more); further ones
 * go in a Map.
 */
/** The items of every empty SnapshotArray: never written to, since a push onto no items makes a new array. */
const NO_ITEMS = Object.freeze([]) as never[];

export class SnapshotArray<T> {
  private items: T[] = NO_ITEMS;
  private newest: ArraySnapshot<T> | null = null;

  /**
   * A SnapshotArray holding `items` (taken over, not copied: the caller gives up the array), for a parent that
   * builds its whole list at once after an update (sized once, no growth steps).
   */
  static adopt<T>(items: T[]): SnapshotArray<T> {
    const array = new SnapshotArray<T>();
    if (items.length > 0) array.items = items;
    return array;
  }

  get length(): number {
    return this.items.length;
  }

  at(i: number): T {
    return this.items[i]!;
  }

  /** Appends `value` and returns its index. */
  push(value: T): number {
    if (this.items.length === 0) {
      // A fresh array holding the value: an empty array's first push reserves 17 slots, and many of these
      // hold one value (a petiole per locality or target). No snapshot reads the empty array it replaces.
      this.items = [value];
      return 0;
    }
    return this.items.push(value) - 1;
  }

  set(i: number, value: T): void {
    this.preserve(i);
    this.items[i] = value;
  }

  /**
   * Removes slot `i` by moving the last value into it (order is not kept). Returns true when a value moved,
   * i.e. the value that was last is now at `i`.
   */
  swapRemove(i: number): boolean {
    const last = this.items.length - 1;
    this.preserve(i);
    this.preserve(last);
    const moved = this.items.pop()!;
    if (i === last) return false;
    this.items[i] = moved;
    return true;
  }

  /**
   * Removes the `width` slots from `first` by moving the last `width` into them (entries laid out as groups
   * of `width` slots). Returns true when a group moved.
   */
  swapRemoveGroup(first: number, width: number): boolean {
    const last = this.items.length - width;
    for (let k = 0; k < width; k++) {
      this.preserve(first + k);
      this.preserve(last + k);
    }
    if (first !== last) for (let k = 0; k < width; k++) this.items[first + k] = this.items[last + k]!;
    this.items.length = last;
    return first !== last;
  }

  /** The current contents, frozen for readers: O(1). */
  snapshot(): ArraySnapshot<T> {
    const newest = this.newest;
    // Unchanged: every change to a slot the newest snapshot covers marks it stale, and one to a slot beyond it
    // (push, or a removal among the slots pushed since) changes the length unless it undoes the pushes.
    if (newest !== null && !newest.stale && newest.length === this.items.length) return newest;
    return this.takeNewest(new ArraySnapshot(this.items, this.items.length));
  }

  /**
   * The current contents as a new snapshot made by `make` (a subclass of {@link ArraySnapshot}: a picker that is
   * its own snapshot, one object per report instead of two), given `arg`: `make` can then be one function made
   * once, not a closure per call. Always a new object, even when nothing changed.
   */
  snapshotWith<S extends ArraySnapshot<T>, A>(
    make: (items: readonly T[], length: number, arg: A) => S,
    arg: A,
  ): S {
    return this.takeNewest(make(this.items, this.items.length, arg));
  }

  /** Makes `snapshot` the newest: the one before reads through it for every slot it has no override of. */
  private takeNewest<S extends ArraySnapshot<T>>(snapshot: S): S {
    const newest = this.newest;
    if (newest !== null) {
      newest.stale = true;
      newest.next = snapshot;
    }
    this.newest = snapshot;
    return snapshot;
  }

  /** Before slot `i` changes: the newest snapshot keeps the value it saw there. */
  private preserve(i: number): void {
    const newest = this.newest;
    if (newest === null || i >= newest.length) return;
    newest.stale = true;
    if (newest.firstSlot === -1) {
      newest.firstSlot = i;
      newest.firstValue = this.items[i];
    } else if (newest.firstSlot !== i) {
      let more = newest.more;
      if (more === null) newest.more = more = new Map();
      if (!more.has(i)) more.set(i, this.items[i]!);
    }
  }
}

/** The contents of a {@link SnapshotArray} when it was taken; never changes. */
export class ArraySnapshot<T> {
  /** @internal Whether anything has changed since this snapshot was taken (else it reads the live array). */
  stale = false;
  /** @internal The first slot changed since, and the value this snapshot saw there (-1: none). */
  firstSlot = -1;
  firstValue: T | undefined = undefined;
  /** @internal The values this snapshot saw in the other slots changed since. */
  more: Map<number, T> | null = null;
  /** @internal The snapshot taken after this one, which holds every slot this one has no override of. */
  next: ArraySnapshot<T> | null = null;

  /** @internal Made by a {@link SnapshotArray} (`snapshot`, or a subclass through `snapshotWith`). */
  constructor(
    private readonly items: readonly T[],
    readonly length: number,
  ) {}

  /** The value at `i` (0 <= i < length). */
  at(i: number): T {
    return this.stale ? this.older(i) : this.items[i]!;
  }

  /** Every value, in order (a copy: for tests and traces, not for the hot path). */
  toArray(): T[] {
    return Array.from({ length: this.length }, (_, i) => this.at(i));
  }

  private older(i: number): T {
    let s: ArraySnapshot<T> = this;
    for (;;) {
      if (s.firstSlot === i) return s.firstValue as T;
      const more = s.more;
      if (more?.has(i)) return more.get(i)!;
      if (!s.stale || s.next === null) return s.items[i]!;
      s = s.next;
    }
  }
}

/** A snapshot of a fixed list, for pickers built from plain arrays (tests, one-off pickers). */
export function snapshotOf<T>(values: readonly T[]): ArraySnapshot<T> {
  const array = new SnapshotArray<T>();
  for (const v of values) array.push(v);
  return array.snapshot();
}
