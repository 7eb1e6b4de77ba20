// An xDS control plane: ADS v3, state of the world, on a grpc-js server. Serves one resource set to every
// client (each gets the resources it subscribed to), pushes a new version on every `setResources`, and keeps
// a log of the clients' ACKs and NACKs. It is also an LRS server (A27): it asks every client for its load and
// keeps what they report. `lbtree control-plane` runs one from a file; tests run one in-process.
import * as grpc from '@grpc/grpc-js';
import type {
  DiscoveryRequest,
  DiscoveryResponse,
} from '../protos/gen/envoy/service/discovery/v3/discovery_pb.js';
import type {
  LoadStatsRequest,
  LoadStatsResponse,
} from '../protos/gen/envoy/service/load_stats/v3/lrs_pb.js';
import type { XdsBootstrapJson } from '../xds/client/bootstrap.js';
import { ADS_SERVICE } from './ads-service.js';
import {
  type AckRecord,
  AdsStream,
  type NackRecord,
  type StreamEvent,
  type TypeSubscription,
} from './ads-stream.js';
import { type BootstrapOptions, bootstrapFor } from './bootstrap.js';
import {
  type LoadReportingRequest,
  loadStatsResponse,
  type ReceivedLoadReport,
  receivedLoadReport,
} from './load-reports.js';
import { LRS_SERVICE } from './lrs-service.js';
import { type ResourceInput, ResourceSet } from './resource-set.js';

export interface ControlPlaneOptions {
  /** Served from the start (version "1"); none by default (version "0"). */
  readonly resources?: readonly ResourceInput[];
  /** How many ACKs and NACKs the logs keep (the oldest go first); default 10,000. */
  readonly logLimit?: number;
  /** What LRS clients are asked to report (A27); default every cluster, every 10 s. */
  readonly loadReporting?: LoadReportingRequest;
}

/** A connected client stream. */
export interface ClientInfo {
  readonly streamId: number;
  readonly nodeId: string;
  readonly peer: string;
  readonly subscriptions: readonly TypeSubscription[];
}

export type ControlPlaneEvent =
  | StreamEvent
  | { readonly kind: 'connected'; readonly streamId: number; readonly peer: string }
  | {
      readonly kind: 'disconnected';
      readonly streamId: number;
      readonly nodeId: string;
      readonly peer: string;
      readonly reason: string;
    }
  | { readonly kind: 'version'; readonly version: string; readonly summary: string }
  | {
      readonly kind: 'lrs-connected';
      readonly streamId: number;
      readonly nodeId: string;
      readonly userAgent: string;
    }
  | {
      readonly kind: 'lrs-disconnected';
      readonly streamId: number;
      readonly nodeId: string;
      readonly reason: string;
    }
  | { readonly kind: 'load-report'; readonly report: ReceivedLoadReport };

/** Which answers `waitForAck` / `waitForNack` wait for; unset fields match anything. */
export interface AnswerFilter {
  readonly typeUrl?: string;
  readonly version?: string;
  readonly nodeId?: string;
}

type Waiter = (event: ControlPlaneEvent) => void;

export class ControlPlane {
  /** Every ACK received, oldest first (bounded by `logLimit`). */
  readonly acks: AckRecord[] = [];
  /** Every NACK received, oldest first, each with the client's reason. */
  readonly nacks: NackRecord[] = [];
  /** Every LRS report that carried load, oldest first (bounded by `logLimit`). */
  readonly loadReports: ReceivedLoadReport[] = [];
  private loadRequest: LoadReportingRequest;
  /** The LRS calls that sent their first request (so they have been told what to report). */
  private readonly lrsCalls = new Map<number, grpc.ServerDuplexStream<LoadStatsRequest, LoadStatsResponse>>();
  private resourceSet: ResourceSet;
  private versionCounter: number;
  private readonly streams = new Map<number, AdsStream>();
  private readonly calls = new Set<grpc.ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>>();
  private readonly listeners = new Set<Waiter>();
  private readonly logLimit: number;
  private server: grpc.Server | null = null;
  private streamIds = 0;
  private boundPort = 0;
  private boundHost = '';
  /** The `unix:` address listened on, when it is a socket (as istio-agent's). */
  private boundUnix: string | undefined;

  constructor(options: ControlPlaneOptions = {}) {
    this.logLimit = options.logLimit ?? 10_000;
    this.loadRequest = options.loadReporting ?? {};
    this.versionCounter = options.resources ? 1 : 0;
    this.resourceSet = ResourceSet.build(String(this.versionCounter), options.resources ?? []);
  }

  /** Version of the set now served: "1", "2", … (one more for every `setResources`). */
  get version(): string {
    return this.resourceSet.version;
  }

  get resources(): ResourceSet {
    return this.resourceSet;
  }

  /** The port bound by `listen` (0 before). */
  get port(): number {
    return this.boundPort;
  }

