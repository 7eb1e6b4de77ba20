import { create } from '@bufbuild/protobuf';
import { type CancelTimer, type Clock, realClock } from '../../core/clock.js';
import { type BackoffOptions, ExponentialBackoff, envFlag } from '../../core/index.js';
import type { Trace } from '../../core/load-balancer.js';
import { Code, formatStatus, OK_STATUS, type Status, status } from '../../core/status.js';
import type { Node } from '../../protos/gen/envoy/config/core/v3/base_pb.js';
import {
  DiscoveryRequestSchema,
  type DiscoveryResponse,
} from '../../protos/gen/envoy/service/discovery/v3/discovery_pb.js';
import { StatusSchema } from '../../protos/gen/google/rpc/status_pb.js';
import { shortTypeName } from '../../protos/type-urls.js';
import type { XdsBootstrap, XdsServerConfig } from './bootstrap.js';
import { CacheEntry, type WatchRegistration } from './cache-entry.js';
import { decodeResources } from './decode-response.js';
import { dumpEntry, type XdsClientDump } from './dump.js';
import { nodeProto } from './node.js';
import type { XdsDecodeContext, XdsResourceType } from './resource-type.js';
import type { AdsStream, XdsTransport, XdsTransportFactory } from './transport.js';
import type { CancelWatch, XdsResourceWatcher, XdsWatcher } from './watcher.js';

/** A88: `false` restores the A53 rules (deletions drop resources unless ignore_resource_deletion). */
export const XDS_DATA_ERROR_HANDLING_ENV = 'GRPC_EXPERIMENTAL_XDS_DATA_ERROR_HANDLING';

/** A27 / A57: a subscribed resource not received within this long does not exist. */
export const RESOURCE_DOES_NOT_EXIST_TIMEOUT_MS = 15_000;
/** A88: with "resource_timer_is_transient_error", the timer lasts this long and reports UNAVAILABLE. */
export const RESOURCE_TRANSIENT_TIMEOUT_MS = 30_000;

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

/** The state of one resource type on the server: A27 SotW bookkeeping. */
class TypeState {
  readonly entries = new Map<string, CacheEntry<unknown>>();
  /** version_info of the last ACKed response; survives stream restarts. */
  version = '';
  /** Nonce of the last response on the current stream. */
  nonce = '';
  /** The names last sent on the current stream, joined; undefined when nothing was sent on it. */
  sentNames: string | undefined;
  nodeSent = false;

  constructor(readonly type: XdsResourceType<unknown>) {}
}

interface ActiveStream {
  readonly id: number;
  stream: AdsStream;
  connected: boolean;
  receivedResponse: boolean;
}

/**
 * The xDS client (gRFC A27, A57, A88): one ADS stream (state of the world, v3) to the first server of the
 * bootstrap, shared by every watcher; a cache of the resources watched, with their versions, errors and
 * does-not-exist timers, all on the given Clock.
 */
export class XdsClient implements XdsWatcher {
  private readonly clock: Clock;
  private readonly trace: Trace;
  private readonly server: XdsServerConfig;
  private readonly transport: XdsTransport;
  private readonly node: Node;
  private readonly decodeContext: XdsDecodeContext;
  private readonly backoff: ExponentialBackoff;
  private readonly dataErrorHandling: boolean;
  private readonly onWatcherError: (error: unknown) => void;
  private readonly types = new Map<string, TypeState>();
  private active: ActiveStream | undefined;
  private streamCount = 0;
  private retryTimer: CancelTimer | undefined;
  private flushTimer: CancelTimer | undefined;
  /** A57: why the last stream failed before any response; told to new watchers of uncached resources. */
  private connectivityError: Status | undefined;
  private closed = false;

  constructor(private readonly options: XdsClientOptions) {
    this.clock = options.clock ?? realClock;
    this.trace = options.trace ?? (() => {});
    const server = options.bootstrap.xdsServers[0];
    if (!server) throw new Error('the xDS bootstrap lists no server');
    this.server = server;
    this.node = nodeProto(options.bootstrap.node);
    this.decodeContext = options.decodeContext;
    this.backoff = new ExponentialBackoff(options.backoff);
    this.dataErrorHandling = options.dataErrorHandling ?? envFlag(XDS_DATA_ERROR_HANDLING_ENV, true);
    this.onWatcherError =
      options.onWatcherError ??
      ((e) => process.emitWarning(`xDS watcher threw: ${e instanceof Error ? e.stack : String(e)}`));
    this.transport = options.transport(server);
  }

