/** One registration in a {@link WatchList}; `active` turns false when it is removed. */
export interface Watch<L> {
  readonly listener: L;
  active: boolean;
}

const NONE: readonly never[] = Object.freeze([]);

/**
 * The listeners of one kind on one subchannel handle, behind a single grpc-js listener: a handle of a channel
 * with 10,000 endpoints is watched by two or three policies, and one grpc-js registration with a short array
 * costs a fraction of one grpc-js listener (closure and Set slot) per watch. Copy-on-write, so a dispatch
 * walks a stable array; a watch removed during a dispatch is skipped (its `active` flag).
 */
export class WatchList<L> {
  private watches: readonly Watch<L>[] = NONE;

  get size(): number {
    return this.watches.length;
  }

  /** The registrations to call now (check `active` before each: a listener may remove another). */
  get current(): readonly Watch<L>[] {
    return this.watches;
  }

  add(listener: L): Watch<L> {
    const watch = { listener, active: true };
    // concat allocates exactly what it needs; spreading or pushing leaves V8's growth slack (17 slots for 1).
    this.watches = this.watches.length === 0 ? [watch] : this.watches.concat(watch);
    return watch;
  }

  /** Removes `watch`; false when it was already removed. */
  remove(watch: Watch<L>): boolean {
    if (!watch.active) return false;
    watch.active = false;
    const rest = this.watches.filter((w) => w !== watch);
    this.watches = rest.length === 0 ? NONE : rest;
    return true;
  }

  /** Removes every watch. */
  clear(): void {
    for (const w of this.watches) w.active = false;
    this.watches = NONE;
  }
}
