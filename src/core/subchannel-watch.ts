import type {
  StateListener,
  Subchannel,
  SubchannelHealthWatcher,
  SubchannelStateWatcher,
  Unwatch,
} from './subchannel.js';

/**
 * For a subchannel without the object forms: the function-form watch made for each watcher, so that removing
 * the watcher finds it. Only such subchannels (a third party's, or a wrapper of one) pay for this.
 */
type Fallbacks<W> = WeakMap<Subchannel, Map<W, Unwatch>>;
const stateFallbacks: Fallbacks<SubchannelStateWatcher> = new WeakMap();
const healthFallbacks: Fallbacks<SubchannelHealthWatcher> = new WeakMap();

function addFallback<W>(
  fallbacks: Fallbacks<W>,
  subchannel: Subchannel,
  watcher: W,
  watch: () => Unwatch,
): void {
  let byWatcher = fallbacks.get(subchannel);
  if (byWatcher?.has(watcher)) return;
  if (byWatcher === undefined) {
    byWatcher = new Map();
    fallbacks.set(subchannel, byWatcher);
  }
  byWatcher.set(watcher, watch());
}

function removeFallback<W>(fallbacks: Fallbacks<W>, subchannel: Subchannel, watcher: W): void {
  const byWatcher = fallbacks.get(subchannel);
  const unwatch = byWatcher?.get(watcher);
  if (unwatch === undefined) return;
  byWatcher!.delete(watcher);
  if (byWatcher!.size === 0) fallbacks.delete(subchannel);
  unwatch();
}

/**
 * `watcher` hears `subchannel`'s connectivity changes until {@link unwatchSubchannelState}: through the
 * subchannel's object form when it has one (nothing allocated per watch), else through `watchConnectivity`.
 */
export function watchSubchannelState(subchannel: Subchannel, watcher: SubchannelStateWatcher): void {
  if (subchannel.addStateWatcher !== undefined) subchannel.addStateWatcher(watcher);
  else
    addFallback(stateFallbacks, subchannel, watcher, () =>
      subchannel.watchConnectivity((state, status) => watcher.onSubchannelState(state, status)),
    );
}

export function unwatchSubchannelState(subchannel: Subchannel, watcher: SubchannelStateWatcher): void {
  if (subchannel.removeStateWatcher !== undefined) subchannel.removeStateWatcher(watcher);
  else removeFallback(stateFallbacks, subchannel, watcher);
}

/** A61 generic health: {@link watchSubchannelState} for the health watch. */
export function watchSubchannelHealth(subchannel: Subchannel, watcher: SubchannelHealthWatcher): void {
  if (subchannel.addHealthWatcher !== undefined) subchannel.addHealthWatcher(watcher);
  else
    addFallback(healthFallbacks, subchannel, watcher, () =>
      subchannel.watchHealth((state, status) => watcher.onSubchannelHealth(state, status)),
    );
}

export function unwatchSubchannelHealth(subchannel: Subchannel, watcher: SubchannelHealthWatcher): void {
  if (subchannel.removeHealthWatcher !== undefined) subchannel.removeHealthWatcher(watcher);
  else removeFallback(healthFallbacks, subchannel, watcher);
}

/** What a subchannel implementing the object forms needs to offer the function forms on top of them. */
interface StateWatchable {
  addStateWatcher(watcher: SubchannelStateWatcher): void;
  removeStateWatcher(watcher: SubchannelStateWatcher): void;
}
interface HealthWatchable {
  addHealthWatcher(watcher: SubchannelHealthWatcher): void;
  removeHealthWatcher(watcher: SubchannelHealthWatcher): void;
}

/**
 * `watchConnectivity` for a subchannel that implements the object form: the listener in a watcher of its own
 * (so one function can watch twice and each watch stops on its own).
 */
export function watchStateWithListener(subchannel: StateWatchable, listener: StateListener): Unwatch {
  const watcher: SubchannelStateWatcher = { onSubchannelState: listener };
  subchannel.addStateWatcher(watcher);
  return () => subchannel.removeStateWatcher(watcher);
}

/** `watchHealth` on top of the object form, as {@link watchStateWithListener}. */
export function watchHealthWithListener(subchannel: HealthWatchable, listener: StateListener): Unwatch {
  const watcher: SubchannelHealthWatcher = { onSubchannelHealth: listener };
  subchannel.addHealthWatcher(watcher);
  return () => subchannel.removeHealthWatcher(watcher);
}
