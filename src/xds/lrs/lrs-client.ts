// The load reporting client of one bootstrap (A27 "LRS"): one LRS stream per server that some cluster reports
// to, shared by every channel of the xDS client (the resolver hands it to the tree as XdsLoadReporting).
// A cluster's lrs_server is `self`, "the server that sent the cluster" (A47): the xDS client knows which server
// that was (serverOfCluster); the bootstrap's first xds_servers entry when it does not.

import { type Clock, realClock } from '../../core/clock.js';
import type { BackoffOptions } from '../../core/index.js';
import type { Trace } from '../../core/load-balancer.js';
import type { XdsBootstrap, XdsServerConfig } from '../client/bootstrap.js';
import { nodeProto } from '../client/node.js';
import type { XdsTransportFactory } from '../client/transport.js';
import type { ClusterLoadStore, XdsLoadReporting } from '../load-store.js';
import { ServerLrsStream } from './server-lrs-stream.js';

export interface LrsClientOptions {
  readonly bootstrap: XdsBootstrap;
  readonly transport: XdsTransportFactory;
  /** Report intervals, measured intervals and backoff run on it. Default: the real clock. */
  readonly clock?: Clock;
  readonly trace?: Trace;
  readonly backoff?: BackoffOptions;
  /** The server a cluster came from (the xDS client's cache knows it; A47 authorities, A71 fallback). */
  readonly serverOfCluster?: (cluster: string) => XdsServerConfig | undefined;
}

export class LrsClient implements XdsLoadReporting {
  private readonly streams = new Map<string, ServerLrsStream>();
  private readonly streamOf = new WeakMap<ClusterLoadStore, ServerLrsStream>();
  private closed = false;

  constructor(private readonly options: LrsClientOptions) {}

  /** The server a cluster with lrs_server `self` reports to when none is named. */
  get defaultServer(): XdsServerConfig {
    const server = this.options.bootstrap.xdsServers[0];
    if (server === undefined) throw new Error('the xDS bootstrap lists no server');
    return server;
  }

  acquireClusterLoad(
    cluster: string,
    edsServiceName: string,
    server: XdsServerConfig = this.options.serverOfCluster?.(cluster) ?? this.defaultServer,
  ): ClusterLoadStore {
    const stream = this.streamTo(server);
    const store = stream.acquire(cluster, edsServiceName);
    this.streamOf.set(store, stream);
    return store;
  }

  releaseClusterLoad(store: ClusterLoadStore): void {
    this.streamOf.get(store)?.release(store);
  }

  /** The stream to `server` (default: the first xds_servers entry) if a cluster ever reported to it. */
  stream(server: XdsServerConfig = this.defaultServer): ServerLrsStream | undefined {
    return this.streams.get(serverKey(server));
  }

  /** Stops every stream; stores acquired later count but are never reported. */
  close(): void {
    this.closed = true;
    for (const stream of this.streams.values()) stream.close();
  }

  private streamTo(server: XdsServerConfig): ServerLrsStream {
    const key = serverKey(server);
    let stream = this.streams.get(key);
    if (stream === undefined) {
      stream = new ServerLrsStream({
        server,
        transport: this.options.transport,
        node: nodeProto(this.options.bootstrap.node),
        clock: this.options.clock ?? realClock,
        trace: this.options.trace ?? (() => {}),
        ...(this.options.backoff && { backoff: this.options.backoff }),
      });
      if (this.closed) stream.close();
      this.streams.set(key, stream);
    }
    return stream;
  }

  /** The resolver's attributes are printed by grpc-js's traces as JSON. */
  toJSON(): string {
    return `LRS client of ${this.streams.size} servers`;
  }
}

function serverKey(server: XdsServerConfig): string {
  return JSON.stringify([server.serverUri, server.channelCredentials, server.serverFeatures]);
}
