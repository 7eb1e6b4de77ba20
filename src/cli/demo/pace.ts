import type { ChannelOptions } from '@grpc/grpc-js';

/**
 * How fast the demo plays. At human pace each of a scenario's phases lasts its share of `durationMs` (longer
 * when its outcome takes longer to show), so a person can watch them. At fast pace (`--fast`, for tests and CI) a phase ends as soon as its outcome has shown, and
 * channels retry a backend that came back after 100 ms instead of grpc-js's 1 s first backoff: the same
 * behaviour, compressed.
 */
export interface Pace {
  readonly fast: boolean;
  /** Human pace: the time all phases of a scenario share. */
  readonly durationMs: number;
  /** A phase whose outcome has not shown by then ends anyway (its expectations then tell). */
  readonly phaseLimitMs: number;
  /** The steady RPC load on a scenario's client. */
  readonly ratePerSecond: number;
  /** How often the view is drawn and the phase's outcome checked. */
  readonly tickMs: number;
  /** Options for the scenario's client channels. */
  readonly channelOptions: ChannelOptions;
}

export function humanPace(durationMs: number): Pace {
  return {
    fast: false,
    durationMs,
    phaseLimitMs: durationMs,
    ratePerSecond: 200,
    tickMs: 250,
    channelOptions: {},
  };
}

export const FAST_PACE: Pace = {
  fast: true,
  durationMs: 0,
  phaseLimitMs: 10_000,
  ratePerSecond: 500,
  tickMs: 20,
  channelOptions: { 'grpc.initial_reconnect_backoff_ms': 100, 'grpc.max_reconnect_backoff_ms': 400 },
};
