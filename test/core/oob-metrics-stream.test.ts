import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type BackendMetricReport,
  Code,
  completeBackendMetricReport,
  OobMetricsStream,
  type OrcaStreamHandlers,
  status,
} from '../../src/core/index.js';
import { VirtualClock } from '../../src/sim/index.js';

/** A scripted transport: records each call it is asked to open, and lets the test answer it. */
class Calls {
  readonly opened: { periodMs: number; handlers: OrcaStreamHandlers; cancelled: boolean }[] = [];
  readonly open = (periodMs: number, handlers: OrcaStreamHandlers) => {
    const call = { periodMs, handlers, cancelled: false };
    this.opened.push(call);
    return () => {
      call.cancelled = true;
    };
  };
  get last() {
    return this.opened[this.opened.length - 1]!;
  }
  get live(): number {
    return this.opened.filter((c) => !c.cancelled).length;
  }
}

const REPORT = completeBackendMetricReport({ applicationUtilization: 0.5, rpsFractional: 10 });

function setup() {
  const clock = new VirtualClock();
  const calls = new Calls();
  const logs: string[] = [];
  const stream = new OobMetricsStream(
    calls.open,
    clock,
    (m) => logs.push(m),
    () => 0.5,
  );
  return { clock, calls, logs, stream };
}

describe('OobMetricsStream (A51 "Out of Band Metrics Reporting", client side)', () => {
  test('A51: one call per connection, shared by every watcher, at the smallest requested interval', () => {
    const { calls, stream } = setup();
    const a: BackendMetricReport[] = [];
    const b: BackendMetricReport[] = [];
    const stopA = stream.watch(5_000, (r) => a.push(r));
    assert.equal(calls.opened.length, 0, 'nothing opens before the connection is READY');
    stream.setReady(true);
    assert.deepEqual(
      calls.opened.map((c) => c.periodMs),
      [5_000],
    );
    const stopB = stream.watch(1_000, (r) => b.push(r));
    // A51: a new interval means cancelling and restarting the call.
    assert.deepEqual(
      calls.opened.map((c) => c.periodMs),
      [5_000, 1_000],
    );
    assert.equal(calls.live, 1);
    calls.last.handlers.report(REPORT);
    assert.equal(a.length, 1);
    assert.equal(b.length, 1);
    stopB();
    assert.deepEqual(
      calls.opened.map((c) => c.periodMs),
      [5_000, 1_000, 5_000],
    );
    stopA();
    assert.equal(calls.live, 0, 'the call closes with the last watcher');
  });

  test('A51: the call closes when the connection leaves READY and reopens on the next connection', () => {
    const { calls, stream } = setup();
    stream.watch(1_000, () => {});
    stream.setReady(true);
    stream.setReady(false);
    assert.equal(calls.live, 0);
    stream.setReady(true);
    assert.equal(calls.opened.length, 2);
    assert.equal(calls.live, 1);
  });

  test('A51: a failed call is retried with exponential backoff, at once after a call that delivered a report', () => {
    const { clock, calls, stream } = setup();
    stream.watch(1_000, () => {});
    stream.setReady(true);
    calls.last.handlers.end(status(Code.UNAVAILABLE, 'reset'));
    clock.advance(999);
    assert.equal(calls.opened.length, 1, 'waits out the first backoff (1 s)');
    clock.advance(1);
    assert.equal(calls.opened.length, 2);
    calls.last.handlers.end(status(Code.UNAVAILABLE, 'reset'));
    clock.advance(1_599);
    assert.equal(calls.opened.length, 2, 'the second backoff is 1.6 s');
    clock.advance(1);
    assert.equal(calls.opened.length, 3);
    // A report resets the backoff: the next attempt is immediate.
    calls.last.handlers.report(REPORT);
    calls.last.handlers.end(status(Code.INTERNAL, 'oops'));
    clock.advance(0);
    assert.equal(calls.opened.length, 4);
    // …and the one after that waits the initial backoff again.
    calls.last.handlers.end(status(Code.INTERNAL, 'oops'));
    clock.advance(999);
    assert.equal(calls.opened.length, 4);
    clock.advance(1);
    assert.equal(calls.opened.length, 5);
  });

  test('A51: UNIMPLEMENTED is not retried on that connection, and is logged', () => {
    const { clock, calls, logs, stream } = setup();
    stream.watch(1_000, () => {});
    stream.setReady(true);
    calls.last.handlers.end(status(Code.UNIMPLEMENTED, 'unknown service'));
    clock.advance(600_000);
    assert.equal(calls.opened.length, 1);
    assert.ok(
      logs.some((l) => /not implemented/.test(l)),
      logs.join('\n'),
    );
    // A new connection may be to a server that has it.
    stream.setReady(false);
    stream.setReady(true);
    assert.equal(calls.opened.length, 2);
  });

  test('events of a cancelled call are ignored', () => {
    const { clock, calls, stream } = setup();
    const got: BackendMetricReport[] = [];
    const stop = stream.watch(1_000, (r) => got.push(r));
    stream.setReady(true);
    const first = calls.last;
    stop();
    first.handlers.report(REPORT);
    first.handlers.end(status(Code.CANCELLED, 'cancelled'));
    clock.advance(10_000);
    assert.equal(got.length, 0);
    assert.equal(calls.opened.length, 1);
  });
});
