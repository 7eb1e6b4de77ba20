// A96 on grpc-js: what the picker adapter does with a tracked call's picks (load-balancing-call.js's sequence of
// pick, getRealSubchannel, onCallStarted, onCallEnded), and the call-end filter. No server: the pick results and
// metadata are grpc-js's types, driven by hand in the order grpc-js 1.14 calls them.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { experimental, Metadata, status } from '@grpc/grpc-js';
import { TrackedCall, trackAttempt } from '../../src/grpc-js/call-retry-tracking.js';
import { CallRetryTracers } from '../../src/metrics/index.js';
import { OtelMetrics } from '../support/otel-metrics.js';

const A96 = [
  'grpc.client.call.retries',
  'grpc.client.call.transparent_retries',
  'grpc.client.call.hedges',
  'grpc.client.call.retry_delay',
];

function setup() {
  const otel = new OtelMetrics();
  /** The tracers' clock: its time, and how often they read it. */
  const clock = { t: 0, reads: 0 };
  const now = () => {
    clock.reads++;
    return clock.t;
  };
  const tracers = new CallRetryTracers(otel.recorder('dns:///tracked', A96), now, TrackedCall);
  const tracer = tracers.forCall('/pkg.Echo/Say');
  const calls: string[] = [];
  const real = { name: 'the real subchannel' };
  const subchannel = {
    getAddress: () => '127.0.0.1:1',
    getRealSubchannel: () => real,
  } as unknown as experimental.SubchannelInterface;
  const complete: experimental.PickResult = {
    pickResultType: experimental.PickResultType.COMPLETE,
    subchannel,
    status: null,
    onCallStarted: () => calls.push('started'),
    onCallEnded: (code) => calls.push(`ended ${code}`),
  };
  const failed = (type: experimental.PickResultType): experimental.PickResult => ({
    pickResultType: type,
    subchannel: null,
    status: { code: status.UNAVAILABLE, details: 'no backend', metadata: new Metadata() },
    onCallStarted: null,
    onCallEnded: null,
  });
  /** An attempt's metadata: grpc-js adds grpc-previous-rpc-attempts from the first retry on. */
  const metadata = (previous: number, waitForReady = false) => {
    const m = new Metadata({ waitForReady });
    if (previous > 0) m.set('grpc-previous-rpc-attempts', String(previous));
    return m;
  };
  const values = async () => {
    const m = await otel.collect();
    return Object.fromEntries(A96.map((n) => [n, m.get(n)?.points[0]?.histogram?.sum]));
  };
  /** One attempt of `call` that picks, starts its stream and ends with `code`. */
  const streamed = (call: TrackedCall, previous: number, code: status) => {
    const result = trackAttempt(call, metadata(previous), complete);
    result.subchannel!.getRealSubchannel();
    result.onCallStarted!();
    result.onCallEnded!(code, code === status.OK ? 'OK' : 'x', new Metadata());
  };
  return { clock, tracers, tracer, calls, real, subchannel, complete, failed, metadata, values, streamed };
}

