import {
  type BackendMetricReport,
  type CancelTimer,
  type Clock,
  Code,
  completeBackendMetricReport,
  type OpenOrcaStream,
  type OrcaStreamHandlers,
  type Status,
  status,
} from '../core/index.js';

interface OpenStream {
  readonly handlers: OrcaStreamHandlers;
  cancelTimer: CancelTimer | null;
}

/**
 * The ORCA service (A51 `OpenRcaService`) of one simulated backend: a per-server report set by the test,
 * sent on every open StreamCoreMetrics call at once and then every requested interval (never more often than
 * `minReportIntervalMs`), on the virtual clock.
 */
export class FakeOrcaServer {
  /** What the server reports (A51 per-server recording); changes reach the next report sent. */
  report: Partial<BackendMetricReport> = {};
  /** A51: the server's lower bound on the interval; a requested 0 means this. */
  minReportIntervalMs = 0;
  /** When false the server answers StreamCoreMetrics with UNIMPLEMENTED. */
  implemented = true;
  /** When set, new calls end at once with this status, before any report (a struggling server). */
  failNewStreams: Status | null = null;
  /** StreamCoreMetrics calls received, and the interval each asked for (ms). */
  streamsOpened = 0;
  readonly requestedPeriodsMs: number[] = [];
  /** The virtual times reports were sent at. */
  readonly reportTimes: number[] = [];
  private readonly streams = new Set<OpenStream>();

  constructor(
    private readonly clock: Clock,
    private readonly flush: () => void,
  ) {}

  /** Calls open now. */
  get openStreams(): number {
    return this.streams.size;
  }

  /** Ends every open call with `status` (say, the service restarting), then runs the work it causes. */
  endStreams(endStatus: Status = status(Code.UNAVAILABLE, 'ORCA service restarted')): void {
    for (const s of [...this.streams]) this.finish(s, endStatus);
    this.flush();
  }

  /** @internal The client side's way in: a FakeSubchannel's OobMetricsStream opens calls here. */
  readonly openStream: OpenOrcaStream = (periodMs, handlers) => {
    this.streamsOpened++;
    this.requestedPeriodsMs.push(periodMs);
    const stream: OpenStream = { handlers, cancelTimer: null };
    this.streams.add(stream);
    const failure = this.implemented
      ? this.failNewStreams
      : status(Code.UNIMPLEMENTED, 'unknown service xds.service.orca.v3.OpenRcaService');
    if (failure !== null) {
      stream.cancelTimer = this.clock.setTimer(0, () => this.finish(stream, failure));
    } else {
      const interval = Math.max(periodMs, this.minReportIntervalMs);
      const send = (): void => {
        stream.cancelTimer = this.clock.setTimer(interval, send);
        this.reportTimes.push(this.clock.now());
        handlers.report(completeBackendMetricReport(this.report));
      };
      stream.cancelTimer = this.clock.setTimer(0, send);
    }
    return () => {
      stream.cancelTimer?.();
      this.streams.delete(stream);
    };
  };

  private finish(stream: OpenStream, endStatus: Status): void {
    if (!this.streams.delete(stream)) return;
    stream.cancelTimer?.();
    stream.handlers.end(endStatus);
  }
}
