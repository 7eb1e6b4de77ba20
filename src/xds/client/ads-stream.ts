// The ADS stream to one xDS server, across reconnects: the server's transport, one call at a time, and the
// state of the world bookkeeping per type (gRFC A27: version last ACKed, nonce, names last sent, the node in
// the first request of each type; A57: retry at once after a stream that got a response, else backoff and a
// connectivity error). It sends requests, ACKs and NACKs; what the resources mean (decoding, the cache, the
// watchers and their timers) belongs to its owner, which it reaches only through AdsStreamEvents.
import { create } from '@bufbuild/protobuf';
import type { Any } from '@bufbuild/protobuf/wkt';
import type { CancelTimer, Clock } from '../../core/clock.js';
import { type BackoffOptions, ExponentialBackoff } from '../../core/index.js';
import type { Trace } from '../../core/load-balancer.js';
import { Code, formatStatus, type Status, status } from '../../core/status.js';
import type { Node } from '../../protos/gen/envoy/config/core/v3/base_pb.js';
import {
  DiscoveryRequestSchema,
  type DiscoveryResponse,
} from '../../protos/gen/envoy/service/discovery/v3/discovery_pb.js';
import { StatusSchema } from '../../protos/gen/google/rpc/status_pb.js';
import { shortTypeName } from '../../protos/type-urls.js';
import type { XdsServerConfig } from './bootstrap.js';
import type { AdsStream, XdsTransport, XdsTransportFactory } from './transport.js';

/** What the stream tells its owner. */
export interface AdsStreamEvents {
  /**
   * These subscribed names of the type went out on a call whose transport is connected (each name once per
   * call): their does-not-exist timers may start (A57 "Handling Resources That Do Not Exist").
   */
  onRequested(typeUrl: string, names: readonly string[]): void;
  /**
   * A response of a subscribed type, to decode and apply. Returns the NACK's error_detail, or undefined to ACK
   * (the response's version then becomes the type's version).
   */
  onResources(typeUrl: string, version: string, resources: readonly Any[]): string | undefined;
  /**
   * The call ended; the subscriptions' timers stop. `connectivityError` is set when it failed before any
   * response (A57): ambient for a cached resource, the failure of one not received.
   */
  onEnded(connectivityError: Status | undefined): void;
  /** The backoff is over and a call is about to open: the moment to drop names no one watches any more. */
  beforeReconnect(): void;
  /** A78 / A57: the server went from healthy to unhealthy (a call failed before any response). */
  onServerFailure?(): void;
}

export interface ServerAdsStreamOptions {
  readonly server: XdsServerConfig;
  readonly transport: XdsTransportFactory;
  /** Sent in the first request of each type on each call. */
  readonly node: Node;
  readonly clock: Clock;
  readonly trace: Trace;
  readonly backoff?: BackoffOptions;
  readonly events: AdsStreamEvents;
}

export type AdsStreamState = 'idle' | 'connecting' | 'connected' | 'backoff' | 'closed';

/** A27 SotW bookkeeping of one resource type on this server. */
class TypeState {
  /** The subscribed names, in the order subscribed, each with the id of the call it went out on (0: none). */
  readonly names = new Map<string, number>();
  /** version_info of the last ACKed response; survives reconnects. */
  version = '';
  /** Nonce of the last response on the current call. */
  nonce = '';
  /** The names last sent on the current call, joined; undefined when nothing was sent on it. */
  sentNames: string | undefined;
  nodeSent = false;

  constructor(readonly typeUrl: string) {}
}

/** One ADS call to the server. */
interface Call {
  readonly id: number;
  stream: AdsStream;
  connected: boolean;
  receivedResponse: boolean;
}

export class ServerAdsStream {
  readonly server: XdsServerConfig;
  private readonly transport: XdsTransport;
  private readonly node: Node;
  private readonly clock: Clock;
  private readonly trace: Trace;
  private readonly backoff: ExponentialBackoff;
  private readonly events: AdsStreamEvents;
  private readonly types = new Map<string, TypeState>();
  private call: Call | undefined;
  private callCount = 0;
  private retryTimer: CancelTimer | undefined;
  private lastFailure: Status | undefined;
  private closed = false;