  /** `host:port` (or the `unix:` address) as a client's `server_uri` names it. */
  get address(): string {
    return this.boundUnix ?? formatHostPort(this.boundHost, this.boundPort);
  }

  /**
   * Starts serving ADS on `address` ("host:port", port 0 for any free one; default 127.0.0.1:0; or a Unix
   * socket, "unix:///path") and resolves with the port (0 for a socket) once connections are accepted. After `close()` it may listen again (a server restart).
   * `credentials` default to plaintext; TLS ones serve clients whose bootstrap has `tls` channel creds (A65).
   */
  async listen(
    address = '127.0.0.1:0',
    credentials: grpc.ServerCredentials = grpc.ServerCredentials.createInsecure(),
  ): Promise<number> {
    if (this.server) throw new Error(`control plane already listening on ${this.address}`);
    const server = new grpc.Server();
    server.addService(ADS_SERVICE, {
      streamAggregatedResources: (call: grpc.ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>) =>
        this.serveStream(call),
    });
    server.addService(LRS_SERVICE, {
      streamLoadStats: (call: grpc.ServerDuplexStream<LoadStatsRequest, LoadStatsResponse>) =>
        this.serveLoadStream(call),
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(address, credentials, (error, port) => (error ? reject(error) : resolve(port))),
    );
    this.server = server;
    this.boundPort = port;
    this.boundUnix = address.startsWith('unix:') ? address : undefined;
    this.boundHost = this.boundUnix === undefined ? hostOf(address) : '';
    return port;
  }

  /**
   * Replaces the served set with `list` and pushes the new version to every client, each getting the
   * resources it subscribed to (LDS / CDS: a resource no longer in the set is deleted for the client).
   * Throws, naming `resources[i]`, when an entry is not a valid resource; the previous set then keeps serving.
   * Returns the new version.
   */
  setResources(list: readonly ResourceInput[]): string {
    const next = ResourceSet.build(String(this.versionCounter + 1), list);
    this.versionCounter++;
    this.resourceSet = next;
    this.emit({ kind: 'version', version: next.version, summary: next.summary() });
    for (const stream of this.streams.values()) stream.onResourcesChanged();
    return next.version;
  }

  /** What LRS clients are asked to report now. */
  get loadReporting(): LoadReportingRequest {
    return this.loadRequest;
  }

  /** Asks every LRS client, connected now or later, for this load (a new LoadStatsResponse on each stream). */
  setLoadReporting(request: LoadReportingRequest): void {
    this.loadRequest = request;
    const response = loadStatsResponse(request);
    for (const call of this.lrsCalls.values()) call.write(response);
  }

  /**
   * Resolves once `condition` holds for the load reports received so far (checked now and at every report);
   * rejects after `timeoutMs`, saying what `describe` says of the reports then.
   */
  waitForLoad(
    condition: (reports: readonly ReceivedLoadReport[]) => boolean,
    timeoutMs = 10_000,
    describe: (reports: readonly ReceivedLoadReport[]) => string = (r) => `${r.length} reports`,
  ): Promise<void> {
    if (condition(this.loadReports)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(waiter);
        reject(
          new Error(
            `load reports did not reach the condition within ${timeoutMs} ms: ${describe(this.loadReports)}`,
          ),
        );
      }, timeoutMs);
      const waiter: Waiter = (event) => {
        if (event.kind !== 'load-report' || !condition(this.loadReports)) return;
        clearTimeout(timer);
        this.listeners.delete(waiter);
        resolve();
      };
      this.listeners.add(waiter);
    });
  }

  /** The clients connected now, with their subscriptions. */
  clients(): ClientInfo[] {
    return [...this.streams.values()].map((s) => ({
      streamId: s.id,
      nodeId: s.nodeId,
      peer: s.peer,
      subscriptions: s.subscriptions(),
    }));
  }

  /** Calls `listener` for every event (connections, responses sent, ACKs, NACKs, versions); returns the unsubscribe. */
  onEvent(listener: (event: ControlPlaneEvent) => void): () => void {
    const waiter: Waiter = (event) => listener(event);
    this.listeners.add(waiter);
    return () => this.listeners.delete(waiter);
  }

  /** The first ACK (already logged or still to come) matching `filter`; rejects after `timeoutMs`. */
  waitForAck(filter: AnswerFilter = {}, timeoutMs = 10_000): Promise<AckRecord> {
    return this.waitFor('ack', this.acks, filter, timeoutMs);
  }

  /** The first NACK (already logged or still to come) matching `filter`; rejects after `timeoutMs`. */
  waitForNack(filter: AnswerFilter = {}, timeoutMs = 10_000): Promise<NackRecord> {
    return this.waitFor('nack', this.nacks, filter, timeoutMs);
  }

  /** A bootstrap for clients of this control plane (call after `listen`). */
  bootstrap(options: BootstrapOptions = {}): XdsBootstrapJson {
    if (!this.server) throw new Error('control plane is not listening: call listen() first');
    return bootstrapFor(this.address, options);
  }

  /** A bootstrap for clients of a control plane on `port` of 127.0.0.1 (or on "host:port"). */
  static bootstrapFor(portOrAddress: number | string, options: BootstrapOptions = {}): XdsBootstrapJson {
    return bootstrapFor(portOrAddress, options);
  }

  /** Ends every stream (clients see UNAVAILABLE and reconnect with backoff) and stops listening. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    // Cancels every call in flight and closes the connections: clients see their stream fail.
    server.forceShutdown();
    this.calls.clear();
    this.streams.clear();
    this.lrsCalls.clear();
  }

  /** An LRS stream: the first request names the node and gets what to report; every later one is a report. */
  private serveLoadStream(call: grpc.ServerDuplexStream<LoadStatsRequest, LoadStatsResponse>): void {
    const id = ++this.streamIds;
    let nodeId = '';
    let userAgent = '';
    let ended = false;
    call.on('data', (request: LoadStatsRequest) => {
      if (!this.lrsCalls.has(id)) {
        nodeId = request.node?.id ?? '';
        userAgent = request.node?.userAgentName ?? '';
        this.lrsCalls.set(id, call);
        this.emit({ kind: 'lrs-connected', streamId: id, nodeId, userAgent });
        call.write(loadStatsResponse(this.loadRequest));
      }
      if (request.clusterStats.length === 0) return;
      const report = receivedLoadReport(id, nodeId, userAgent, request);
      pushBounded(this.loadReports, report, this.logLimit);
      this.emit({ kind: 'load-report', report });
    });
    const end = (reason: string) => {
      if (ended) return;
      ended = true;
      const known = this.lrsCalls.delete(id);
      if (known) this.emit({ kind: 'lrs-disconnected', streamId: id, nodeId, reason });
    };
    call.on('end', () => {
      end('client closed the stream');
      call.end();
    });
    call.on('cancelled', () => end('cancelled'));
    call.on('error', (e: Error) => end(e.message));
    call.on('close', () => end('closed'));
  }

  private serveStream(call: grpc.ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>): void {
    const id = ++this.streamIds;
    const host = this;
    const stream = new AdsStream(id, call.getPeer(), {
      get resources() {
        return host.resourceSet;
      },
      send: (response) => call.write(response),
      report: (event) => this.record(event),
    });
    this.streams.set(id, stream);
    this.calls.add(call);
    this.emit({ kind: 'connected', streamId: id, peer: stream.peer });
    let ended = false;
    const end = (reason: string) => {
      if (ended) return;
      ended = true;
      this.streams.delete(id);
      this.calls.delete(call);
      this.emit({ kind: 'disconnected', streamId: id, nodeId: stream.nodeId, peer: stream.peer, reason });
    };
    call.on('data', (request: DiscoveryRequest) => stream.onRequest(request));
    call.on('end', () => {
      end('client closed the stream');
      call.end();
    });
    call.on('cancelled', () => end('cancelled'));
    call.on('error', (e: Error) => end(e.message));
    call.on('close', () => end('closed'));
  }

  private record(event: StreamEvent): void {
    if (event.kind === 'ack') pushBounded(this.acks, event.ack, this.logLimit);
    else if (event.kind === 'nack') pushBounded(this.nacks, event.nack, this.logLimit);
    this.emit(event);
  }

  private emit(event: ControlPlaneEvent): void {
    for (const listener of [...this.listeners]) listener(event);
  }

  private waitFor<R extends AckRecord>(
    kind: 'ack' | 'nack',
    log: readonly R[],
    filter: AnswerFilter,
    timeoutMs: number,
  ): Promise<R> {
    const matches = (r: AckRecord) =>
      (filter.typeUrl === undefined || r.typeUrl === filter.typeUrl) &&
      (filter.version === undefined || r.version === filter.version) &&
      (filter.nodeId === undefined || r.nodeId === filter.nodeId);
    const found = log.find(matches);
    if (found) return Promise.resolve(found);
    return new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(waiter);
        reject(
          new Error(`no ${kind.toUpperCase()} matching ${JSON.stringify(filter)} within ${timeoutMs} ms`),
        );
      }, timeoutMs);
      const waiter: Waiter = (event) => {
        const record = event.kind === 'ack' ? event.ack : event.kind === 'nack' ? event.nack : undefined;
        if (event.kind !== kind || !record || !matches(record)) return;
        clearTimeout(timer);
        this.listeners.delete(waiter);
        resolve(record as R);
      };
      this.listeners.add(waiter);
    });
  }
}

function pushBounded<T>(log: T[], entry: T, limit: number): void {
  log.push(entry);
  if (log.length > limit) log.splice(0, log.length - limit);
}

function hostOf(address: string): string {
  const colon = address.lastIndexOf(':');
  const host = colon < 0 ? address : address.slice(0, colon);
  return host.startsWith('[') ? host.slice(1, -1) : host || '127.0.0.1';
}

function formatHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
