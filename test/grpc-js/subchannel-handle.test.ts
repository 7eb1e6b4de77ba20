// lbtree's handle on a grpc-js subchannel: its watchers share one grpc-js listener (a channel holds a handle
// per endpoint, so per-watch grpc-js listeners cost memory per endpoint), and the A61 listener contract holds:
// a removed watch hears nothing more, a released handle nothing at all, and grpc-js's registrations go away.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connectivityState, type experimental } from '@grpc/grpc-js';
import type { ConnectivityState } from '../../src/core/index.js';
import { GrpcHelperAdapter, SUBCHANNELS_PER_TURN } from '../../src/grpc-js/helper-adapter.js';
import { GrpcSubchannelHandle } from '../../src/grpc-js/subchannel-adapter.js';

/** The part of grpc-js's SubchannelInterface the handle uses, with its listeners in view. */
function fakeGrpcSubchannel() {
  const stateListeners = new Set<experimental.ConnectivityStateListener>();
  const healthListeners = new Set<experimental.HealthListener>();
  let refs = 0;
  const fake = {
    stateListeners,
    healthListeners,
    get refs() {
      return refs;
    },
    state: connectivityState.IDLE,
    healthy: true,
    getConnectivityState: () => fake.state,
    isHealthy: () => fake.healthy,
    addConnectivityStateListener: (l: experimental.ConnectivityStateListener) => stateListeners.add(l),
    removeConnectivityStateListener: (l: experimental.ConnectivityStateListener) => stateListeners.delete(l),
    addHealthStateWatcher: (l: experimental.HealthListener) => healthListeners.add(l),
    removeHealthStateWatcher: (l: experimental.HealthListener) => healthListeners.delete(l),
    ref: () => refs++,
    unref: () => refs--,
    startConnecting: () => {},
    emit(next: connectivityState, error?: string) {
      const previous = fake.state;
      fake.state = next;
      for (const l of [...stateListeners]) l(fake as never, previous, next, 0, error);
    },
    emitHealth(healthy: boolean) {
      fake.healthy = healthy;
      for (const l of [...healthListeners]) l(healthy);
    },
  };
  return fake;
}

const released: GrpcSubchannelHandle[] = [];
const owner = { handleReleased: (h: GrpcSubchannelHandle) => released.push(h), createNow: () => {} };

test('watchers of a handle share one grpc-js listener; each hears the state and a TF status naming the address', () => {
  const grpc = fakeGrpcSubchannel();
  const handle = new GrpcSubchannelHandle({ host: '10.0.0.1', port: 80 }, grpc as never, owner);
  assert.equal(grpc.refs, 1, 'an owned handle holds a ref');
  const heard: string[] = [];
  const unwatchA = handle.watchConnectivity((s, status) => heard.push(`a ${s} ${status.details}`));
  handle.watchConnectivity((s) => heard.push(`b ${s}`));
  assert.equal(grpc.stateListeners.size, 1);
  grpc.emit(connectivityState.TRANSIENT_FAILURE, 'connect ECONNREFUSED');
  assert.deepEqual(heard, ['a TRANSIENT_FAILURE 10.0.0.1:80: connect ECONNREFUSED', 'b TRANSIENT_FAILURE']);
  unwatchA();
  unwatchA();
  grpc.emit(connectivityState.CONNECTING);
  assert.deepEqual(heard.slice(2), ['b CONNECTING']);
  handle.release();
  assert.equal(grpc.stateListeners.size, 0, 'released: grpc-js listener removed');
  assert.equal(grpc.refs, 0);
  assert.deepEqual(released, [handle]);
  grpc.emit(connectivityState.READY);
  assert.equal(heard.length, 3, 'a released handle calls no listener');
  assert.equal(handle.watchConnectivity(() => heard.push('late')) instanceof Function, true);
  assert.equal(grpc.stateListeners.size, 0, 'no watch after release');
});