describe('A96 tracking of a call on grpc-js (picker adapter side)', () => {
  test('a complete pick keeps its subchannel and hooks (they still run), and learns of the stream from getRealSubchannel and onCallStarted', async () => {
    const s = setup();
    const result = trackAttempt(s.tracer, s.metadata(0), s.complete);
    assert.equal(result.pickResultType, experimental.PickResultType.COMPLETE);
    assert.equal(result.subchannel!.getAddress(), '127.0.0.1:1', 'the same subchannel in every respect');
    assert.equal(result.subchannel!.getRealSubchannel(), s.real);
    result.onCallStarted!();
    result.onCallEnded!(status.OK, 'OK', new Metadata());
    assert.deepEqual(s.calls, ['started', `ended ${status.OK}`]);
    s.tracer.callEnded();
    assert.deepEqual(await s.values(), {
      'grpc.client.call.retries': undefined,
      'grpc.client.call.transparent_retries': undefined,
      'grpc.client.call.hedges': undefined,
      'grpc.client.call.retry_delay': undefined,
    });
  });

  test('an attempt that ended OK reads no clock: no attempt follows a success (A96: no delay can follow it); one that failed reads it once, and the delay runs from it', async () => {
    const s = setup();
    const once = s.tracers.forCall('/pkg.Echo/Say');
    s.streamed(once, 0, status.OK);
    once.callEnded();
    assert.equal(s.clock.reads, 0, 'a call whose one attempt succeeded');

    const retried = s.tracers.forCall('/pkg.Echo/Say');
    s.clock.t = 10;
    s.streamed(retried, 0, status.UNAVAILABLE);
    assert.equal(s.clock.reads, 1, 'the failed attempt’s end');
    s.clock.t = 250;
    s.streamed(retried, 1, status.OK);
    retried.callEnded();
    assert.equal(s.clock.reads, 2, 'and the retry’s start, not its successful end');
    const delay = (await s.values())['grpc.client.call.retry_delay'];
    assert.ok(Math.abs(delay! - 0.24) < 1e-9, `${delay}`);
  });

  test('picked again because the subchannel was no longer ready (getRealSubchannel not called): the same attempt; after getRealSubchannel without a stream: a transparent retry', async () => {
    const s = setup();
    trackAttempt(s.tracer, s.metadata(0), s.complete);
    const again = trackAttempt(s.tracer, s.metadata(0), s.complete);
    again.subchannel!.getRealSubchannel(); // createCall throws next: grpc-js retries transparently at once
    const transparent = trackAttempt(s.tracer, s.metadata(0), s.complete);
    transparent.subchannel!.getRealSubchannel();
    transparent.onCallStarted!();
    transparent.onCallEnded!(status.OK, 'OK', new Metadata());
    s.tracer.callEnded();
    const v = await s.values();
    assert.equal(v['grpc.client.call.transparent_retries'], 1);
    assert.equal(v['grpc.client.call.retries'], undefined);
    assert.equal(v['grpc.client.call.retry_delay'], 0);
  });

  test('a failed pick ends a call that is not wait-for-ready (the delay runs from it); a wait-for-ready call keeps waiting in the same attempt', async () => {
    const s = setup();
    trackAttempt(s.tracer, s.metadata(0, true), s.failed(experimental.PickResultType.TRANSIENT_FAILURE));
    s.clock.t = 30;
    // Still the first attempt: picked again when a new picker comes; then it fails without waiting.
    const first = trackAttempt(s.tracer, s.metadata(0, true), s.complete);
    first.onCallStarted!();
    s.clock.t = 35;
    first.onCallEnded!(status.UNAVAILABLE, 'x', new Metadata());
    s.clock.t = 135;
    trackAttempt(s.tracer, s.metadata(1), s.failed(experimental.PickResultType.TRANSIENT_FAILURE));
    s.clock.t = 335;
    const third = trackAttempt(s.tracer, s.metadata(2), s.complete);
    third.onCallStarted!();
    third.onCallEnded!(status.OK, 'OK', new Metadata());
    s.tracer.callEnded();
    const v = await s.values();
    assert.equal(v['grpc.client.call.retries'], 2);
    assert.equal(v['grpc.client.call.transparent_retries'], undefined);
    assert.ok(
      Math.abs(v['grpc.client.call.retry_delay']! - 0.3) < 1e-9,
      `${v['grpc.client.call.retry_delay']}`,
    );
  });

  test("a call's first pick is its first attempt's without reading grpc-previous-rpc-attempts (grpc-js sends it from the first retry on); the picks after it read it", async () => {
    const s = setup();
    const reads: number[] = [];
    const counted = (m: Metadata) => {
      const get = m.get.bind(m);
      m.get = (key: string) => {
        if (key === 'grpc-previous-rpc-attempts') reads.push(reads.length);
        return get(key);
      };
      return m;
    };
    const first = trackAttempt(s.tracer, counted(s.metadata(0)), s.complete);
    assert.equal(reads.length, 0, 'the first pick reads no header');
    first.subchannel!.getRealSubchannel();
    first.onCallStarted!();
    first.onCallEnded!(status.UNAVAILABLE, 'x', new Metadata());
    s.clock.t = 100;
    const retry = trackAttempt(s.tracer, counted(s.metadata(1)), s.complete);
    assert.equal(reads.length, 1, 'a later pick reads it');
    retry.onCallStarted!();
    retry.onCallEnded!(status.OK, 'OK', new Metadata());
    s.tracer.callEnded();
    const v = await s.values();
    assert.equal(v['grpc.client.call.retries'], 1);
    assert.equal(v['grpc.client.call.transparent_retries'], undefined);
    assert.ok(
      Math.abs(v['grpc.client.call.retry_delay']! - 0.1) < 1e-9,
      `${v['grpc.client.call.retry_delay']}`,
    );
  });

  test('queue results pass through unchanged; a drop ends the attempt', () => {
    const s = setup();
    const queue: experimental.PickResult = { ...s.failed(experimental.PickResultType.QUEUE), status: null };
    assert.equal(trackAttempt(s.tracer, s.metadata(0), queue), queue);
    const drop = s.failed(experimental.PickResultType.DROP);
    assert.equal(trackAttempt(s.tracer, s.metadata(0), drop), drop);
  });

  test('the call-end filter ends the call once, passing its status through', async () => {
    const s = setup();
    trackAttempt(s.tracer, s.metadata(0), s.failed(experimental.PickResultType.TRANSIENT_FAILURE));
    s.clock.t = 50;
    trackAttempt(s.tracer, s.metadata(1), s.failed(experimental.PickResultType.TRANSIENT_FAILURE));
    const filter = s.tracer.createFilter();
    const ended = { code: status.UNAVAILABLE, details: 'no backend', metadata: new Metadata() };
    assert.equal(filter.receiveTrailers(ended), ended);
    filter.receiveTrailers(ended);
    const v = await s.values();
    assert.equal(v['grpc.client.call.retries'], 1);
    assert.ok(Math.abs(v['grpc.client.call.retry_delay']! - 0.05) < 1e-9);
  });

  test('the call-end filter passes metadata and messages through as they came (no promise of its own), and does nothing else before the trailers', async () => {
    const s = setup();
    trackAttempt(s.tracer, s.metadata(0), s.failed(experimental.PickResultType.TRANSIENT_FAILURE));
    s.clock.t = 50;
    trackAttempt(s.tracer, s.metadata(1), s.failed(experimental.PickResultType.TRANSIENT_FAILURE));
    const filter = s.tracer.createFilter();
    const metadata = Promise.resolve(new Metadata());
    const message = Promise.resolve({ message: Buffer.from('x') });
    const received = Promise.resolve(Buffer.from('y'));
    const headers = new Metadata();
    assert.equal(filter.sendMetadata(metadata), metadata);
    assert.equal(filter.sendMessage(message), message);
    assert.equal(filter.receiveMessage(received), received);
    assert.equal(filter.receiveMetadata(headers), headers);
    assert.equal((await s.values())['grpc.client.call.retries'], undefined, 'not ended before the trailers');
    filter.receiveTrailers({ code: status.OK, details: 'OK', metadata: new Metadata() });
    assert.equal((await s.values())['grpc.client.call.retries'], 1);
  });

  test("a complete pick's subchannel answers every SubchannelInterface method with the picked subchannel's own", () => {
    const s = setup();
    const seen: string[] = [];
    const methods = [
      'getConnectivityState',
      'addConnectivityStateListener',
      'removeConnectivityStateListener',
      'startConnecting',
      'getAddress',
      'throttleKeepalive',
      'ref',
      'unref',
      'getChannelzRef',
      'isHealthy',
      'addHealthStateWatcher',
      'removeHealthStateWatcher',
      'addDataWatcher',
      'realSubchannelEquals',
      'getCallCredentials',
      'getChannel',
    ] as const;
    const picked = Object.fromEntries(
      methods.map((name) => [
        name,
        (...args: unknown[]) => {
          seen.push(`${name}(${args.join()})`);
          return `${name} answer`;
        },
      ]),
    ) as unknown as experimental.SubchannelInterface;
    const result = trackAttempt(s.tracer, s.metadata(0), { ...s.complete, subchannel: picked });
    const view = result.subchannel as unknown as Record<string, (arg: unknown) => unknown>;
    const answering = new Set([
      'getConnectivityState',
      'getAddress',
      'getChannelzRef',
      'isHealthy',
      'realSubchannelEquals',
      'getCallCredentials',
      'getChannel',
    ]);
    for (const name of methods) {
      const answer = view[name]!('arg');
      if (answering.has(name)) assert.equal(answer, `${name} answer`, name);
    }
    const withArgument = new Set([
      'addConnectivityStateListener',
      'removeConnectivityStateListener',
      'throttleKeepalive',
      'addHealthStateWatcher',
      'removeHealthStateWatcher',
      'addDataWatcher',
      'realSubchannelEquals',
    ]);
    assert.deepEqual(
      seen,
      methods.map((name) => `${name}(${withArgument.has(name) ? 'arg' : ''})`),
    );
  });
});
