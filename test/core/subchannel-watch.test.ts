// The object form of Subchannel watches, and the core helpers that fall back to the function forms on a
// subchannel that does not offer it (one written against the older interface).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type ConnectivityState,
  OK_STATUS,
  type StateListener,
  type Subchannel,
  type SubchannelHealthWatcher,
  type SubchannelStateWatcher,
  unwatchSubchannelHealth,
  unwatchSubchannelState,
  watchSubchannelHealth,
  watchSubchannelState,
  withoutWatcher,
  withWatcher,
} from '../../src/core/index.js';
import { ForwardingSubchannel } from '../../src/policies/shared/forwarding-subchannel.js';

/** A subchannel with only the function forms, its live listeners in view. */
function functionFormOnly() {
  const state = new Set<StateListener>();
  const health = new Set<StateListener>();
  const add = (set: Set<StateListener>, l: StateListener) => {
    // Each watch is its own registration, as the interface asks.
    const entry: StateListener = (s, st) => l(s, st);
    set.add(entry);
    return () => void set.delete(entry);
  };
  const sub = {
    address: { host: '10.0.0.1', port: 80 },
    key: '10.0.0.1:80',
    state: 'IDLE' as ConnectivityState,
    health: 'IDLE' as ConnectivityState,
    watchConnectivity: (l: StateListener) => add(state, l),
    watchHealth: (l: StateListener) => add(health, l),
    requestConnection() {},
    resetBackoff() {},
    release() {},
  } satisfies Subchannel;
  return { sub, state, health };
}

test('the helpers fall back to watchConnectivity / watchHealth, once per watcher and subchannel', () => {
  const { sub, state, health } = functionFormOnly();
  const other = functionFormOnly();
  const heard: string[] = [];
  const w: SubchannelStateWatcher & SubchannelHealthWatcher = {
    onSubchannelState: (s) => heard.push(`state ${s}`),
    onSubchannelHealth: (s) => heard.push(`health ${s}`),
  };
  watchSubchannelState(sub, w);
  watchSubchannelState(sub, w);
  watchSubchannelState(other.sub, w);
  watchSubchannelHealth(sub, w);
  assert.equal(state.size, 1, 'a watcher added twice is watched once');
  assert.equal(other.state.size, 1, 'one watcher may watch several subchannels');
  for (const l of state) l('READY', OK_STATUS);
  for (const l of health) l('TRANSIENT_FAILURE', OK_STATUS);
  assert.deepEqual(heard, ['state READY', 'health TRANSIENT_FAILURE']);
  unwatchSubchannelState(sub, w);
  unwatchSubchannelState(sub, w);
  unwatchSubchannelHealth(sub, w);
  assert.equal(state.size, 0);
  assert.equal(health.size, 0);
  assert.equal(other.state.size, 1, 'the other subchannel still watched');
  unwatchSubchannelState(other.sub, w);
  assert.equal(other.state.size, 0);
  // Removing a watcher never added is harmless.
  unwatchSubchannelHealth(other.sub, w);
});

test('the helpers use the object form where a subchannel has it', () => {
  const added: string[] = [];
  const { sub } = functionFormOnly();
  const withObjectForm: Subchannel = {
    ...sub,
    watchConnectivity: () => assert.fail('function form used'),
    watchHealth: () => assert.fail('function form used'),
    addStateWatcher: () => added.push('add state'),
    removeStateWatcher: () => added.push('remove state'),
    addHealthWatcher: () => added.push('add health'),
    removeHealthWatcher: () => added.push('remove health'),
  };
  const w = { onSubchannelState() {}, onSubchannelHealth() {} };
  watchSubchannelState(withObjectForm, w);
  watchSubchannelHealth(withObjectForm, w);
  unwatchSubchannelState(withObjectForm, w);
  unwatchSubchannelHealth(withObjectForm, w);
  assert.deepEqual(added, ['add state', 'add health', 'remove state', 'remove health']);
});

test('a WatcherSet is null, the one watcher, or an exact array, and holds a watcher once', () => {
  const a = { n: 1 };
  const b = { n: 2 };
  const c = { n: 3 };
  let set = withWatcher(null, a);
  assert.equal(set, a, 'one watcher is kept without an array');
  assert.equal(withWatcher(set, a), a);
  set = withWatcher(withWatcher(set, b), c);
  assert.deepEqual(set, [a, b, c]);
  assert.equal(withWatcher(set, b), set, 'adding a held watcher changes nothing');
  set = withoutWatcher(set, b);
  assert.deepEqual(set, [a, c]);
  set = withoutWatcher(set, a);
  assert.equal(set, c, 'back to one: no array');
  assert.equal(withoutWatcher(set, a), c);
  assert.equal(withoutWatcher(set, c), null);
});

test('a wrapper (ForwardingSubchannel) over a subchannel without the object form passes watchers on as listeners', () => {
  const { sub, state, health } = functionFormOnly();
  const wrapper = new ForwardingSubchannel(sub);
  const heard: string[] = [];
  const w = {
    onSubchannelState: (s: ConnectivityState) => heard.push(`state ${s}`),
    onSubchannelHealth: (s: ConnectivityState) => heard.push(`health ${s}`),
  };
  watchSubchannelState(wrapper, w);
  watchSubchannelHealth(wrapper, w);
  const unwatchFn = wrapper.watchConnectivity((s) => heard.push(`fn ${s}`));
  assert.equal(state.size, 2, 'the watcher and the listener, each its own watch on the inner subchannel');
  assert.equal(health.size, 1);
  for (const l of [...state]) l('CONNECTING', OK_STATUS);
  for (const l of [...health]) l('CONNECTING', OK_STATUS);
  assert.deepEqual(heard, ['state CONNECTING', 'fn CONNECTING', 'health CONNECTING']);
  unwatchSubchannelState(wrapper, w);
  unwatchSubchannelHealth(wrapper, w);
  unwatchFn();
  assert.equal(state.size, 0);
  assert.equal(health.size, 0);
});