test('a watch removed by another listener during a dispatch is not called; the last unwatch removes the grpc-js listener', () => {
  const grpc = fakeGrpcSubchannel();
  const handle = new GrpcSubchannelHandle({ host: '10.0.0.2', port: 80 }, grpc as never, owner);
  const heard: string[] = [];
  let unwatchB = () => {};
  const unwatchA = handle.watchConnectivity((s) => {
    heard.push(`a ${s}`);
    unwatchB();
  });
  unwatchB = handle.watchConnectivity((s) => heard.push(`b ${s}`));
  grpc.emit(connectivityState.CONNECTING);
  assert.deepEqual(heard, ['a CONNECTING']);
  unwatchA();
  assert.equal(grpc.stateListeners.size, 0);
  const states: ConnectivityState[] = [];
  handle.watchConnectivity((s) => states.push(s));
  assert.equal(grpc.stateListeners.size, 1, 'a new watch registers again');
  grpc.emit(connectivityState.READY);
  assert.deepEqual(states, ['READY']);
});

test('A61 health: watchers hear health changes only while READY, through one grpc-js health watcher', () => {
  const grpc = fakeGrpcSubchannel();
  const handle = new GrpcSubchannelHandle({ host: '10.0.0.3', port: 80 }, grpc as never, owner);
  const heard: string[] = [];
  handle.watchHealth((s, status) => heard.push(`${s} ${status.details}`));
  handle.watchHealth((s) => heard.push(`second ${s}`));
  assert.equal(grpc.healthListeners.size, 1);
  grpc.emitHealth(false);
  assert.deepEqual(heard, [], 'not READY: nothing reported');
  grpc.state = connectivityState.READY;
  grpc.emitHealth(false);
  assert.deepEqual(heard, ['TRANSIENT_FAILURE 10.0.0.3:80: unhealthy', 'second TRANSIENT_FAILURE']);
  assert.equal(handle.health, 'TRANSIENT_FAILURE');
  handle.release();
  assert.equal(grpc.healthListeners.size, 0);
});

test('watcher objects (the object form) start and stop the one grpc-js listener as function-form watches do', () => {
  const grpc = fakeGrpcSubchannel();
  const handle = new GrpcSubchannelHandle({ host: '10.0.0.5', port: 80 }, grpc as never, owner);
  const heard: string[] = [];
  const a = { onSubchannelState: (s: ConnectivityState) => heard.push(`a ${s}`) };
  const b = { onSubchannelState: (s: ConnectivityState) => heard.push(`b ${s}`) };
  handle.addStateWatcher(a);
  assert.equal(grpc.stateListeners.size, 1, 'the first watcher registers the grpc-js listener');
  handle.addStateWatcher(a);
  handle.addStateWatcher(b);
  const unwatchFn = handle.watchConnectivity((s) => heard.push(`fn ${s}`));
  assert.equal(grpc.stateListeners.size, 1, 'one grpc-js listener for watchers and listeners alike');
  grpc.emit(connectivityState.CONNECTING);
  assert.deepEqual(
    heard,
    ['a CONNECTING', 'b CONNECTING', 'fn CONNECTING'],
    'a watcher added twice hears once',
  );
  handle.removeStateWatcher(a);
  handle.removeStateWatcher(a);
  unwatchFn();
  assert.equal(grpc.stateListeners.size, 1);
  handle.removeStateWatcher(b);
  assert.equal(grpc.stateListeners.size, 0, 'the last removal removes the grpc-js listener');
  grpc.emit(connectivityState.READY);
  assert.equal(heard.length, 3);

  // A61 health, the same way; a released handle takes no watcher and leaves no grpc-js registration.
  const health: string[] = [];
  const h = { onSubchannelHealth: (s: ConnectivityState) => health.push(s) };
  handle.addHealthWatcher(h);
  assert.equal(grpc.healthListeners.size, 1);
  grpc.emitHealth(false);
  assert.deepEqual(health, ['TRANSIENT_FAILURE']);
  handle.removeHealthWatcher(h);
  assert.equal(grpc.healthListeners.size, 0);
  handle.addHealthWatcher(h);
  handle.addStateWatcher(a);
  handle.release();
  assert.equal(grpc.healthListeners.size, 0);
  assert.equal(grpc.stateListeners.size, 0);
  handle.addStateWatcher(b);
  assert.equal(grpc.stateListeners.size, 0, 'no watch after release');
  grpc.emit(connectivityState.IDLE);
  grpc.emitHealth(true);
  assert.equal(heard.length, 3);
  assert.deepEqual(health, ['TRANSIENT_FAILURE']);
});

