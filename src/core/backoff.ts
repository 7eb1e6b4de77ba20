// gRPC connection backoff (doc/connection-backoff.md), which gRFC A57 asks the ADS stream retries to follow.

export interface BackoffOptions {
  readonly initialMs?: number;
  readonly multiplier?: number;
  /** Each delay is scaled by a uniform factor in [1 - jitter, 1 + jitter]. */
  readonly jitter?: number;
  readonly maxMs?: number;
  /** Uniform in [0, 1); injectable so that tests see exact delays. */
  readonly random?: () => number;
}

export const BACKOFF_INITIAL_MS = 1_000;
export const BACKOFF_MULTIPLIER = 1.6;
export const BACKOFF_JITTER = 0.2;
export const BACKOFF_MAX_MS = 120_000;

/** Successive retry delays: 1 s, 1.6 s, 2.56 s, … capped at 120 s, each jittered by ±20 %. */
export class ExponentialBackoff {
  private readonly initialMs: number;
  private readonly multiplier: number;
  private readonly jitter: number;
  private readonly maxMs: number;
  private readonly random: () => number;
  private currentMs: number;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? BACKOFF_INITIAL_MS;
    this.multiplier = options.multiplier ?? BACKOFF_MULTIPLIER;
    this.jitter = options.jitter ?? BACKOFF_JITTER;
    this.maxMs = options.maxMs ?? BACKOFF_MAX_MS;
    this.random = options.random ?? Math.random;
    this.currentMs = this.initialMs;
  }

  /** The delay before the next attempt; each call grows the base delay for the one after. */
  next(): number {
    const delay = this.currentMs * (1 + this.jitter * (2 * this.random() - 1));
    this.currentMs = Math.min(this.currentMs * this.multiplier, this.maxMs);
    return delay;
  }

  /** Back to the initial delay (A57: once a stream attempt receives a response). */
  reset(): void {
    this.currentMs = this.initialMs;
  }
}
