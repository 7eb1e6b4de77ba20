import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// `npm run bench` runs without --expose-gc; the flag set at run time exposes gc() to contexts made after it.
setFlagsFromString('--expose-gc');

/**
 * A full collection, for reading the heap a structure holds. Never call it right before a timed run: a forced
 * collection discards V8's optimised code, and the next run then measures the JIT warming up again (a
 * 10,000-endpoint storm read 4-5x slower, with 450 deoptimisations against 58).
 */
export const gc = runInNewContext('gc') as () => void;
