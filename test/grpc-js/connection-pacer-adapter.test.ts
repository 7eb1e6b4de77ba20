// Issue 25 §5 on the grpc-js adapter: pick_first's connection requests reach grpc-js (`startConnecting`) at most
// 100 per event-loop turn, the rest in the next turns (setImmediate), in order; a request whose pick_first is gone
// meanwhile is never made, and none is made on a subchannel in backoff (grpc-js would then connect by itself
// when the backoff ends, outside the pacer). The wave is A62's: subchannels that failed together go IDLE
// together when their backoffs end, and pick_first asks each to connect.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connectivityState, type experimental } from '@grpc/grpc-js';
import { NO_CHANNEL_ARGS, ok } from '../../src/core/index.js';
import { GrpcHelperAdapter } from '../../src/grpc-js/helper-adapter.js';
import { pickFirstFactory } from '../../src/policies/pick-first/pick-first.js';

/** A grpc-js subchannel that records `startConnecting` and whose state a test drives. */
function fakeGrpcSubchannel(name: string, started: string[]) {
  const listeners = new Set<experimental.ConnectivityStateListener>();
  const sub = {
    state: connectivityState.IDLE,
    getConnectivityState: () => sub.state,
    isHealthy: () => true,
    addConnectivityStateListener: (l: experimental.ConnectivityStateListener) => listeners.add(l),
    removeConnectivityStateListener: (l: experimental.ConnectivityStateListener) => listeners.delete(l),
    addHealthStateWatcher: () => {},
    removeHealthStateWatcher: () => {},
    ref: () => {},
    unref: () => {},
    startConnecting: () => started.push(name),
    getChannelzRef: () => ({ id: 0, name }),
    emit(next: connectivityState) {
      const previous = sub.state;
      sub.state = next;
      for (const l of [...listeners]) l(sub as never, previous, next, 0, 'connect ECONNREFUSED');
    },
  };
  return sub;
}

/** A grpc-js ChannelControlHelper whose subchannels are fakes. */
function fakeChannel() {
  const started: string[] = [];
  const subchannels = new Map<string, ReturnType<typeof fakeGrpcSubchannel>>();
  return {
    started,
    subchannels,
    createSubchannel(address: { host: string; port: number }) {
      const name = `${address.host}:${address.port}`;
      const sub = fakeGrpcSubchannel(name, started);
      subchannels.set(name, sub);
      return sub;
    },
    addChannelzChild: () => {},
    removeChannelzChild: () => {},
    updateState: () => {},
    requestReresolution: () => {},
  };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('250 pick_first policies whose subchannels go IDLE in one turn after failing (A62): 100 connect in it, then 100 and 50', async () => {
  const channel = fakeChannel();
  const helper = new GrpcHelperAdapter(channel as never, 'test');
  const config = pickFirstFactory.parseConfig({}, 'pick_first', undefined as never);
  const names = Array.from({ length: 250 }, (_, i) => `10.1.${i >> 8}.${i & 255}:80`);
  const policies = names.map((name) => {
    const policy = pickFirstFactory.create(helper, undefined as never);
    const [host, port] = name.split(':');
    policy.update({
      endpoints: ok([{ addresses: [{ host: host!, port: Number(port) }] }]) as never,
      config,
      attributes: NO_CHANNEL_ARGS,
    });
    return policy;
  });
  // The first pass (A61): 100 requests now; the adapter made 100 grpc-js subchannels this turn, the rest follow.
  assert.deepEqual(channel.started, names.slice(0, 100));
  await nextTurn();
  await nextTurn();
  await nextTurn();
  assert.deepEqual(channel.started, names);

  // Every attempt fails, then every backoff ends in the same turn (the timers phase): each goes IDLE.
  channel.started.length = 0;
  for (const name of names) channel.subchannels.get(name)!.emit(connectivityState.CONNECTING);
  for (const name of names) channel.subchannels.get(name)!.emit(connectivityState.TRANSIENT_FAILURE);
  await nextTurn();
  assert.deepEqual(channel.started, [], 'no request while in backoff');
  for (const name of names) channel.subchannels.get(name)!.emit(connectivityState.IDLE);
  assert.deepEqual(channel.started, names.slice(0, 100));
  // A waiting request whose policy is gone is not made; one whose subchannel left IDLE meanwhile is not either.
  policies[120]!.destroy();
  channel.subchannels.get(names[130]!)!.emit(connectivityState.CONNECTING);
  await nextTurn();
  const expected = names.slice(0, 202).filter((n) => n !== names[120] && n !== names[130]);
  assert.deepEqual(channel.started, expected);
  await nextTurn();
  assert.deepEqual(
    channel.started,
    names.filter((n) => n !== names[120] && n !== names[130]),
  );
  assert.equal(helper.connectionPacer.waiting, 0);
});

test('requests spread over turns each within the budget are all made at once', async () => {
  const channel = fakeChannel();
  const helper = new GrpcHelperAdapter(channel as never, 'test');
  const made: number[] = [];
  for (let turn = 0; turn < 3; turn++) {
    for (let i = 0; i < 100; i++) helper.connectionPacer.request({ connectPaced: () => made.push(turn) > 0 });
    assert.equal(made.length, 100 * (turn + 1), `turn ${turn}: all 100 at once`);
    await nextTurn();
  }
  helper.connectionPacer.request({ connectPaced: () => made.push(3) > 0 });
  helper.connectionPacer.request({ connectPaced: () => false });
  assert.equal(made.length, 301);
});

test('a connection requested before its grpc-js subchannel exists is not passed on if that pooled subchannel is in backoff', async () => {
  const channel = fakeChannel();
  const create = channel.createSubchannel.bind(channel);
  channel.createSubchannel = (address) => {
    const sub = create(address);
    // grpc-js's pool hands back a subchannel another channel's attempt just failed on.
    if (address.host === '10.2.0.1') sub.state = connectivityState.TRANSIENT_FAILURE;
    return sub;
  };
  const helper = new GrpcHelperAdapter(channel as never, 'test');
  // The adapter creates 100 grpc-js subchannels per turn: these two wait for the next turn.
  for (let i = 0; i < 100; i++) helper.createSubchannel({ host: `10.3.0.${i}`, port: 80 });
  const inBackoff = helper.createSubchannel({ host: '10.2.0.1', port: 80 });
  const idle = helper.createSubchannel({ host: '10.2.0.2', port: 80 });
  const states: string[] = [];
  inBackoff.watchConnectivity((s) => states.push(s));
  inBackoff.requestConnection();
  idle.requestConnection();
  await nextTurn();
  assert.deepEqual(states, ['TRANSIENT_FAILURE'], 'its state is reported when it attaches');
  assert.deepEqual(channel.started, ['10.2.0.2:80']);
});