test('a handle that owns nothing (a grpc-js policy picked it) takes and gives back no ref', () => {
  const grpc = fakeGrpcSubchannel();
  const handle = new GrpcSubchannelHandle({ host: '10.0.0.4', port: 80 }, grpc as never, null);
  handle.release();
  assert.equal(grpc.refs, 0);
  assert.equal(handle.completeResult, handle.completeResult, 'the complete result is built once');
});

/** A grpc-js ChannelControlHelper that counts what lbtree asks of it. */
function fakeChannelHelper() {
  const created: { address: string; options: object }[] = [];
  const channelz = new Map<string, number>();
  const helper = {
    created,
    channelz,
    createSubchannel(address: { host: string; port: number }, options: object) {
      const sub = fakeGrpcSubchannel();
      const ref = { id: created.length, name: `${address.host}:${address.port}` };
      Object.assign(sub, { getChannelzRef: () => ref });
      created.push({ address: ref.name, options });
      return sub;
    },
    addChannelzChild: (ref: { id: number }) =>
      channelz.set(String(ref.id), (channelz.get(String(ref.id)) ?? 0) + 1),
    removeChannelzChild: (ref: { id: number }) => {
      const n = (channelz.get(String(ref.id)) ?? 0) - 1;
      if (n <= 0) channelz.delete(String(ref.id));
      else channelz.set(String(ref.id), n);
    },
    updateState: () => {},
    requestReresolution: () => {},
  };
  return helper;
}

test('the helper asks grpc-js once per held address: more handles share its subchannel (grpc-js pool scans are O(n))', () => {
  const grpc = fakeChannelHelper();
  const helper = new GrpcHelperAdapter(grpc as never, 'test');
  helper.channelOptions = { 'grpc.keepalive_time_ms': 10_000 };
  const a = helper.createSubchannel({ host: '10.0.0.1', port: 80 });
  const b = helper.createSubchannel({ host: '10.0.0.1', port: 80 });
  const other = helper.createSubchannel({ host: '10.0.0.2', port: 80 });
  assert.deepEqual(
    grpc.created.map((c) => c.address),
    ['10.0.0.1:80', '10.0.0.2:80'],
  );
  assert.equal((a as GrpcSubchannelHandle).grpc, (b as GrpcSubchannelHandle).grpc);
  assert.equal(grpc.channelz.size, 2, 'one channelz child per grpc-js subchannel');
  // An update with equal options (a new object, as every resolver update brings) keeps the subchannel.
  helper.channelOptions = { 'grpc.keepalive_time_ms': 10_000 };
  const c = helper.createSubchannel({ host: '10.0.0.1', port: 80 });
  assert.equal(grpc.created.length, 2);
  a.release();
  b.release();
  assert.equal(grpc.channelz.size, 2, 'still held by c');
  c.release();
  other.release();
  assert.equal(grpc.channelz.size, 0, 'the last handle gives the channelz child back');
  helper.createSubchannel({ host: '10.0.0.1', port: 80 });
  assert.equal(grpc.created.length, 3, 'released everywhere: asked again');
});

test('new channel options make a new grpc-js subchannel; handles on the old one keep it until released', () => {
  const grpc = fakeChannelHelper();
  const helper = new GrpcHelperAdapter(grpc as never, 'test');
  helper.channelOptions = { 'grpc.keepalive_time_ms': 10_000 };
  const old1 = helper.createSubchannel({ host: '10.0.0.1', port: 80 }) as GrpcSubchannelHandle;
  const old2 = helper.createSubchannel({ host: '10.0.0.1', port: 80 }) as GrpcSubchannelHandle;
  helper.channelOptions = { 'grpc.keepalive_time_ms': 20_000 };
  const fresh = helper.createSubchannel({ host: '10.0.0.1', port: 80 }) as GrpcSubchannelHandle;
  assert.equal(grpc.created.length, 2);
  assert.deepEqual(grpc.created[1]!.options, { 'grpc.keepalive_time_ms': 20_000 });
  assert.notEqual(fresh.grpc, old1.grpc);
  old1.release();
  assert.equal(grpc.channelz.size, 2, 'old2 still holds the old subchannel');
  old2.release();
  assert.equal(grpc.channelz.size, 1);
  fresh.release();
  assert.equal(grpc.channelz.size, 0);
});

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const address = (i: number) => ({ host: `10.1.${i >> 8}.${i & 255}`, port: 80 });

