import {
  type HistogramInstrument,
  type MetricLabels,
  type MetricsRecorder,
  registerInstrument,
  TARGET_LABEL,
} from '../core/index.js';

// gRFC A96's per-call retry metrics, recorded at the end of a call through a per-call tracer (A66's
// CallTracer). Experimental, so off by default (A79).

/** A66: the full method name, `package.Service/Method`. */
export const METHOD_LABEL = 'grpc.method';

/** A66's latency buckets, in seconds; A96 recommends them for `grpc.client.call.retry_delay`. */
export const LATENCY_BUCKETS: readonly number[] = Object.freeze([
  0, 0.00001, 0.00005, 0.0001, 0.0003, 0.0006, 0.0008, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.008, 0.01,
  0.013, 0.016, 0.02, 0.025, 0.03, 0.04, 0.05, 0.065, 0.08, 0.1, 0.13, 0.16, 0.2, 0.25, 0.3, 0.4, 0.5, 0.65,
  0.8, 1, 2, 5, 10, 20, 50, 100,
]);

const LABELS = [METHOD_LABEL, TARGET_LABEL];

export const CALL_RETRIES = registerInstrument({
  name: 'grpc.client.call.retries',
  description: 'Number of retries during the client call. If there were no retries, 0 is not reported.',
  unit: '{retry}',
  type: 'histogram',
  labels: LABELS,
  optionalLabels: [],
  enabledByDefault: false,
  bucketBoundaries: [1, 2, 3, 4, 5],
});
export const CALL_TRANSPARENT_RETRIES = registerInstrument({
  name: 'grpc.client.call.transparent_retries',
  description:
    'Number of transparent retries during the client call. If there were no transparent retries, 0 is not reported.',
  unit: '{transparent_retry}',
  type: 'histogram',
  labels: LABELS,
  optionalLabels: [],
  enabledByDefault: false,
  bucketBoundaries: [1, 2, 3, 4, 5, 10],
});
export const CALL_HEDGES = registerInstrument({
  name: 'grpc.client.call.hedges',
  description: 'Number of hedges during the client call. If there were no hedges, 0 is not reported.',
  unit: '{hedge}',
  type: 'histogram',
  labels: LABELS,
  optionalLabels: [],
  enabledByDefault: false,
  bucketBoundaries: [1, 2, 3, 4, 5],
});
export const CALL_RETRY_DELAY = registerInstrument({
  name: 'grpc.client.call.retry_delay',
  description: 'Total time of delay while there is no active attempt during the client call.',
  unit: 's',
  type: 'histogram',
  labels: LABELS,
  optionalLabels: [],
  enabledByDefault: false,
  bucketBoundaries: LATENCY_BUCKETS,
});

const INSTRUMENTS: readonly HistogramInstrument[] = [
  CALL_RETRIES,
  CALL_TRANSPARENT_RETRIES,
  CALL_HEDGES,
  CALL_RETRY_DELAY,
];

/** Whether `recorder` records any of A96's metrics: only then does a call get a tracer. */
export function recordsCallRetries(recorder: MetricsRecorder | undefined): recorder is MetricsRecorder {
  if (recorder === undefined) return false;
  for (const instrument of INSTRUMENTS) if (recorder.isEnabled(instrument)) return true;
  return false;
}

/** What kind of attempt a new one is. */
type AttemptKind = 'first' | 'retry' | 'hedge' | 'transparent';

const PICKING = 0;
const CREATING = 1;
const STREAMING = 2;
const ENDED = 3;
type AttemptState = typeof PICKING | typeof CREATING | typeof STREAMING | typeof ENDED;

/**
 * One attempt of a call as its picks see it: picking (possibly queued, picked again), creating its stream (the
 * transport was asked for the picked connection), streaming, ended. Fed by the channel's picker adapter.
 */
export class CallAttempt {
  /** @internal */ state: AttemptState = PICKING;

  constructor(
    private readonly call: CallRetryTracer | null,
    /** The attempt's `grpc-previous-rpc-attempts`: 0 for the first attempt and its transparent retries. */
    readonly previousAttempts: number,
  ) {}

  /** Its pick completed and the stream is about to be created on the picked connection. */
  creatingStream(): void {
    if (this.state === PICKING) this.state = CREATING;
  }

  streamStarted(): void {
    if (this.state !== ENDED) this.state = STREAMING;
  }

  /** The attempt is over: its stream ended, or its pick failed it. */
  ended(): void {
    if (this.state === ENDED) return;
    this.state = ENDED;
    this.call?.attemptEnded(false);
  }

  /**
   * The attempt's stream ended OK. No attempt of the call follows one that succeeded (a retry or hedging policy
   * commits the call to it), so no time without an active attempt can follow either: its end time is not read.
   */
  succeeded(): void {
    if (this.state === ENDED) return;
    this.state = ENDED;
    this.call?.attemptEnded(true);
  }
}

/** The attempt of a pick made after its call ended (none is expected): tracked by nothing. */
const UNTRACKED = new CallAttempt(null, 0);

/**
 * A96's tracer of one call (A66's CallTracer): told of each pick of each of the call's attempts and of the
 * call's end, it tells the attempts apart, counts retries, hedges and transparent retries, adds up the time
 * during which no attempt was active, and records the four histograms when the call ends — a count only when
 * it is not 0, and the delay only when the call had more than one attempt.
 *
 * Attempts are told apart by what a pick carries: the number of earlier attempts (`grpc-previous-rpc-attempts`,
 * which retries and hedges raise and a transparent retry keeps). A pick whose number is the highest so far
 * belongs to the newest attempt with that number while that attempt is still picking (a queued pick picked
 * again); it starts a transparent retry when an attempt was creating its stream (it could not be created) or
 * that attempt already had its stream (a stream was refused). See docs/metrics.md for what this leaves unseen.
 */
