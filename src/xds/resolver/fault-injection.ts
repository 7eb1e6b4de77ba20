// A33's fault injection filter on the client, per call and independent of any transport: which config a route
// applies (A39: the most specific typed_per_filter_config override wins), whether a call is delayed and / or
// aborted (fixed values or the `x-envoy-fault-*` headers, each feature with its own random draw), the limit
// on active faults counted across the process, and the run of one fault on a clock: the delay first, then
// the abort, before the call sends anything. The grpc-js adapter only hands it the call's metadata and
// applies the outcome.

import { type CallMetadata, type CancelTimer, type Clock, Code, type Status } from '../../core/index.js';
import { grpcCodeOfHttpStatus, isHttpStatus } from '../resources/fault.js';
import type {
  XdsFaultFraction,
  XdsFaultInjection,
  XdsFilterOverrides,
  XdsHttpFilter,
} from '../resources/types.js';

/** A33 "Header matching": with header_delay, the delay in milliseconds… */
export const DELAY_HEADER = 'x-envoy-fault-delay-request';
/** …and the numerator of the share of calls to delay (capped by the config's numerator). */
export const DELAY_PERCENTAGE_HEADER = 'x-envoy-fault-delay-request-percentage';
/** With header_abort, the gRPC status code to abort with… */
export const ABORT_GRPC_HEADER = 'x-envoy-fault-abort-grpc-request';
/** …or an HTTP status, mapped to its gRPC code (used when there is no valid gRPC code header)… */
export const ABORT_HTTP_HEADER = 'x-envoy-fault-abort-request';
/** …and the numerator of the share of calls to abort (capped by the config's numerator). */
export const ABORT_PERCENTAGE_HEADER = 'x-envoy-fault-abort-request-percentage';

/**
 * A33 "Maximum active faults": the calls whose fault is in progress (from the decision until the delay is over
 * and the abort done). One counter serves every channel of the process; each filter config has its own limit.
 */
export class ActiveFaults {
  private count = 0;

  get active(): number {
    return this.count;
  }

  /** Counts one more active fault, unless `max` are already active (undefined: no limit). */
  tryAdd(max: number | undefined): boolean {
    if (max !== undefined && this.count >= max) return false;
    this.count++;
    return true;
  }

  remove(): void {
    this.count--;
  }
}

/** The process's counter (A33: max_active_faults limits "the entire process"). */
export const processActiveFaults = new ActiveFaults();

/**
 * The config a fault filter applies to calls of one route and cluster (A39): the first of `scopes` (weighted
 * cluster, route, virtual host) with an HTTPFault override under the filter's name replaces the listener's
 * config. Undefined when the filter is no fault filter or the config injects nothing (istiod's `HTTPFault{}`).
 */
export function faultConfigFor(
  filter: XdsHttpFilter,
  scopes: readonly XdsFilterOverrides[],
): XdsFaultInjection | undefined {
  if (filter.fault === undefined) return undefined;
  let config = filter.fault;
  for (const overrides of scopes) {
    const override = overrides.get(filter.name)?.fault;
    if (override === undefined) continue;
    config = override;
    break;
  }
  return config.delay === undefined && config.abort === undefined ? undefined : config;
}

/**
 * One fault filter as a route applies it: `decide` gives each call its fault. `random` is uniform in [0, 1)
 * (seed it in tests); a fraction n / d applies when `random() * d < n`.
 */
export class FaultInjector {
  /** The abort status of a grpc_status / http_status config, made once. */
  private readonly fixedAbort: Status | undefined;

  constructor(
    /** The filter's instance name (it is in the abort status' details). */
    readonly filterName: string,
    readonly config: XdsFaultInjection,
    private readonly random: () => number,
    private readonly active: ActiveFaults,
  ) {
    const abort = config.abort;
    this.fixedAbort = abort?.kind === 'status' ? this.abortStatus(abort.code, abort.httpStatus) : undefined;
  }

  /**
   * A33: the fault of a call with `metadata`, or undefined when it gets none (no draw hit, or max_active_faults
   * are already active). The delay and the abort draw a random number each ("Evaluate Possibility Fraction").
   * A fault returned counts as active until it is over: run it (or cancel its run).
   */
  decide(metadata: CallMetadata): InjectedFault | undefined {
    const delayMs = this.delayOf(metadata);
    const abort = this.abortOf(metadata);
    if (delayMs === 0 && abort === undefined) return undefined;
    if (!this.active.tryAdd(this.config.maxActiveFaults)) return undefined;
    return new InjectedFault(delayMs, abort, this.active);
  }