  get nodeId(): string {
    return this.options.bootstrap.node.id;
  }

  watch<T>(type: XdsResourceType<T>, name: string, watcher: XdsResourceWatcher<T>): CancelWatch {
    const registration: WatchRegistration<T> = { watcher, active: true };
    if (this.closed) {
      this.clock.setTimer(0, () =>
        watcher.onResourceError(status(Code.UNAVAILABLE, 'the xDS client is closed')),
      );
      return () => {};
    }
    const typeState = this.typeState(type);
    let entry = typeState.entries.get(name) as CacheEntry<T> | undefined;
    if (!entry) {
      entry = new CacheEntry(type, name);
      typeState.entries.set(name, entry as CacheEntry<unknown>);
      this.trace(() => `xds client: ${shortTypeName(type.typeUrl)} "${name}" REQUESTED`);
      this.scheduleFlush();
    }
    entry.watches.add(registration);
    const watched = entry;
    // A new watcher hears what the cache already knows, never from inside watch().
    this.clock.setTimer(0, () => {
      if (registration.active) this.replay(watched, registration);
    });
    return () => {
      if (!registration.active) return;
      registration.active = false;
      watched.watches.delete(registration);
      // The entry goes at the next flush, so that a watch cancelled and started again in one turn keeps it.
      if (watched.watches.size === 0) this.scheduleFlush();
    };
  }

  /** The cache as CSDS would show it (A40, A88 state names), with the stream's state. */
  dump(): XdsClientDump {
    const resources = [];
    const types = [];
    for (const [typeUrl, typeState] of this.types) {
      types.push({ typeUrl, version: typeState.version, nonce: typeState.nonce });
      for (const entry of typeState.entries.values()) resources.push(dumpEntry(entry));
    }
    return {
      serverUri: this.server.serverUri,
      now: this.clock.now(),
      node: this.options.bootstrap.node,
      stream: this.streamState(),
      ...(this.connectivityError && { connectivityError: this.connectivityError }),
      types,
      resources,
    };
  }

  /** Ends the stream and every timer; watchers hear nothing more. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.retryTimer?.();
    this.flushTimer?.();
    for (const typeState of this.types.values()) {
      for (const entry of typeState.entries.values()) entry.cancelTimer();
    }
    this.active?.stream.close();
    this.active = undefined;
    this.transport.close();
  }

  private streamState(): XdsClientDump['stream'] {
    if (this.closed) return 'closed';
    if (this.active) return this.active.connected ? 'connected' : 'connecting';
    return this.retryTimer ? 'backoff' : 'idle';
  }

  private typeState(type: XdsResourceType<unknown>): TypeState {
    let typeState = this.types.get(type.typeUrl);
    if (!typeState) {
      typeState = new TypeState(type);
      this.types.set(type.typeUrl, typeState);
    } else if (typeState.type !== type) {
      throw new Error(`two resource types share the type URL ${type.typeUrl}`);
    }
    return typeState;
  }

  private replay<T>(entry: CacheEntry<T>, registration: WatchRegistration<T>): void {
    if (entry.hasValue) {
      this.notify(registration, (w) => w.onResourceChanged(entry.value as T));
      // A88 "New Watchers Started After Ambient Errors": the resource, then the ambient error.
      if (entry.ambient) this.notify(registration, (w) => w.onAmbientError(entry.ambient!));
    } else if (entry.error && entry.status !== 'REQUESTED') {
      this.notify(registration, (w) => w.onResourceError(entry.error!.status));
    } else if (this.connectivityError) {
      this.notify(registration, (w) => w.onResourceError(this.connectivityError!));
    }
  }

  private notify<T>(
    registration: WatchRegistration<T>,
    call: (watcher: XdsResourceWatcher<T>) => void,
  ): void {
    if (!registration.active) return;
    try {
      call(registration.watcher);
    } catch (e) {
      this.onWatcherError(e);
    }
  }

  /** Calls every current watcher of the entry (a copy: watchers may cancel or add watches meanwhile). */
  private notifyAll<T>(entry: CacheEntry<T>, call: (watcher: XdsResourceWatcher<T>) => void): void {
    for (const registration of [...entry.watches]) this.notify(registration, call);
  }

