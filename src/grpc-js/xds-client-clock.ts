import { type Clock, realClock } from '../core/index.js';

/**
 * The clock of the xDS clients lbtree runs on grpc-js. A zero-delay timer (the flush that coalesces one turn's
 * subscription changes into one request per type, a cached resource replayed to a new watcher) runs in the
 * loop's next check phase (setImmediate): a zero-delay setTimeout waits at least 1 ms, until the timers phase
 * of the next iteration, and each of LDS → RDS → CDS → EDS on a channel's way to its first call waited for one
 * (issue 25 §4). Zero-delay timers keep their order among themselves (both queues are first in, first out);
 * the others are the real clock's. Unref'd like the real clock's timers.
 */
export const xdsClientClock: Clock = {
  now: () => realClock.now(),
  setTimer(delayMs, fn) {
    if (delayMs > 0) return realClock.setTimer(delayMs, fn);
    const handle = setImmediate(fn);
    handle.unref();
    return () => clearImmediate(handle);
  },
};
