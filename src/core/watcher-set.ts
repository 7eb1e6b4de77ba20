/**
 * The watchers of one kind on one subchannel, as a value kept in a field: none, the one (a subchannel is
 * almost always watched by one pick_first, and then this costs no object at all), or an exact-size array
 * replaced on every change (copy-on-write, so a dispatch walks a stable snapshot). A watcher is an object,
 * never an array, and is held at most once.
 */
export type WatcherSet<W extends object> = W | readonly W[] | null;

export function isWatcherArray<W extends object>(set: WatcherSet<W>): set is readonly W[] {
  return Array.isArray(set);
}

export function watcherCount<W extends object>(set: WatcherSet<W>): number {
  return set === null ? 0 : isWatcherArray(set) ? set.length : 1;
}

export function hasWatcher<W extends object>(set: WatcherSet<W>, watcher: W): boolean {
  return set === watcher || (isWatcherArray(set) && set.includes(watcher));
}

/** `set` with `watcher` added (the same set when it is there already). */
export function withWatcher<W extends object>(set: WatcherSet<W>, watcher: W): WatcherSet<W> {
  if (set === null) return watcher;
  if (hasWatcher(set, watcher)) return set;
  // concat allocates exactly what it needs; pushing would leave V8's growth slack, per subchannel.
  return isWatcherArray(set) ? set.concat(watcher) : [set as W, watcher];
}

/** `set` without `watcher`. */
export function withoutWatcher<W extends object>(set: WatcherSet<W>, watcher: W): WatcherSet<W> {
  if (set === watcher) return null;
  if (!isWatcherArray(set) || !set.includes(watcher)) return set;
  const rest = set.filter((w) => w !== watcher);
  return rest.length === 0 ? null : rest.length === 1 ? rest[0]! : rest;
}

/** Calls `fn` with each watcher of `set` (for bookkeeping, such as a release; dispatch snapshots instead). */
export function forEachWatcher<W extends object>(set: WatcherSet<W>, fn: (watcher: W) => void): void {
  if (set === null) return;
  if (isWatcherArray(set)) for (const w of set) fn(w);
  else fn(set);
}