  // --- subscriptions -------------------------------------------------------------------------------------

  /** Coalesces the subscription changes of one turn into one request per type. */
  private scheduleFlush(): void {
    if (this.flushTimer || this.closed) return;
    this.flushTimer = this.clock.setTimer(0, () => {
      this.flushTimer = undefined;
      this.flush();
    });
  }

  private flush(): void {
    let subscribed = false;
    for (const typeState of this.types.values()) {
      for (const [name, entry] of typeState.entries) {
        if (entry.watches.size > 0) continue;
        entry.cancelTimer();
        typeState.entries.delete(name);
        this.trace(() => `xds client: ${shortTypeName(typeState.type.typeUrl)} "${name}" unsubscribed`);
      }
      if (typeState.entries.size > 0) subscribed = true;
      if (this.active) this.sendRequest(this.active, typeState, false);
    }
    if (subscribed && !this.active && !this.retryTimer) this.startStream();
  }

  /**
   * Sends the type's subscription with its last ACKed version and nonce: when the names changed, or always
   * for an ACK / NACK (`force`). Node identity goes in the first request of each type on a stream.
   */
  private sendRequest(
    stream: ActiveStream,
    typeState: TypeState,
    force: boolean,
    errorDetail?: string,
  ): void {
    const names = [...typeState.entries.keys()].sort();
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
      typeUrl: typeState.type.typeUrl,
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
        `xds client: ${errorDetail !== undefined ? 'NACK' : force ? 'ACK' : 'request'} ${shortTypeName(typeState.type.typeUrl)} ` +
        `(${names.length} names, version "${request.versionInfo}", nonce "${request.responseNonce}")` +
        (errorDetail !== undefined ? `: ${errorDetail}` : ''),
    );
    stream.stream.send(request);
    for (const entry of typeState.entries.values()) {
      if (entry.sentOnStream === stream.id) continue;
      entry.sentOnStream = stream.id;
      if (stream.connected) this.startTimer(entry);
    }
  }

  // --- the stream ----------------------------------------------------------------------------------------

  private startStream(): void {
    const id = ++this.streamCount;
    for (const typeState of this.types.values()) {
      typeState.nonce = '';
      typeState.sentNames = undefined;
      typeState.nodeSent = false;
    }
    const record: ActiveStream = {
      id,
      stream: undefined as unknown as AdsStream,
      connected: false,
      receivedResponse: false,
    };
    this.active = record;
    this.trace(() => `xds client: starting ADS stream ${id} to ${this.server.serverUri}`);
    record.stream = this.transport.openAdsStream({
      onConnected: () => this.onConnected(record),
      onResponse: (response) => this.onResponse(record, response),
      onClose: (s) => this.onStreamClosed(record, s),
    });
    // A new stream re-sends every subscription, with the versions last ACKed.
    for (const typeState of this.types.values()) this.sendRequest(record, typeState, false);
  }

  private onConnected(stream: ActiveStream): void {
    if (stream !== this.active || stream.connected) return;
    stream.connected = true;
    this.trace(() => `xds client: ADS stream ${stream.id} connected`);
    for (const typeState of this.types.values()) {
      for (const entry of typeState.entries.values())
        if (entry.sentOnStream === stream.id) this.startTimer(entry);
    }
  }

  private onStreamClosed(stream: ActiveStream, closeStatus: Status): void {
    if (stream !== this.active) return;
    this.active = undefined;
    for (const typeState of this.types.values()) {
      for (const entry of typeState.entries.values()) entry.cancelTimer();
    }
    if (stream.receivedResponse) {
      // A57: a stream that got a response may end for ordinary reasons (max connection age); retry at once.
      this.trace(
        () => `xds client: ADS stream ${stream.id} ended after responses (${formatStatus(closeStatus)})`,
      );
      this.retryTimer = this.clock.setTimer(0, () => this.retry());
      return;
    }
    const error = status(
      Code.UNAVAILABLE,
      `xDS stream to ${this.server.serverUri} failed before any response: ${formatStatus(closeStatus)} (node ID ${this.nodeId})`,
    );
    this.connectivityError = error;
    const delay = this.backoff.next();
    this.trace(() => `xds client: ${error.details}; retrying in ${Math.round(delay)} ms`);
    this.retryTimer = this.clock.setTimer(delay, () => this.retry());
    // A57 / A88: a connectivity error is ambient for a cached resource, and the reason it fails otherwise.
    for (const typeState of this.types.values()) {
      for (const entry of typeState.entries.values()) {
        if (entry.hasValue) {
          entry.ambient = error;
          this.notifyAll(entry, (w) => w.onAmbientError(error));
        } else {
          this.notifyAll(entry, (w) => w.onResourceError(error));
        }
      }
    }
  }

  private retry(): void {
    this.retryTimer = undefined;
    if (this.closed || this.active) return;
    this.flush();
  }

  // --- responses -----------------------------------------------------------------------------------------

  private onResponse(stream: ActiveStream, response: DiscoveryResponse): void {
    if (stream !== this.active) return;
    if (!stream.receivedResponse) {
      stream.receivedResponse = true;
      // A57: the backoff starts over once a stream attempt gets a response.
      this.backoff.reset();
      this.connectivityError = undefined;
    }
    const typeState = this.types.get(response.typeUrl);
    const shortName = shortTypeName(response.typeUrl);
    this.trace(
      () =>
        `xds client: response ${shortName} version "${response.versionInfo}" nonce "${response.nonce}" ` +
        `(${response.resources.length} resources)`,
    );
    if (!typeState) {
      stream.stream.send(
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
    const version = response.versionInfo;
    const now = this.clock.now();
    const { valid, invalid } = decodeResources(typeState.type, response.resources, this.decodeContext);
    const seen = new Set<string>();
    for (const resource of valid) {
      seen.add(resource.name);
      const entry = typeState.entries.get(resource.name);
      if (entry) this.accept(entry, resource.value, resource.bytes, version, now);
    }
    for (const problem of invalid) {
      if (problem.name === undefined) continue;
      seen.add(problem.name);
      const entry = typeState.entries.get(problem.name);
      if (entry) this.reject(entry, problem.error, version, now);
    }
    // A27 SotW: in LDS and CDS a resource missing from a response was deleted. When a resource's name could
    // not be read, the missing one may be it, so nothing is taken as deleted.
    if (typeState.type.allResourcesRequiredInSotW && invalid.every((p) => p.name !== undefined)) {
      for (const entry of typeState.entries.values()) {
        if (!seen.has(entry.name) && entry.hasValue && entry.status !== 'DOES_NOT_EXIST') {
          this.deleted(entry, version, now);
        }
      }
    }
    if (invalid.length === 0) {
      typeState.version = version;
      this.sendRequest(stream, typeState, true);
    } else {
      const reasons = invalid.map(
        (p) => `${shortName} ${p.name === undefined ? `resources[${p.index}]` : `"${p.name}"`}: ${p.error}`,
      );
      this.sendRequest(stream, typeState, true, reasons.join('; '));
    }
  }

  private accept<T>(entry: CacheEntry<T>, value: T, bytes: Uint8Array, version: string, now: number): void {
    entry.cancelTimer();
    const unchanged = entry.sameAsCached(value, bytes);
    const previous = entry.status;
    entry.status = 'ACKED';
    entry.error = undefined;
    entry.setValue(value, bytes, version, now);
    if (previous !== 'ACKED' || !unchanged) {
      this.trace(
        () => `xds client: ${shortTypeName(entry.type.typeUrl)} "${entry.name}" ACKED version "${version}"`,
      );
    }
    if (!unchanged) {
      entry.ambient = undefined;
      this.notifyAll(entry, (w) => w.onResourceChanged(value));
    } else if (entry.ambient) {
      // A88: an ambient error is cleared by an OK status; the resource itself did not change.
      entry.ambient = undefined;
      this.notifyAll(entry, (w) => w.onAmbientError(OK_STATUS));
    }
  }

  /** A NACKed resource (A88 "Handling Data Errors"). */
  private reject(entry: CacheEntry<unknown>, reason: string, version: string, now: number): void {
    entry.cancelTimer();
    const error = status(
      Code.INVALID_ARGUMENT,
      `xDS NACK of ${shortTypeName(entry.type.typeUrl)} "${entry.name}" version "${version}": ${reason} (node ID ${this.nodeId})`,
    );
    entry.status = 'NACKED';
    entry.error = { status: error, version, at: now };
    this.trace(() => `xds client: ${shortTypeName(entry.type.typeUrl)} "${entry.name}" NACKED: ${reason}`);
    this.dataError(entry, error, this.dataErrorHandling && this.server.failOnDataErrors);
  }

  /** A LDS / CDS resource left out of a response (A53, A88). */
  private deleted(entry: CacheEntry<unknown>, version: string, now: number): void {
    const error = status(
      Code.NOT_FOUND,
      `xDS ${shortTypeName(entry.type.typeUrl)} "${entry.name}" was removed by the server (version "${version}", node ID ${this.nodeId})`,
    );
    entry.status = 'DOES_NOT_EXIST';
    entry.error = { status: error, version, at: now };
    if (this.dataErrorHandling) {
      this.trace(
        () => `xds client: ${shortTypeName(entry.type.typeUrl)} "${entry.name}" DOES_NOT_EXIST (deleted)`,
      );
      this.dataError(entry, error, this.server.failOnDataErrors);
    } else if (this.server.ignoreResourceDeletion) {
      // A53: keep the resource and tell no watcher; the dump shows DOES_NOT_EXIST with the cached value.
      this.trace(
        () =>
          `xds client: WARNING: ignoring the deletion of ${shortTypeName(entry.type.typeUrl)} "${entry.name}" (ignore_resource_deletion)`,
      );
    } else {
      this.trace(
        () => `xds client: ${shortTypeName(entry.type.typeUrl)} "${entry.name}" DOES_NOT_EXIST (deleted)`,
      );
      this.dataError(entry, error, true);
    }
  }

  /** A88: a data error drops a cached resource only when asked to; otherwise it is ambient. */
  private dataError(entry: CacheEntry<unknown>, error: Status, dropCached: boolean): void {
    if (entry.hasValue && !dropCached) {
      entry.ambient = error;
      this.notifyAll(entry, (w) => w.onAmbientError(error));
      return;
    }
    entry.dropValue();
    this.notifyAll(entry, (w) => w.onResourceError(error));
  }

  // --- the does-not-exist timer (A27, A57, A88) -------------------------------------------------------------

  /** Runs only for a resource never received, from when its subscription is on a connected stream. */
  private startTimer(entry: CacheEntry<unknown>): void {
    if (entry.timer || entry.hasValue || entry.status !== 'REQUESTED') return;
    const transient = this.dataErrorHandling && this.server.resourceTimerIsTransientError;
    const timeout = transient ? RESOURCE_TRANSIENT_TIMEOUT_MS : RESOURCE_DOES_NOT_EXIST_TIMEOUT_MS;
    entry.timer = this.clock.setTimer(timeout, () => {
      entry.timer = undefined;
      const shortName = shortTypeName(entry.type.typeUrl);
      const error = transient
        ? status(
            Code.UNAVAILABLE,
            `xDS ${shortName} "${entry.name}" not received within ${timeout / 1000} s (node ID ${this.nodeId})`,
          )
        : status(
            Code.NOT_FOUND,
            `xDS ${shortName} "${entry.name}" does not exist (not received within ${timeout / 1000} s, node ID ${this.nodeId})`,
          );
      entry.status = transient ? 'TIMEOUT' : 'DOES_NOT_EXIST';
      entry.error = { status: error, version: '', at: this.clock.now() };
      this.trace(() => `xds client: ${shortName} "${entry.name}" ${entry.status} (resource timer)`);
      this.notifyAll(entry, (w) => w.onResourceError(error));
    });
  }
}
