import type { BackendMetricReport, BackendMetricsListener } from './backend-metrics.js';
import { ExponentialBackoff } from './backoff.js';
import type { CancelTimer, Clock } from './clock.js';
import { Code, type Status } from './status.js';
import type { Unwatch } from './subchannel.js';

/** What an open ORCA stream tells its owner. */
export interface OrcaStreamHandlers {
  report(report: BackendMetricReport): void;
  /** The call ended (not called after the owner cancelled it). */
  end(status: Status): void;
}

/**
 * How a channel opens `xds.service.orca.v3.OpenRcaService/StreamCoreMetrics` on one connection, asking for a
 * report every `periodMs`; the returned function cancels the call.
 */
export type OpenOrcaStream = (periodMs: number, handlers: OrcaStreamHandlers) => () => void;

interface Watcher {
  readonly periodMs: number;
  readonly listener: BackendMetricsListener;
}

/**
 * A51 "Out of Band Metrics Reporting", client side, for one connection: one StreamCoreMetrics call shared by
 * every watcher, asking for the smallest period any of them wants (restarted when that changes), open while
 * the connection is READY and someone watches. A call that ends is retried with exponential backoff, at once
 * if it had delivered a report; UNIMPLEMENTED stops the retries for this connection. Timers on `clock`.
 */
export class OobMetricsStream {
  private readonly watchers = new Set<Watcher>();
  private ready = false;
  /** The server answered UNIMPLEMENTED on this connection (A51: never retried on it). */
  private unsupported = false;
  private cancelCall: (() => void) | null = null;
  private callPeriodMs = 0;
  private cancelRetry: CancelTimer | null = null;
  private readonly backoff: ExponentialBackoff;
  /** Calls opened, for tests and traces. */
  callsOpened = 0;

  constructor(
    private readonly open: OpenOrcaStream,
    private readonly clock: Clock,
    private readonly log: (message: string) => void = () => {},
    random: () => number = Math.random,
  ) {
    this.backoff = new ExponentialBackoff({ random });
  }

  get watching(): boolean {
    return this.watchers.size > 0;
  }

  /** Adds a watcher; the returned function removes it (the call closes with the last one). */
  watch(periodMs: number, listener: BackendMetricsListener): Unwatch {
    const watcher: Watcher = { periodMs, listener };
    this.watchers.add(watcher);
    this.sync();
    return () => {
      if (this.watchers.delete(watcher)) this.sync();
    };
  }

  /** The connection's state: READY opens the call (a new connection may try again after UNIMPLEMENTED). */
  setReady(ready: boolean): void {
    if (ready === this.ready) return;
    this.ready = ready;
    if (ready) {
      this.unsupported = false;
      this.backoff.reset();
    }
    this.sync();
  }

  /** Closes the call and forgets the watchers (the connection is gone). */
  shutdown(): void {
    this.watchers.clear();
    this.sync();
  }

  private wantedPeriod(): number {
    let min = Number.POSITIVE_INFINITY;
    for (const w of this.watchers) if (w.periodMs < min) min = w.periodMs;
    return min;
  }

  private sync(): void {
    if (this.watchers.size === 0 || !this.ready || this.unsupported) {
      this.close();
      return;
    }
    const period = this.wantedPeriod();
    if (this.cancelRetry !== null) return; // the retry opens with the period wanted then
    if (this.cancelCall === null || period !== this.callPeriodMs) this.start(period);
  }

  private close(): void {
    this.cancelCall?.();
    this.cancelCall = null;
    this.cancelRetry?.();
    this.cancelRetry = null;
  }

  private start(periodMs: number): void {
    this.cancelCall?.();
    this.callPeriodMs = periodMs;
    this.callsOpened++;
    let live = true;
    let reported = false;
    const cancel = this.open(periodMs, {
      report: (report) => {
        if (!live) return;
        if (!reported) this.backoff.reset();
        reported = true;
        for (const w of [...this.watchers]) w.listener(report);
      },
      end: (status) => {
        if (!live) return;
        live = false;
        this.cancelCall = null;
        this.ended(status, reported);
      },
    });
    if (live) {
      this.cancelCall = () => {
        live = false;
        cancel();
      };
    }
  }

  private ended(status: Status, reported: boolean): void {
    if (status.code === Code.UNIMPLEMENTED) {
      // A51: not retried on this connection; the watchers simply hear nothing.
      this.unsupported = true;
      this.log(`ORCA StreamCoreMetrics is not implemented by the server (${status.details}); not retrying`);
      return;
    }
    if (this.watchers.size === 0 || !this.ready) return;
    // A51: after a report the next attempt is immediate; otherwise it waits out the backoff.
    const delay = reported ? 0 : this.backoff.next();
    this.log(
      `ORCA stream ended (${Code[status.code] ?? status.code}: ${status.details}); retrying in ${Math.round(delay)} ms`,
    );
    this.cancelRetry = this.clock.setTimer(delay, () => {
      this.cancelRetry = null;
      this.sync();
    });
  }
}
