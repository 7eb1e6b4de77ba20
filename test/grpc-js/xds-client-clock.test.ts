// The xDS client's clock on grpc-js (issue 25 §4): its zero-delay timers (the subscription flush that sends
// RDS after LDS, CDS after RDS, EDS after CDS; replays to new watchers) run in the loop's check phase, not a
// timers phase at least 1 ms later; other delays are real timers. Ordered against Node's own queues from
// inside an I/O callback, where that order is defined.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs';
import { test } from 'node:test';
import { xdsClientClock } from '../../src/grpc-js/xds-client-clock.js';

/**
 * Runs `fn` inside an I/O callback and resolves with what it recorded once `done` says so. The clock's timers
 * are unref'd (they keep no process alive), so a ref'd one holds the loop open meanwhile.
 */
function fromIoCallback(fn: (order: string[], done: () => void) => void): Promise<string[]> {
  const keepAlive = setInterval(() => {}, 60_000);
  return new Promise<string[]>((resolve) => {
    readFile(import.meta.filename, () => {
      const order: string[] = [];
      fn(order, () => resolve(order));
    });
  }).finally(() => clearInterval(keepAlive));
}

test('a zero-delay timer runs in the check phase: before a zero-delay setTimeout set earlier', async () => {
  const order = await fromIoCallback((order, done) => {
    setTimeout(() => {
      order.push('setTimeout 0');
      done();
    }, 0);
    xdsClientClock.setTimer(0, () => order.push('clock 0, first'));
    xdsClientClock.setTimer(-5, () => order.push('clock 0, second'));
  });
  assert.deepEqual(order, ['clock 0, first', 'clock 0, second', 'setTimeout 0']);
});

test('a positive delay is a real timer (after the check phase); a cancelled timer never runs', async () => {
  const order = await fromIoCallback((order, done) => {
    xdsClientClock.setTimer(1, () => {
      order.push('clock 1 ms');
      setImmediate(done);
    });
    const cancel = xdsClientClock.setTimer(0, () => order.push('cancelled'));
    setImmediate(() => order.push('setImmediate'));
    cancel();
  });
  assert.deepEqual(order, ['setImmediate', 'clock 1 ms']);
});

test('its now() is the real clock (monotonic milliseconds)', () => {
  const before = performance.now();
  const now = xdsClientClock.now();
  assert.ok(now >= before && now <= performance.now());
});