  constructor(options: ServerAdsStreamOptions) {
    this.server = options.server;
    this.node = options.node;
    this.clock = options.clock;
    this.trace = options.trace;
    this.backoff = new ExponentialBackoff(options.backoff);
    this.events = options.events;
    this.transport = options.transport(options.server);
  }

  get state(): AdsStreamState {
    if (this.closed) return 'closed';
    if (this.call) return this.call.connected ? 'connected' : 'connecting';
    return this.retryTimer ? 'backoff' : 'idle';
  }

  /** A57: why the last call failed before any response, until a response arrives. */
  get connectivityError(): Status | undefined {
    return this.lastFailure;
  }

  /** Per type, in the order first subscribed: the last ACKed version_info and the current call's nonce. */
  versions(): { typeUrl: string; version: string; nonce: string }[] {
    return [...this.types.values()].map((t) => ({ typeUrl: t.typeUrl, version: t.version, nonce: t.nonce }));
  }

  /**
   * Adds a name to the type's subscription. It goes out at the next sync(), or with the type's next ACK or
   * NACK, whichever comes first.
   */
  subscribe(typeUrl: string, name: string): void {
    let typeState = this.types.get(typeUrl);
    if (!typeState) {
      typeState = new TypeState(typeUrl);
      this.types.set(typeUrl, typeState);
    }
    if (!typeState.names.has(name)) typeState.names.set(name, 0);
  }

  /** Drops a name from the type's subscription (sent at the next sync(), ACK or NACK). */
  unsubscribe(typeUrl: string, name: string): void {
    this.types.get(typeUrl)?.names.delete(name);
  }

  /**
   * Sends each type's subscription that changed since it was last sent, and opens a call when some name is
   * subscribed and none is open or waiting out its backoff.
   */
  sync(): void {
    if (this.closed) return;
    let subscribed = false;
    for (const typeState of this.types.values()) {
      if (typeState.names.size > 0) subscribed = true;
      if (this.call) this.sendRequest(this.call, typeState, false);
    }
    if (subscribed && !this.call && !this.retryTimer) this.open();
  }

  /** Ends the call, the backoff and the transport; no event follows. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.retryTimer?.();
    this.call?.stream.close();
    this.call = undefined;
    this.transport.close();
  }

  /**
   * Sends the type's subscription with its last ACKed version and nonce: when the names changed, or always
   * for an ACK / NACK (`force`). Node identity goes in the first request of each type on a call.
   */
  private sendRequest(call: Call, typeState: TypeState, force: boolean, errorDetail?: string): void {
    const names = [...typeState.names.keys()].sort();
    const key = names.join('\n');
    if (
      !force &&
      (key === typeState.sentNames || (typeState.sentNames === undefined && names.length === 0))
    ) {
      return;
    }
    typeState.sentNames = key;
    const includeNode = !typeState.nodeSent;
    typeState.nodeSent = true;
    const request = create(DiscoveryRequestSchema, {
      typeUrl: typeState.typeUrl,
      resourceNames: names,
      versionInfo: typeState.version,
      responseNonce: typeState.nonce,
      ...(includeNode && { node: this.node }),
      ...(errorDetail !== undefined && {
        errorDetail: create(StatusSchema, { code: Code.INVALID_ARGUMENT, message: errorDetail }),
      }),
    });
    this.trace(
      () =>
        `xds client: ${errorDetail !== undefined ? 'NACK' : force ? 'ACK' : 'request'} ${shortTypeName(typeState.typeUrl)} ` +
        `(${names.length} names, version "${request.versionInfo}", nonce "${request.responseNonce}")` +
        (errorDetail !== undefined ? `: ${errorDetail}` : ''),
    );
    call.stream.send(request);
    const fresh: string[] = [];
    for (const [name, sentOn] of typeState.names) {
      if (sentOn === call.id) continue;
      typeState.names.set(name, call.id);
      fresh.push(name);
    }
    if (call.connected && fresh.length > 0) this.events.onRequested(typeState.typeUrl, fresh);
  }

