// lbtree's handle on a grpc-js subchannel: its watchers share one grpc-js listener (a channel holds a handle
// per endpoint, so per-watch grpc-js listeners cost memory per endpoint), and the A61 listener contract holds:
// a removed watch hears nothing more, a released handle nothing at all, and grpc-js's registrations go away.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connectivityState, type experimental } from '@grpc/grpc-js';
import type { ConnectivityState } from '../../src/core/index.js';
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
const owner = { handleReleased: (h: GrpcSubchannelHandle) => released.push(h) };

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

test('a handle that owns nothing (a grpc-js policy picked it) takes and gives back no ref', () => {
  const grpc = fakeGrpcSubchannel();
  const handle = new GrpcSubchannelHandle({ host: '10.0.0.4', port: 80 }, grpc as never, null);
  handle.release();
  assert.equal(grpc.refs, 0);
  assert.equal(handle.completeResult, handle.completeResult, 'the complete result is built once');
});