  private delayOf(metadata: CallMetadata): number {
    const delay = this.config.delay;
    if (delay === undefined) return 0;
    let ms: number;
    let numerator = delay.percentage.numerator;
    if (delay.kind === 'fixed') {
      ms = delay.delayMs;
    } else {
      const header = headerInteger(metadata, DELAY_HEADER);
      if (header === undefined) return 0;
      ms = header;
      numerator = cappedNumerator(metadata, DELAY_PERCENTAGE_HEADER, numerator);
    }
    return ms > 0 && this.draw(numerator, delay.percentage) ? ms : 0;
  }

  private abortOf(metadata: CallMetadata): Status | undefined {
    const abort = this.config.abort;
    if (abort === undefined) return undefined;
    if (abort.kind === 'status') {
      return this.draw(abort.percentage.numerator, abort.percentage) ? this.fixedAbort : undefined;
    }
    let result: Status;
    const grpcCode = headerInteger(metadata, ABORT_GRPC_HEADER, isGrpcCode);
    if (grpcCode !== undefined) {
      result = this.abortStatus(grpcCode, undefined);
    } else {
      const httpStatus = headerInteger(metadata, ABORT_HTTP_HEADER, isHttpStatus);
      if (httpStatus === undefined) return undefined;
      result = this.abortStatus(grpcCodeOfHttpStatus(httpStatus), httpStatus);
    }
    const numerator = cappedNumerator(metadata, ABORT_PERCENTAGE_HEADER, abort.percentage.numerator);
    return this.draw(numerator, abort.percentage) ? result : undefined;
  }

  private draw(numerator: number, fraction: XdsFaultFraction): boolean {
    return this.random() * fraction.denominator < numerator;
  }

  private abortStatus(code: Code, httpStatus: number | undefined): Status {
    const http = httpStatus === undefined ? '' : ` (HTTP ${httpStatus})`;
    return { code, details: `fault injected by the HTTP filter "${this.filterName}"${http}` };
  }
}

/** One call's fault: a delay (0: none), then an abort status (undefined: the call goes on). */
export class InjectedFault {
  private over = false;

  constructor(
    readonly delayMs: number,
    readonly abort: Status | undefined,
    private readonly active: ActiveFaults,
  ) {}

  /**
   * Runs the fault on `clock`: after `delayMs` (at once without a delay) `done` gets the abort status, or
   * undefined for the call to start. The fault stops being active then, or when the returned function cancels
   * the run (the call ended during the delay), whichever comes first.
   */
  run(clock: Clock, done: (abort: Status | undefined) => void): CancelTimer {
    if (this.delayMs <= 0) {
      this.finish();
      done(this.abort);
      return () => {};
    }
    const cancelTimer = clock.setTimer(this.delayMs, () => {
      this.finish();
      done(this.abort);
    });
    return () => {
      if (this.over) return;
      cancelTimer();
      this.finish();
    };
  }

  private finish(): void {
    if (this.over) return;
    this.over = true;
    this.active.remove();
  }
}

function isGrpcCode(value: number): boolean {
  return value <= Code.UNAUTHENTICATED;
}

const DECIMAL = /^\s*\d+\s*$/;

/**
 * The first value of header `key` that is a non-negative decimal integer (and passes `valid`); A33: an invalid
 * header is ignored, and of several valid ones any may be used.
 */
function headerInteger(
  metadata: CallMetadata,
  key: string,
  valid: (value: number) => boolean = () => true,
): number | undefined {
  for (const value of metadata.get(key)) {
    if (typeof value !== 'string' || !DECIMAL.test(value)) continue;
    const n = Number(value);
    if (Number.isSafeInteger(n) && valid(n)) return n;
  }
  return undefined;
}

/** A33: a percentage header sets the numerator over the config's denominator, at most the config's numerator. */
function cappedNumerator(metadata: CallMetadata, key: string, configNumerator: number): number {
  const header = headerInteger(metadata, key);
  return header === undefined ? configNumerator : Math.min(header, configNumerator);
}