  private open(): void {
    const id = ++this.callCount;
    for (const typeState of this.types.values()) {
      typeState.nonce = '';
      typeState.sentNames = undefined;
      typeState.nodeSent = false;
    }
    const call: Call = {
      id,
      stream: undefined as unknown as AdsStream,
      connected: false,
      receivedResponse: false,
    };
    this.call = call;
    this.trace(() => `xds client: starting ADS stream ${id} to ${this.server.serverUri}`);
    call.stream = this.transport.openAdsStream({
      onConnected: () => this.onConnected(call),
      onResponse: (response) => this.onResponse(call, response),
      onClose: (s) => this.onClosed(call, s),
    });
    // A new call re-sends every subscription, with the versions last ACKed.
    for (const typeState of this.types.values()) this.sendRequest(call, typeState, false);
  }

  private onConnected(call: Call): void {
    if (call !== this.call || call.connected) return;
    call.connected = true;
    this.trace(() => `xds client: ADS stream ${call.id} connected`);
    for (const typeState of this.types.values()) {
      const sent = [...typeState.names].filter(([, sentOn]) => sentOn === call.id).map(([name]) => name);
      if (sent.length > 0) this.events.onRequested(typeState.typeUrl, sent);
    }
  }

  private onClosed(call: Call, closeStatus: Status): void {
    if (call !== this.call) return;
    this.call = undefined;
    if (call.receivedResponse) {
      // A57: a call that got a response may end for ordinary reasons (max connection age); retry at once.
      this.trace(
        () => `xds client: ADS stream ${call.id} ended after responses (${formatStatus(closeStatus)})`,
      );
      this.retryTimer = this.clock.setTimer(0, () => this.retry());
      this.events.onEnded(undefined);
      return;
    }
    const error = status(
      Code.UNAVAILABLE,
      `xDS stream to ${this.server.serverUri} failed before any response: ${formatStatus(closeStatus)} (node ID ${this.node.id})`,
    );
    // A78: the server goes from healthy to unhealthy (again only after a response).
    if (this.lastFailure === undefined) this.events.onServerFailure?.();
    this.lastFailure = error;
    const delay = this.backoff.next();
    this.trace(() => `xds client: ${error.details}; retrying in ${Math.round(delay)} ms`);
    this.retryTimer = this.clock.setTimer(delay, () => this.retry());
    this.events.onEnded(error);
  }

  private retry(): void {
    this.retryTimer = undefined;
    if (this.closed || this.call) return;
    this.events.beforeReconnect();
    this.sync();
  }

  private onResponse(call: Call, response: DiscoveryResponse): void {
    if (call !== this.call) return;
    if (!call.receivedResponse) {
      call.receivedResponse = true;
      // A57: the backoff starts over once a call gets a response.
      this.backoff.reset();
      this.lastFailure = undefined;
    }
    const typeState = this.types.get(response.typeUrl);
    this.trace(
      () =>
        `xds client: response ${shortTypeName(response.typeUrl)} version "${response.versionInfo}" ` +
        `nonce "${response.nonce}" (${response.resources.length} resources)`,
    );
    if (!typeState) {
      call.stream.send(
        create(DiscoveryRequestSchema, {
          typeUrl: response.typeUrl,
          responseNonce: response.nonce,
          errorDetail: create(StatusSchema, {
            code: Code.INVALID_ARGUMENT,
            message: `resource type ${response.typeUrl} was not subscribed to`,
          }),
        }),
      );
      return;
    }
    typeState.nonce = response.nonce;
    const nack = this.events.onResources(response.typeUrl, response.versionInfo, response.resources);
    if (nack === undefined) {
      typeState.version = response.versionInfo;
      this.sendRequest(call, typeState, true);
    } else {
      this.sendRequest(call, typeState, true, nack);
    }
  }
}