test('issue 25 §5: at most SUBCHANNELS_PER_TURN grpc-js subchannels per event-loop turn; the rest follow in later turns, in order, with their watchers and connection requests', async () => {
  assert.equal(SUBCHANNELS_PER_TURN, 100);
  const grpc = fakeChannelHelper();
  const helper = new GrpcHelperAdapter(grpc as never, 'test');
  const heard: string[] = [];
  const handles = Array.from({ length: 250 }, (_, i) => {
    const handle = helper.createSubchannel(address(i)) as GrpcSubchannelHandle;
    handle.watchConnectivity((s) => heard.push(`${i} ${s}`));
    handle.requestConnection();
    return handle;
  });
  assert.equal(grpc.created.length, 100, 'the first 100 at once');
  assert.equal(handles[99]!.attached, true);
  assert.equal(handles[100]!.attached, false);
  assert.equal(handles[100]!.state, 'IDLE', 'a handle still waiting for its subchannel is IDLE');
  assert.equal(grpc.channelz.size, 100);
  await nextTurn();
  assert.equal(grpc.created.length, 200, 'the next 100 in the next turn');
  await nextTurn();
  assert.equal(grpc.created.length, 250);
  assert.deepEqual(
    grpc.created.map((c) => c.address),
    handles.map((_, i) => `${address(i).host}:80`),
    'created in the order asked for',
  );
  assert.equal(grpc.channelz.size, 250);
  // Each waiting handle's watcher is on its grpc-js subchannel now, and its connection request was passed on.
  const sub = handles[180]!.grpc as unknown as ReturnType<typeof fakeGrpcSubchannel>;
  assert.equal(sub.stateListeners.size, 1);
  sub.emit(connectivityState.CONNECTING);
  assert.deepEqual(heard, ['180 CONNECTING']);
  for (const h of handles) h.release();
  assert.equal(grpc.channelz.size, 0);
});

test('issue 25 §5: a waiting handle is created at once when its grpc-js subchannel is needed; one released while waiting is never created; a pooled subchannel already READY is reported', async () => {
  const grpc = fakeChannelHelper();
  const started: string[] = [];
  const create = grpc.createSubchannel.bind(grpc);
  grpc.createSubchannel = (a, options) => {
    const sub = create(a, options);
    // grpc-js's pool can hand back a subchannel another channel already connected.
    if (a.host === '10.9.9.9') sub.state = connectivityState.READY;
    sub.startConnecting = () => started.push(a.host);
    return sub;
  };
  const helper = new GrpcHelperAdapter(grpc as never, 'test');
  for (let i = 0; i < SUBCHANNELS_PER_TURN; i++) helper.createSubchannel(address(i));
  const released = helper.createSubchannel({ host: '10.9.9.1', port: 80 });
  released.requestConnection();
  const needed = helper.createSubchannel({ host: '10.9.9.2', port: 80 }) as GrpcSubchannelHandle;
  const ready = helper.createSubchannel({ host: '10.9.9.9', port: 80 });
  const states: string[] = [];
  ready.watchConnectivity((s) => states.push(s));
  ready.requestConnection();
  assert.equal(grpc.created.length, SUBCHANNELS_PER_TURN);
  released.release();
  assert.equal(needed.grpc, needed.grpc, 'created on demand');
  assert.equal(grpc.created.length, SUBCHANNELS_PER_TURN + 1);
  assert.equal(grpc.created.at(-1)!.address, '10.9.9.2:80');
  await nextTurn();
  assert.deepEqual(
    grpc.created.slice(SUBCHANNELS_PER_TURN).map((c) => c.address),
    ['10.9.9.2:80', '10.9.9.9:80'],
    'the released one was never created',
  );
  assert.deepEqual(states, ['READY'], 'the state it already had is reported when it attaches');
  assert.deepEqual(started, ['10.9.9.9'], 'the connection request made while waiting is passed on');
  // A second handle on an address still waiting attaches with the first.
  for (let i = 0; i < SUBCHANNELS_PER_TURN; i++) helper.createSubchannel(address(1000 + i));
  const first = helper.createSubchannel({ host: '10.9.8.1', port: 80 }) as GrpcSubchannelHandle;
  const second = helper.createSubchannel({ host: '10.9.8.1', port: 80 }) as GrpcSubchannelHandle;
  assert.equal(first.attached || second.attached, false);
  await nextTurn();
  assert.equal(first.grpc, second.grpc);
});
