// The public xDS client (gRFC A27, A57, A88): wires the resource cache and its watchers
// (./resource-cache.ts) to the ADS stream of a server (./ads-stream.ts), and coalesces the subscription
// changes of one turn into one request per type. Today one authority and one server: the first of the
// bootstrap's xds_servers.
import { type CancelTimer, type Clock, realClock } from '../../core/clock.js';
import { type BackoffOptions, envFlag } from '../../core/index.js';
import type { Trace } from '../../core/load-balancer.js';
import { Code, status } from '../../core/status.js';
import { ServerAdsStream } from './ads-stream.js';
import type { XdsBootstrap } from './bootstrap.js';
import type { XdsClientDump } from './dump.js';
import { nodeProto } from './node.js';
import { ResourceCache } from './resource-cache.js';
import type { XdsDecodeContext, XdsResourceType } from './resource-type.js';
import type { XdsTransportFactory } from './transport.js';
import type { CancelWatch, XdsResourceWatcher, XdsWatcher } from './watcher.js';

/** A88: `false` restores the A53 rules (deletions drop resources unless ignore_resource_deletion). */
export const XDS_DATA_ERROR_HANDLING_ENV = 'GRPC_EXPERIMENTAL_XDS_DATA_ERROR_HANDLING';

export interface XdsClientOptions {
  readonly bootstrap: XdsBootstrap;
  readonly transport: XdsTransportFactory;
  /** Every timer (does-not-exist, backoff, deferred sends) runs on it. Default: the real clock. */
  readonly clock?: Clock;
  readonly trace?: Trace;
  /** Handed as it is to every resource type's decoder (e.g. the A52 registry and feature switches). */
  readonly decodeContext?: XdsDecodeContext;
  readonly backoff?: BackoffOptions;
  /** A88 data error handling; default from GRPC_EXPERIMENTAL_XDS_DATA_ERROR_HANDLING (on unless "false"). */
  readonly dataErrorHandling?: boolean;
  /** Where an exception thrown by a watcher goes (it never stops the client). Default: a process warning. */
  readonly onWatcherError?: (error: unknown) => void;
}

/**
 * The xDS client: one ADS stream (state of the world, v3) to the first server of the bootstrap, shared by
 * every watcher; a cache of the resources watched, with their versions, errors and does-not-exist timers, all
 * on the given Clock.
 */
export class XdsClient implements XdsWatcher {
  private readonly clock: Clock;
  private readonly stream: ServerAdsStream;
  private readonly cache: ResourceCache;
  private flushTimer: CancelTimer | undefined;
  private closed = false;

  constructor(private readonly options: XdsClientOptions) {
    this.clock = options.clock ?? realClock;
    const trace = options.trace ?? (() => {});
    const server = options.bootstrap.xdsServers[0];
    if (!server) throw new Error('the xDS bootstrap lists no server');
    this.cache = new ResourceCache({
      clock: this.clock,
      trace,
      nodeId: options.bootstrap.node.id,
      decodeContext: options.decodeContext,
      dataErrorHandling: options.dataErrorHandling ?? envFlag(XDS_DATA_ERROR_HANDLING_ENV, true),
      onWatcherError:
        options.onWatcherError ??
        ((e) => process.emitWarning(`xDS watcher threw: ${e instanceof Error ? e.stack : String(e)}`)),
      subscriptions: {
        add: (typeUrl, name) => this.stream.subscribe(typeUrl, name),
        remove: (typeUrl, name) => this.stream.unsubscribe(typeUrl, name),
        flushDue: () => this.scheduleFlush(),
      },
      connectivityError: () => this.stream.connectivityError,
    });
    this.stream = new ServerAdsStream({
      server,
      transport: options.transport,
      node: nodeProto(options.bootstrap.node),
      clock: this.clock,
      trace,
      ...(options.backoff && { backoff: options.backoff }),
      events: {
        onRequested: (typeUrl, names) => this.cache.requested(server, typeUrl, names),
        onResources: (typeUrl, version, resources) =>
          this.cache.applyResponse(server, typeUrl, version, resources),
        onEnded: (connectivityError) => this.cache.streamEnded(connectivityError),
        beforeReconnect: () => this.cache.prune(),
      },
    });
  }

  get nodeId(): string {
    return this.options.bootstrap.node.id;
  }

  watch<T>(type: XdsResourceType<T>, name: string, watcher: XdsResourceWatcher<T>): CancelWatch {
    if (this.closed) {
      this.clock.setTimer(0, () =>
        watcher.onResourceError(status(Code.UNAVAILABLE, 'the xDS client is closed')),
      );
      return () => {};
    }
    return this.cache.watch(type, name, watcher);
  }

  /** The cache as CSDS would show it (A40, A88 state names), with the stream's state. */
  dump(): XdsClientDump {
    const connectivityError = this.stream.connectivityError;
    return {
      serverUri: this.stream.server.serverUri,
      now: this.clock.now(),
      node: this.options.bootstrap.node,
      stream: this.stream.state,
      ...(connectivityError && { connectivityError }),
      types: this.stream.versions(),
      resources: this.cache.dump(),
    };
  }

  /** Ends the stream and every timer; watchers hear nothing more. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.flushTimer?.();
    this.cache.close();
    this.stream.close();
  }

  /** Coalesces the subscription changes of one turn into one request per type. */
  private scheduleFlush(): void {
    if (this.flushTimer || this.closed) return;
    this.flushTimer = this.clock.setTimer(0, () => {
      this.flushTimer = undefined;
      this.cache.prune();
      this.stream.sync();
    });
  }
}
