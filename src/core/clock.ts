/** Cancels a timer; calling it after the timer fired, or twice, is harmless. */
export type CancelTimer = () => void;

/** All time a policy sees. Policies never call setTimeout themselves, which makes them replayable in the sim. */
export interface Clock {
  /** Milliseconds on a monotonic scale. */
  now(): number;
  setTimer(delayMs: number, fn: () => void): CancelTimer;
}

/**
 * The wall clock. Timers are unref'd: a channel holding a 15-minute retention timer must not keep the
 * process alive after the application is done with it.
 */
export const realClock: Clock = {
  now: () => performance.now(),
  setTimer(delayMs, fn) {
    const handle = setTimeout(fn, Math.max(0, delayMs));
    handle.unref();
    return () => clearTimeout(handle);
  },
};
