// One registry of the channels lbtree runs (issue 24 §2/§3): the live view and the flight recorder read the
// same entries. A recorded channel is listed once, with its recorder and a downloadable recording; a channel
// whose root is destroyed (closed) or collected leaves the live view and recordedChannels() alike.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type ChannelOptions, connectivityState, experimental, Metadata } from '@grpc/grpc-js';
import { startAdminServer } from '../../src/admin/index.js';
import { CHANNEL_TARGET_OPTION } from '../../src/grpc-js/channel-registry.js';
import {
  FLIGHT_RECORDER_OPTION,
  FlightRecorder,
  liveChannels,
  readRecording,
  recordedChannels,
  register,
} from '../../src/grpc-js/index.js';

type Listener = experimental.ConnectivityStateListener;

/** A grpc-js subchannel that goes READY when asked to connect (or, `hangs`, CONNECTING for good). */
function fakeSubchannel(hangs = false): experimental.SubchannelInterface {
  let state = connectivityState.IDLE;
  const listeners = new Set<Listener>();
  const fake = {
    getConnectivityState: () => state,
    addConnectivityStateListener: (l: Listener) => listeners.add(l),
    removeConnectivityStateListener: (l: Listener) => listeners.delete(l),
    startConnecting: () => {
      const previous = state;
      state = hangs ? connectivityState.CONNECTING : connectivityState.READY;
      if (state !== previous) for (const l of [...listeners]) l(fake as never, previous, state, 0);
    },
    isHealthy: () => true,
    addHealthStateWatcher: () => {},
    removeHealthStateWatcher: () => {},
    ref: () => {},
    unref: () => {},
    getChannelzRef: () => ({}),
    getRealSubchannel: () => fake,
  };
  return fake as never;
}

/** A channel's root as grpc-js runs it (ChildLoadBalancerHandler over lbtree's round_robin), given one update. */
function rootOf(target: string, options: ChannelOptions): experimental.ChildLoadBalancerHandler {
  let picker: experimental.Picker | null = null;
  const helper: experimental.ChannelControlHelper = {
    createSubchannel: () => fakeSubchannel(),
    updateState: (_state, p) => {
      picker = p;
    },
    requestReresolution: () => {},
    addChannelzChild: () => {},
    removeChannelzChild: () => {},
  };
  const root = new experimental.ChildLoadBalancerHandler(helper);
  root.updateAddressList(
    experimental.statusOrFromValue([
      { addresses: [{ host: '10.0.0.1', port: 80 }] },
      { addresses: [{ host: '10.0.0.2', port: 80 }] },
    ]),
    experimental.parseLoadBalancingConfig({ lbtree_round_robin: {} }),
    { ...options, [CHANNEL_TARGET_OPTION]: target },
    '',
  );
  const result = picker!.pick({ metadata: new Metadata(), extraPickInfo: {} });
  result.onCallEnded?.(0, '', new Metadata());
  return root;
}

function get(port: number, path: string): Promise<{ status: number; body: string; type: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode!, body, type: String(res.headers['content-type']) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const listed = (target: string) => liveChannels.list().filter((c) => c.target === target);

test('a recorded channel appears once in the live view, its recording downloadable; closed, it leaves both lists', async () => {
  register();
  const recorder = new FlightRecorder({ label: 'endpoints:one-registry' });
  const root = rootOf('endpoints:one-registry', { [FLIGHT_RECORDER_OPTION]: recorder });
  const unrecorded = rootOf('endpoints:one-registry-unrecorded', {});
  const server = await startAdminServer({ port: 0 });
  try {
    const [entry] = listed('endpoints:one-registry');
    assert.equal(listed('endpoints:one-registry').length, 1);
    assert.equal(entry!.recorder, recorder, 'the entry carries its recorder');
    assert.equal(listed('endpoints:one-registry-unrecorded')[0]!.recorder, undefined);
    // recordedChannels() reads the same entries: this recorder once, under the channel's id.
    const recordings = recordedChannels().filter((r) => r.recorder === recorder);
    assert.deepEqual(
      recordings.map((r) => r.id),
      [Number(entry!.id)],
    );

    const list = JSON.parse((await get(server.port, '/channels.json')).body) as {
      channels: { id: string; target: string | null }[];
    };
    assert.deepEqual(
      list.channels.filter((c) => c.target === 'endpoints:one-registry').map((c) => c.id),
      [entry!.id],
    );
    const download = await get(server.port, `/channels/${entry!.id}/recording.lbrec`);
    assert.equal(download.status, 200);
    assert.match(download.type, /application\/x-ndjson/);
    const recording = readRecording(download.body);
    assert.equal(recording.header.label, 'endpoints:one-registry');
    assert.ok(recording.events.some((e) => e.type === 'calls'));

    root.destroy();
    assert.deepEqual(listed('endpoints:one-registry'), []);
    assert.deepEqual(
      recordedChannels().filter((r) => r.recorder === recorder),
      [],
    );
    assert.equal((await get(server.port, `/channels/${entry!.id}/recording.lbrec`)).status, 404);
  } finally {
    unrecorded.destroy();
    await server.close();
  }
});

test('a recorded channel dropped without close() leaves the live view and recordedChannels() when collected', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  register({ recorder: { maxEvents: 100 } });
  let id: string;
  try {
    // The root goes out of scope here; only the registry's weak reference is left.
    id = ((): string => {
      rootOf('endpoints:one-registry-dropped', {});
      const [entry] = listed('endpoints:one-registry-dropped');
      assert.ok(entry?.recorder, 'register({ recorder }) gave the channel a recorder');
      assert.equal(recordedChannels().filter((r) => r.id === Number(entry.id)).length, 1);
      return entry.id;
    })();
  } finally {
    register({ recorder: false });
  }
  // Collection is the condition waited for, a bounded number of times. A WeakRef read keeps its target for the
  // rest of the task, so each collection runs in a task of its own, with no read of the registry before it.
  const nextTask = () => new Promise((resolve) => setTimeout(resolve, 10));
  for (let i = 0; i < 100 && liveChannels.get(id) !== undefined; i++) {
    await nextTask();
    gc();
    await nextTask();
  }
  assert.deepEqual(listed('endpoints:one-registry-dropped'), []);
  assert.equal(liveChannels.get(id), undefined);
  assert.deepEqual(
    recordedChannels().filter((r) => r.id === Number(id)),
    [],
  );
});

