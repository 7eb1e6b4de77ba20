// The flight recorder on lbtree's grpc-js root policy: what one channel's tree is given (its update, with the
// channel settings), its connections' states, the pickers it publishes and its calls, per channel option or
// for every channel (register({ recorder })); the recorder never reaches grpc-js's subchannels.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ChannelOptions, connectivityState, experimental, Metadata } from '@grpc/grpc-js';
import {
  FLIGHT_RECORDER_OPTION,
  FlightRecorder,
  readRecording,
  recordedChannels,
  register,
} from '../../src/grpc-js/index.js';

type Listener = experimental.ConnectivityStateListener;

/** A grpc-js subchannel the test moves between states by hand. */
function fakeSubchannel(): experimental.SubchannelInterface & { moveTo(s: connectivityState): void } {
  let state = connectivityState.IDLE;
  const listeners = new Set<Listener>();
  const fake = {
    getConnectivityState: () => state,
    addConnectivityStateListener: (l: Listener) => listeners.add(l),
    removeConnectivityStateListener: (l: Listener) => listeners.delete(l),
    startConnecting: () => {},
    isHealthy: () => true,
    addHealthStateWatcher: () => {},
    removeHealthStateWatcher: () => {},
    ref: () => {},
    unref: () => {},
    getChannelzRef: () => ({}),
    getRealSubchannel: () => fake,
    moveTo(next: connectivityState) {
      const previous = state;
      state = next;
      for (const l of [...listeners]) l(fake as never, previous, next, 0);
    },
  };
  return fake as never;
}

function channel(options: ChannelOptions) {
  const created: { options: ChannelOptions; subchannel: ReturnType<typeof fakeSubchannel> }[] = [];
  let picker: experimental.Picker | null = null;
  const helper: experimental.ChannelControlHelper = {
    createSubchannel: (_address, subchannelOptions) => {
      const subchannel = fakeSubchannel();
      created.push({ options: subchannelOptions, subchannel });
      return subchannel;
    },
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
    options,
    '',
  );
  return {
    created,
    root,
    pick: () =>
      picker!.pick({ metadata: new Metadata(), extraPickInfo: {} }) as experimental.PickResult & {
        onCallEnded: ((code: number, details: string, trailers: Metadata) => void) | null;
      },
  };
}

test('a channel with its own recorder records its update, connection states, pickers, picks and call outcomes', () => {
  register();
  const recorder = new FlightRecorder({ label: 'endpoints:a;b' });
  const c = channel({ 'grpc.keepalive_time_ms': 10_000, [FLIGHT_RECORDER_OPTION]: recorder });
  // The recorder stays with the root: grpc-js's subchannels never see it.
  assert.equal(c.created.length, 2);
  for (const { options } of c.created) assert.equal(FLIGHT_RECORDER_OPTION in options, false);
  for (const { subchannel } of c.created) {
    subchannel.moveTo(connectivityState.CONNECTING);
    subchannel.moveTo(connectivityState.READY);
  }
  const first = c.pick();
  assert.equal(first.pickResultType, experimental.PickResultType.COMPLETE);
  first.onCallEnded?.(0, '', new Metadata());
  const second = c.pick();
  second.onCallEnded?.(13, 'backend error', new Metadata());
  assert.equal(c.pick(), first, 'one result object per endpoint: nothing allocated per pick');
  c.created[0]!.subchannel.moveTo(connectivityState.TRANSIENT_FAILURE);

  const recording = readRecording(recorder.export());
  assert.equal(recording.header.label, 'endpoints:a;b');
  const [update] = recording.events;
  assert.deepEqual(update, {
    type: 'update',
    at: update!.at,
    config: { lbtree_round_robin: {} },
    endpoints: [{ addresses: ['10.0.0.1:80'] }, { addresses: ['10.0.0.2:80'] }],
    settings: { 'grpc.keepalive_time_ms': 10_000 },
  });
  const states = recording.events.flatMap((e) =>
    e.type === 'subchannel' ? [`${e.address} ${e.state}`] : [],
  );
  assert.deepEqual(states.slice(0, 7), [
    '10.0.0.1:80 IDLE',
    '10.0.0.2:80 IDLE',
    '10.0.0.1:80 CONNECTING',
    '10.0.0.1:80 READY',
    '10.0.0.2:80 CONNECTING',
    '10.0.0.2:80 READY',
    '10.0.0.1:80 TRANSIENT_FAILURE',
  ]);
  const pickers = recording.events.flatMap((e) => (e.type === 'picker' ? [e.state] : []));
  assert.equal(pickers.at(-1), 'READY');
  assert.ok(pickers.includes('CONNECTING'));
  const calls = recording.events.filter((e) => e.type === 'calls');
  assert.equal(calls.length, 1);
  const byAddress = Object.fromEntries(calls[0]!.endpoints.map((e) => [e.address, e]));
  const picks = Object.values(byAddress).reduce((a, e) => a + e.picks, 0);
  const ended = Object.values(byAddress).reduce((a, e) => a + e.calls, 0);
  const errors = Object.values(byAddress).reduce((a, e) => a + e.errors, 0);
  assert.deepEqual([picks, ended, errors], [3, 2, 1]);
});

test('register({ recorder }) records every channel without a recorder of its own, except those that opt out', () => {
  register({ recorder: { maxEvents: 50 } });
  try {
    const before = recordedChannels().length;
    const recorded = channel({});
    const optedOut = channel({ [FLIGHT_RECORDER_OPTION]: false });
    const listed = recordedChannels();
    assert.equal(listed.length, before + 1);
    const entry = listed.at(-1)!;
    assert.equal(entry.recorder.maxEvents, 50);
    assert.match(entry.export(), /"type":"update"/);
    assert.equal(optedOut.created.length, 2);
    // A channel's root going away takes its recording off the list.
    recorded.root.destroy();
    assert.equal(recordedChannels().length, before);
  } finally {
    register({ recorder: false });
  }
  const after = recordedChannels().length;
  channel({});
  assert.equal(recordedChannels().length, after, 'off again');
});
