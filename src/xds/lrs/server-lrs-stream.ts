// The LRS stream to one server (A27 "LRS"): one LoadReportingService.StreamLoadStats call at a time, on its own
// transport (so a slow or failing LRS call never holds up the ADS stream). It runs while some cluster with
// lrs_server uses the server: the first acquired cluster store opens it; once the last is released, one more
// report carries what the released stores counted, and the stream stops. The first request carries the node;
// each LoadStatsResponse says which clusters to report and how often (the last good one stays in force while a
// bad one is refused, naming its field); a report goes out every interval, with the interval measured on the
// clock. A failed call is retried with backoff (reset once a call got a response), its load kept for the next.

import type { CancelTimer, Clock } from '../../core/clock.js';
import { type BackoffOptions, ExponentialBackoff } from '../../core/index.js';
import type { Trace } from '../../core/load-balancer.js';
import { Code, formatStatus, type Status, status } from '../../core/status.js';
import type { Node } from '../../protos/gen/envoy/config/core/v3/base_pb.js';
import type { LoadStatsResponse } from '../../protos/gen/envoy/service/load_stats/v3/lrs_pb.js';
import type { XdsServerConfig } from '../client/bootstrap.js';
import type { LrsStream, XdsTransport, XdsTransportFactory } from '../client/transport.js';
import { type ClusterLoadSnapshot, type ClusterLoadStore, LoadStore } from '../load-store.js';
import { initialLoadStatsRequest, loadStatsRequest } from './load-stats-request.js';
import { type LrsRequestedLoad, parseLrsResponse, sameRequestedLoad } from './lrs-response.js';

export interface ServerLrsStreamOptions {
  readonly server: XdsServerConfig;
  readonly transport: XdsTransportFactory;
  /** The bootstrap's node (the LRS client feature is added to it). */
  readonly node: Node;
  readonly clock: Clock;
  readonly trace: Trace;
  readonly backoff?: BackoffOptions;
}

export type LrsStreamState = 'stopped' | 'connecting' | 'reporting' | 'backoff';

/** One LRS call. */
interface Call {
  readonly id: number;
  stream: LrsStream;
  receivedResponse: boolean;
}

export class ServerLrsStream {
  readonly server: XdsServerConfig;
  readonly store: LoadStore;
  private readonly options: ServerLrsStreamOptions;
  private readonly backoff: ExponentialBackoff;
  private transport: XdsTransport | undefined;
  private call: Call | undefined;
  private callCount = 0;
  private requested: LrsRequestedLoad | undefined;
  private reportTimer: CancelTimer | undefined;
  private retryTimer: CancelTimer | undefined;
  /** C-core: after a report with no load, the next one with no load is not sent. */
  private lastReportEmpty = false;
  private lastError: Status | undefined;
  private closed = false;
  /** How many load reports went out (for tests and diagnostics). */
  reportsSent = 0;

  constructor(options: ServerLrsStreamOptions) {
    this.options = options;
    this.server = options.server;
    this.store = new LoadStore(options.clock);
    this.backoff = new ExponentialBackoff(options.backoff);
  }

  get state(): LrsStreamState {
    if (this.call) return this.requested ? 'reporting' : 'connecting';
    return this.retryTimer ? 'backoff' : 'stopped';
  }

  /** What the server asks for now (undefined before its first good response on the current call). */
  get requestedLoad(): LrsRequestedLoad | undefined {
    return this.requested;
  }

  /** Why the last call failed, or the last response was refused (cleared by the next good response). */
  get error(): Status | undefined {
    return this.lastError;
  }

  acquire(cluster: string, edsServiceName: string): ClusterLoadStore {
    const store = this.store.acquire(cluster, edsServiceName);
    if (!this.closed && !this.call && !this.retryTimer) this.open();
    return store;
  }

  release(store: ClusterLoadStore): void {
    this.store.release(store);
    // Reporting, the released stores go in the next report, which then stops the stream; otherwise stop now.
    if (!this.store.held && this.requested === undefined) this.stop();
  }

  /** Stops for good (the xDS client is closing). */
  close(): void {
    this.closed = true;
    this.stop();
  }