test('a channel that goes idle leaves the list and comes back under the same id, its recording going on', () => {
  register();
  const recorder = new FlightRecorder({ label: 'endpoints:one-registry-idle' });
  const options = { [FLIGHT_RECORDER_OPTION]: recorder };
  // grpc-js's channel destroys its root when it goes idle and gives the same handler a new one when it leaves idle.
  const handler = rootOf('endpoints:one-registry-idle', options);
  const [entry] = listed('endpoints:one-registry-idle');
  assert.ok(entry);
  handler.destroy();
  assert.deepEqual(listed('endpoints:one-registry-idle'), []);
  handler.updateAddressList(
    experimental.statusOrFromValue([{ addresses: [{ host: '10.0.0.3', port: 80 }] }]),
    experimental.parseLoadBalancingConfig({ lbtree_round_robin: {} }),
    { ...options, [CHANNEL_TARGET_OPTION]: 'endpoints:one-registry-idle' },
    '',
  );
  try {
    assert.deepEqual(
      listed('endpoints:one-registry-idle').map((c) => c.id),
      [entry.id],
    );
    const updates = readRecording(recorder.export()).events.filter((e) => e.type === 'update');
    assert.equal(updates.length, 2, 'the updates before and after idle, in one recording');
  } finally {
    handler.destroy();
  }
});

test('a root switch: one entry, the pending tree while it connects; a channel closed mid-switch records no switch done', () => {
  register();
  const recorder = new FlightRecorder({ label: 'endpoints:one-registry-switch' });
  const options = {
    [FLIGHT_RECORDER_OPTION]: recorder,
    [CHANNEL_TARGET_OPTION]: 'endpoints:one-registry-switch',
  };
  const states: string[] = [];
  const handler = new experimental.ChildLoadBalancerHandler({
    createSubchannel: (address) => fakeSubchannel('host' in address && address.host === '10.0.0.9'),
    updateState: (state) => {
      states.push(connectivityState[state]);
    },
    requestReresolution: () => {},
    addChannelzChild: () => {},
    removeChannelzChild: () => {},
  });
  const update = (policy: string, host: string) =>
    handler.updateAddressList(
      experimental.statusOrFromValue([{ addresses: [{ host, port: 80 }] }]),
      experimental.parseLoadBalancingConfig({ [policy]: {} }),
      options,
      '',
    );
  const switches = () =>
    readRecording(recorder.export())
      .events.filter((e) => e.type === 'switch')
      .map((e) => (e.type === 'switch' ? `${e.from} -> ${e.to} ${e.phase}` : ''));
  update('lbtree_round_robin', '10.0.0.1');
  const [entry] = listed('endpoints:one-registry-switch');
  assert.ok(entry);
  assert.equal(states.at(-1), 'READY');

  // To pick_first on an address that stays CONNECTING: the round_robin root keeps serving.
  update('lbtree_pick_first', '10.0.0.9');
  assert.deepEqual(
    listed('endpoints:one-registry-switch').map((c) => c.id),
    [entry.id],
  );
  assert.match(entry.describe()?.policy ?? '', /round_robin/);
  assert.match(entry.describePending?.()?.policy ?? '', /pick_first/);
  assert.deepEqual(switches(), ['lbtree_round_robin -> lbtree_pick_first started']);
  // Then an address that connects: pick_first goes READY and grpc-js switches.
  update('lbtree_pick_first', '10.0.0.2');
  assert.match(entry.describe()?.policy ?? '', /pick_first/);
  assert.equal(entry.describePending?.(), undefined);
  assert.deepEqual(switches(), [
    'lbtree_round_robin -> lbtree_pick_first started',
    'lbtree_round_robin -> lbtree_pick_first done',
  ]);
  assert.equal(
    readRecording(recorder.export()).events.filter((e) => e.type === 'picker' && e.state === 'CONNECTING')
      .length,
    states.filter((s) => s === 'CONNECTING').length,
    'the pickers recorded are the ones grpc-js took',
  );

  // Back to round_robin on the hanging address, and the channel closes mid-switch: no switch is done.
  update('lbtree_round_robin', '10.0.0.9');
  assert.equal(switches().length, 3);
  handler.destroy();
  assert.deepEqual(switches(), [
    'lbtree_round_robin -> lbtree_pick_first started',
    'lbtree_round_robin -> lbtree_pick_first done',
    'lbtree_pick_first -> lbtree_round_robin started',
  ]);
  assert.deepEqual(listed('endpoints:one-registry-switch'), []);
});