export class CallRetryTracer {
  /** Whether the call's policy is a hedging policy (it raises attempts by hedging, not by retrying). */
  hedging = false;
  /** How many attempts the call started; the first is `first`, the others are in `later` (most calls have none). */
  private attemptCount = 0;
  private first: CallAttempt | undefined;
  private later: CallAttempt[] | undefined;
  private maxPrevious = 0;
  private retries = 0;
  private hedges = 0;
  private transparentRetries = 0;
  private active = 0;
  private lastEnd = 0;
  private delayMs = 0;
  private done = false;

  constructor(
    private readonly recorder: MetricsRecorder,
    private readonly labels: MetricLabels,
    private readonly now: () => number,
  ) {}

  /** Whether the call's first attempt started (a pick of the call was seen). */
  get started(): boolean {
    return this.attemptCount > 0;
  }

  /** The attempt a pick carrying `previousAttempts` belongs to (a new one when it starts one). */
  attemptFor(previousAttempts: number): CallAttempt {
    if (this.done) return UNTRACKED;
    if (this.attemptCount === 0) {
      this.maxPrevious = previousAttempts;
      return this.start(previousAttempts, 'first');
    }
    if (previousAttempts > this.maxPrevious) {
      this.maxPrevious = previousAttempts;
      return this.start(previousAttempts, this.hedging ? 'hedge' : 'retry');
    }
    // A creating attempt at a pick failed to create its stream: grpc-js creates it synchronously.
    let creating: CallAttempt | undefined;
    let newest: CallAttempt | undefined;
    for (let i = this.attemptCount - 1; i >= 0; i--) {
      const attempt = i === 0 ? this.first! : this.later![i - 1]!;
      if (attempt.state === CREATING) creating ??= attempt;
      if (newest === undefined && attempt.previousAttempts === previousAttempts) newest = attempt;
    }
    if (creating !== undefined) {
      creating.ended();
      return this.start(previousAttempts, 'transparent');
    }
    if (newest !== undefined && newest.state === PICKING) return newest;
    // A stream was refused: grpc-js starts the transparent retry before it reports the refused attempt's end
    // (under a hedging policy the refused attempt may be an older one than `newest`, still streaming).
    return this.start(previousAttempts, 'transparent');
  }

  private start(previousAttempts: number, kind: AttemptKind): CallAttempt {
    if (kind === 'retry') this.retries++;
    else if (kind === 'hedge') this.hedges++;
    else if (kind === 'transparent') this.transparentRetries++;
    if (this.active === 0 && this.attemptCount > 0) this.delayMs += this.now() - this.lastEnd;
    this.active++;
    const attempt = new CallAttempt(this, previousAttempts);
    if (this.attemptCount === 0) this.first = attempt;
    else if (this.later === undefined) this.later = [attempt];
    else this.later.push(attempt);
    this.attemptCount++;
    return attempt;
  }

  /** @internal `last`: the call has no attempt after this one (see {@link CallAttempt.succeeded}). */
  attemptEnded(last: boolean): void {
    this.active--;
    if (this.active === 0 && !last) this.lastEnd = this.now();
  }

  /** The call is over: records its metrics (once). */
  callEnded(): void {
    if (this.done) return;
    this.done = true;
    const { recorder, labels } = this;
    if (this.retries > 0) recorder.recordHistogram(CALL_RETRIES, this.retries, labels);
    if (this.hedges > 0) recorder.recordHistogram(CALL_HEDGES, this.hedges, labels);
    if (this.transparentRetries > 0) {
      recorder.recordHistogram(CALL_TRANSPARENT_RETRIES, this.transparentRetries, labels);
    }
    if (this.attemptCount > 1) recorder.recordHistogram(CALL_RETRY_DELAY, this.delayMs / 1000, labels);
  }
}

/** At most this many methods keep a labels object per channel; further ones get a fresh one per call. */
const MAX_CACHED_METHODS = 1000;

/** A class of tracers: {@link CallRetryTracer} or one that adds what a channel needs of the call's object. */
export type CallRetryTracerClass<T extends CallRetryTracer> = new (
  recorder: MetricsRecorder,
  labels: MetricLabels,
  now: () => number,
) => T;

/**
 * Makes the tracers of one channel's calls: one labels object per method, so the plugin's attribute cache
 * serves every call of a method.
 */
export class CallRetryTracers<T extends CallRetryTracer = CallRetryTracer> {
  private readonly labelsByMethod = new Map<string, MetricLabels>();

  constructor(
    readonly recorder: MetricsRecorder,
    private readonly now: () => number = () => performance.now(),
    private readonly Tracer: CallRetryTracerClass<T> = CallRetryTracer as CallRetryTracerClass<T>,
  ) {}

  /** A tracer for a call of `method` as grpc-js names it (`/package.Service/Method`). */
  forCall(method: string): T {
    return new this.Tracer(this.recorder, this.labels(method), this.now);
  }

  private labels(method: string): MetricLabels {
    let labels = this.labelsByMethod.get(method);
    if (labels === undefined) {
      labels = Object.freeze({ [METHOD_LABEL]: method.startsWith('/') ? method.slice(1) : method });
      if (this.labelsByMethod.size < MAX_CACHED_METHODS) this.labelsByMethod.set(method, labels);
    }
    return labels;
  }
}
