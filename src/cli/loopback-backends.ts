// Real grpc-js servers on loopback, for the demo and the end-to-end tests.
// A tiny service with raw-bytes messages: `Whoami` answers with the serving backend's name, so a test (or the
// demo) sees where each RPC went.
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { BackendMetricReport } from '../core/index.js';
import { backendMetricsTrailer } from '../grpc-js/backend-metrics.js';
import { OrcaService } from '../grpc-js/orca-service.js';

const passThrough = (b: Buffer) => b;
export const WHOAMI_SERVICE: grpc.ServiceDefinition = {
  whoami: {
    path: '/lbtree.test.Backend/Whoami',
    requestStream: false,
    responseStream: false,
    requestSerialize: passThrough,
    requestDeserialize: passThrough,
    responseSerialize: passThrough,
    responseDeserialize: passThrough,
  },
};

export const BackendClient = grpc.makeGenericClientConstructor(WHOAMI_SERVICE, 'Backend');
export type BackendClientType = InstanceType<typeof BackendClient>;

/** One real grpc-js server. `stop()` kills it (open connections too); `start()` brings it back on its port. */
export class Backend {
  served = 0;
  /** When set, every reply carries this per-call ORCA load report (A51) in its trailers. */
  backendMetrics: Partial<BackendMetricReport> | null = null;
  /**
   * Its ORCA service (A51 out-of-band reports, `orca.set({ … })`), served on every start; a loopback backend
   * reports as often as a client asks, down to 50 ms.
   */
  readonly orca = new OrcaService({ minReportIntervalMs: 50 });
  /** When above 0, every `failEvery`-th call fails with `failCode` (a backend erroring, for outlier detection). */
  failEvery = 0;
  /** The status of the calls `failEvery` fails (INTERNAL by default; UNAVAILABLE for an A44 retry test). */
  failCode: grpc.status = grpc.status.INTERNAL;
  failed = 0;
  /** The client ends (address:port) that called it: one per connection, so a new entry is a new connection. */
  readonly peers = new Set<string>();
  /** While held, calls wait here for `release()` (a slow backend, e.g. for circuit breaking). */
  private heldCalls: (() => void)[] | null = null;
  private server: grpc.Server | null = null;
  port = 0;

  constructor(
    readonly name: string,
    readonly host = '127.0.0.1',
  ) {}

  /** `127.0.0.1:5000` or `[::1]:5000`. */
  get address(): string {
    return this.host.includes(':') ? `[${this.host}]:${this.port}` : `${this.host}:${this.port}`;
  }

  get running(): boolean {
    return this.server !== null;
  }

  async start(): Promise<this> {
    const server = new grpc.Server();
    server.addService(WHOAMI_SERVICE, {
      whoami: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        this.peers.add(call.getPeer());
        if (this.heldCalls) {
          this.heldCalls.push(() => this.answer(callback));
          return;
        }
        this.answer(callback);
      },
    });
    this.orca.addTo(server);
    const bind = this.host.includes(':') ? `[${this.host}]:${this.port}` : `${this.host}:${this.port}`;
    this.port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(bind, grpc.ServerCredentials.createInsecure(), (e, port) =>
        e ? reject(e) : resolve(port),
      ),
    );
    this.server = server;
    return this;
  }

  /** From now on calls wait, unanswered, until `release()`. */
  hold(): void {
    this.heldCalls ??= [];
  }

  /** How many calls are waiting for `release()`. */
  get waiting(): number {
    return this.heldCalls?.length ?? 0;
  }

  /** Answers every waiting call and stops holding new ones. */
  release(): void {
    const held = this.heldCalls ?? [];
    this.heldCalls = null;
    for (const answer of held) answer();
  }

  private answer(callback: grpc.sendUnaryData<Buffer>): void {
    if (this.failEvery > 0 && (this.served + this.failed + 1) % this.failEvery === 0) {
      this.failed++;
      callback({ code: this.failCode, details: `${this.name} is failing` });
      return;
    }
    this.served++;
    const trailers = this.backendMetrics ? backendMetricsTrailer(this.backendMetrics) : undefined;
    callback(null, Buffer.from(this.name), trailers);
  }

  /** Dies abruptly: connections are cut, and RPCs in flight on them fail. */
  stop(): void {
    this.server?.forceShutdown();
    this.server = null;
  }

  /**
   * Goes away gracefully, as a server does on SIGTERM: GOAWAY to every client, RPCs in flight finish, new
   * ones go elsewhere (grpc-js retries refused streams transparently).
   */
  async drain(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  }
}

export async function startBackends(names: string[], host = '127.0.0.1'): Promise<Backend[]> {
  return Promise.all(names.map((n) => new Backend(n, host).start()));
}

/**
 * A TCP listener that accepts connections and never speaks HTTP/2: the "unresponsive address" of a
 * Happy Eyeballs test (a SYN-ACK but no server behind it).
 */
export class Blackhole {
  private readonly sockets = new Set<Socket>();
  private server: NetServer | null = null;
  port = 0;
  constructor(readonly host = '127.0.0.1') {}

  get address(): string {
    return this.host.includes(':') ? `[${this.host}]:${this.port}` : `${this.host}:${this.port}`;
  }

  async start(): Promise<this> {
    const server = createServer((socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, this.host, () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
    return this;
  }

  stop(): void {
    for (const s of this.sockets) s.destroy();
    this.server?.close();
    this.server = null;
  }
}

export interface CallOptions {
  waitForReady?: boolean;
  deadlineMs?: number;
  /** Request headers (e.g. the one a ring_hash `requestHashHeader` reads). */
  headers?: Readonly<Record<string, string>>;
}

/** One Whoami RPC: resolves with the backend name, rejects with the grpc ServiceError. */
export function whoami(client: BackendClientType, options: CallOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + (options.deadlineMs ?? 5000);
    // grpc-js takes wait-for-ready from the metadata's options, not from the call options.
    const metadata = new grpc.Metadata({ waitForReady: options.waitForReady ?? false });
    for (const [k, v] of Object.entries(options.headers ?? {})) metadata.set(k, v);
    client.makeUnaryRequest(
      WHOAMI_SERVICE.whoami!.path,
      passThrough,
      passThrough,
      Buffer.alloc(0),
      metadata,
      { deadline },
      (error: grpc.ServiceError | null, value?: Buffer) =>
        error ? reject(error) : resolve(value!.toString()),
    );
  });
}

export function newClient(target: string, loadBalancingConfig: unknown[], options: grpc.ChannelOptions = {}) {
  return new BackendClient(target, grpc.credentials.createInsecure(), {
    'grpc.service_config': JSON.stringify({ loadBalancingConfig }),
    ...options,
  });
}

/** Whether this machine can listen on [::1]. */
export async function hasIPv6Loopback(): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(0, '::1', () => server.close(() => resolve(true)));
  });
}