  private stop(): void {
    this.reportTimer?.();
    this.reportTimer = undefined;
    this.retryTimer?.();
    this.retryTimer = undefined;
    this.requested = undefined;
    this.lastReportEmpty = false;
    this.store.dropReleased();
    if (this.call) {
      this.trace(`stopping LRS stream ${this.call.id}: no cluster reports load to ${this.server.serverUri}`);
      this.call.stream.close();
      this.call = undefined;
    }
    this.transport?.close();
    this.transport = undefined;
    this.backoff.reset();
  }

  private open(): void {
    if (this.transport === undefined) this.transport = this.options.transport(this.server);
    const transport = this.transport;
    const call: Call = {
      id: ++this.callCount,
      stream: undefined as unknown as LrsStream,
      receivedResponse: false,
    };
    this.call = call;
    if (transport.openLrsStream === undefined) {
      // A transport that cannot carry LRS: nothing is reported, the channels serve as they would without it.
      this.call = undefined;
      this.lastError = status(
        Code.UNIMPLEMENTED,
        `the xDS transport to ${this.server.serverUri} cannot report load`,
      );
      this.trace(this.lastError.details);
      return;
    }
    this.trace(`starting LRS stream ${call.id} to ${this.server.serverUri}`);
    call.stream = transport.openLrsStream({
      onResponse: (response) => this.onResponse(call, response),
      onClose: (s) => this.onClosed(call, s),
    });
    call.stream.send(initialLoadStatsRequest(this.options.node));
  }

  private onResponse(call: Call, response: LoadStatsResponse): void {
    if (call !== this.call) return;
    if (!call.receivedResponse) {
      call.receivedResponse = true;
      this.backoff.reset();
    }
    let requested: LrsRequestedLoad;
    try {
      requested = parseLrsResponse(response);
    } catch (e) {
      this.lastError = status(
        Code.INVALID_ARGUMENT,
        `LRS server ${this.server.serverUri}: ${(e as Error).message}`,
      );
      this.trace(
        `${this.lastError.details}; ${this.requested ? 'the previous request stays in force' : 'no report until a valid response'}`,
      );
      return;
    }
    this.lastError = undefined;
    const previous = this.requested;
    this.requested = requested;
    this.trace(
      `LRS stream ${call.id}: report ${requested.clusters ? `clusters [${[...requested.clusters].join(', ')}]` : 'all clusters'} every ${requested.intervalMs} ms`,
    );
    if (previous !== undefined && sameRequestedLoad(previous, requested)) return;
    if (previous === undefined || previous.intervalMs !== requested.intervalMs) this.scheduleReport();
  }

  private scheduleReport(): void {
    this.reportTimer?.();
    const interval = this.requested!.intervalMs;
    this.reportTimer = this.options.clock.setTimer(interval, () => {
      this.reportTimer = undefined;
      this.report();
    });
  }

  private report(): void {
    const call = this.call;
    const requested = this.requested;
    if (!call || !requested) return;
    const snapshots = this.store.take(requested.clusters).filter(hasLoad);
    const empty = snapshots.length === 0;
    if (!(empty && this.lastReportEmpty)) {
      call.stream.send(loadStatsRequest(snapshots));
      this.reportsSent++;
      this.trace(`LRS stream ${call.id}: reported ${snapshots.length} clusters`);
    }
    this.lastReportEmpty = empty;
    if (!this.store.held) {
      this.stop();
      return;
    }
    this.scheduleReport();
  }

  private onClosed(call: Call, closeStatus: Status): void {
    if (call !== this.call) return;
    this.call = undefined;
    this.reportTimer?.();
    this.reportTimer = undefined;
    this.requested = undefined;
    this.lastReportEmpty = false;
    this.lastError = status(
      Code.UNAVAILABLE,
      `LRS stream to ${this.server.serverUri} ended: ${formatStatus(closeStatus)}`,
    );
    if (!this.store.held) {
      this.stop();
      return;
    }
    const delay = this.backoff.next();
    this.trace(`${this.lastError.details}; retrying in ${Math.round(delay)} ms`);
    this.retryTimer = this.options.clock.setTimer(delay, () => {
      this.retryTimer = undefined;
      if (!this.closed && !this.call && this.store.held) this.open();
    });
  }

  private trace(message: string): void {
    this.options.trace(() => `xds client: ${message}`);
  }
}

/** A cluster with no call issued, ended or running and no drop is left out of the report (as grpc-go does). */
function hasLoad(s: ClusterLoadSnapshot): boolean {
  return s.localities.length > 0 || s.totalDrops > 0;
}
