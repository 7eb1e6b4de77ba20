import type { Any } from '@bufbuild/protobuf/wkt';
import { type CancelTimer, type Clock, realClock } from '../../core/clock.js';
import { type BackoffOptions, envFlag } from '../../core/index.js';
import type { Trace } from '../../core/load-balancer.js';
import { Code, OK_STATUS, type Status, status } from '../../core/status.js';
import { shortTypeName } from '../../protos/type-urls.js';
import { ServerAdsStream } from './ads-stream.js';
import type { XdsBootstrap, XdsServerConfig } from './bootstrap.js';
import { CacheEntry, type WatchRegistration } from './cache-entry.js';
import { decodeResources } from './decode-response.js';
import { dumpEntry, type XdsClientDump } from './dump.js';
import { nodeProto } from './node.js';
import type { XdsDecodeContext, XdsResourceType } from './resource-type.js';
import type { XdsTransportFactory } from './transport.js';
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

/** The cache entries of one resource type. */
class TypeEntries {
  readonly entries = new Map<string, CacheEntry<unknown>>();

  constructor(readonly type: XdsResourceType<unknown>) {}
}

/**
 * The xDS client (gRFC A27, A57, A88): one ADS stream (state of the world, v3) to the first server of the
 * bootstrap, shared by every watcher; a cache of the resources watched, with their versions, errors and
 * does-not-exist timers, all on the given Clock.
 */
export class XdsClient implements XdsWatcher {
  private readonly clock: Clock;
  private readonly trace: Trace;
  private readonly stream: ServerAdsStream;
  private readonly decodeContext: XdsDecodeContext;
  private readonly dataErrorHandling: boolean;
  private readonly onWatcherError: (error: unknown) => void;
  private readonly types = new Map<string, TypeEntries>();
  private flushTimer: CancelTimer | undefined;
  private closed = false;

  constructor(private readonly options: XdsClientOptions) {
    this.clock = options.clock ?? realClock;
    this.trace = options.trace ?? (() => {});
    const server = options.bootstrap.xdsServers[0];
    if (!server) throw new Error('the xDS bootstrap lists no server');
    this.decodeContext = options.decodeContext;
    this.dataErrorHandling = options.dataErrorHandling ?? envFlag(XDS_DATA_ERROR_HANDLING_ENV, true);
    this.onWatcherError =
      options.onWatcherError ??
      ((e) => process.emitWarning(`xDS watcher threw: ${e instanceof Error ? e.stack : String(e)}`));
    this.stream = new ServerAdsStream({
      server,
      transport: options.transport,
      node: nodeProto(options.bootstrap.node),
      clock: this.clock,
      trace: this.trace,
      ...(options.backoff && { backoff: options.backoff }),
      events: {
        onRequested: (typeUrl, names) => this.startTimers(typeUrl, names),
        onResources: (typeUrl, version, resources) => this.onResources(typeUrl, version, resources),
        onEnded: (connectivityError) => this.onStreamEnded(connectivityError),
        beforeReconnect: () => this.prune(),
      },
    });
  }

  private get server(): XdsServerConfig {
    return this.stream.server;
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
    const typeEntries = this.typeEntries(type);
    let entry = typeEntries.entries.get(name) as CacheEntry<T> | undefined;
    if (!entry) {
      entry = new CacheEntry(type, name);
      typeEntries.entries.set(name, entry as CacheEntry<unknown>);
      this.trace(() => `xds client: ${shortTypeName(type.typeUrl)} "${name}" REQUESTED`);
      this.stream.subscribe(type.typeUrl, name);
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
    for (const typeEntries of this.types.values()) {
      for (const entry of typeEntries.entries.values()) resources.push(dumpEntry(entry));
    }
    const connectivityError = this.stream.connectivityError;
    return {
      serverUri: this.server.serverUri,
      now: this.clock.now(),
      node: this.options.bootstrap.node,
      stream: this.stream.state,
      ...(connectivityError && { connectivityError }),
      types: this.stream.versions(),
      resources,
    };
  }

  /** Ends the stream and every timer; watchers hear nothing more. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.flushTimer?.();
    for (const typeEntries of this.types.values()) {
      for (const entry of typeEntries.entries.values()) entry.cancelTimer();
    }
    this.stream.close();
  }

  private typeEntries(type: XdsResourceType<unknown>): TypeEntries {
    let typeEntries = this.types.get(type.typeUrl);
    if (!typeEntries) {
      typeEntries = new TypeEntries(type);
      this.types.set(type.typeUrl, typeEntries);
    } else if (typeEntries.type !== type) {
      throw new Error(`two resource types share the type URL ${type.typeUrl}`);
    }
    return typeEntries;
  }

  private replay<T>(entry: CacheEntry<T>, registration: WatchRegistration<T>): void {
    if (entry.hasValue) {
      this.notify(registration, (w) => w.onResourceChanged(entry.value as T));
      // A88 "New Watchers Started After Ambient Errors": the resource, then the ambient error.
      if (entry.ambient) this.notify(registration, (w) => w.onAmbientError(entry.ambient!));
    } else if (entry.error && entry.status !== 'REQUESTED') {
      this.notify(registration, (w) => w.onResourceError(entry.error!.status));
    } else {
      const connectivityError = this.stream.connectivityError;
      if (connectivityError) this.notify(registration, (w) => w.onResourceError(connectivityError));
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
      this.prune();
      this.stream.sync();
    });
  }

  /** Drops the entries no watcher wants any more, and their names from the subscription. */
  private prune(): void {
    for (const typeEntries of this.types.values()) {
      for (const [name, entry] of typeEntries.entries) {
        if (entry.watches.size > 0) continue;
        entry.cancelTimer();
        typeEntries.entries.delete(name);
        this.stream.unsubscribe(typeEntries.type.typeUrl, name);
        this.trace(() => `xds client: ${shortTypeName(typeEntries.type.typeUrl)} "${name}" unsubscribed`);
      }
    }
  }

  // --- stream events -------------------------------------------------------------------------------------

  private onStreamEnded(connectivityError: Status | undefined): void {
    for (const typeEntries of this.types.values()) {
      for (const entry of typeEntries.entries.values()) entry.cancelTimer();
    }
    if (!connectivityError) return;
    const error = connectivityError;
    // A57 / A88: a connectivity error is ambient for a cached resource, and the reason it fails otherwise.
    for (const typeEntries of this.types.values()) {
      for (const entry of typeEntries.entries.values()) {
        if (entry.hasValue) {
          entry.ambient = error;
          this.notifyAll(entry, (w) => w.onAmbientError(error));
        } else {
          this.notifyAll(entry, (w) => w.onResourceError(error));
        }
      }
    }
  }

  // --- responses -----------------------------------------------------------------------------------------

  /** Applies one response of a type; returns the NACK's error detail, or undefined when all was valid. */
  private onResources(typeUrl: string, version: string, resources: readonly Any[]): string | undefined {
    const typeEntries = this.types.get(typeUrl);
    if (!typeEntries) return `resource type ${typeUrl} was not subscribed to`;
    const now = this.clock.now();
    const { valid, invalid } = decodeResources(typeEntries.type, resources, this.decodeContext);
    const seen = new Set<string>();
    for (const resource of valid) {
      seen.add(resource.name);
      const entry = typeEntries.entries.get(resource.name);
      if (entry) this.accept(entry, resource.value, resource.bytes, version, now);
    }
    for (const problem of invalid) {
      if (problem.name === undefined) continue;
      seen.add(problem.name);
      const entry = typeEntries.entries.get(problem.name);
      if (entry) this.reject(entry, problem.error, version, now);
    }
    // A27 SotW: in LDS and CDS a resource missing from a response was deleted. When a resource's name could
    // not be read, the missing one may be it, so nothing is taken as deleted.
    if (typeEntries.type.allResourcesRequiredInSotW && invalid.every((p) => p.name !== undefined)) {
      for (const entry of typeEntries.entries.values()) {
        if (!seen.has(entry.name) && entry.hasValue && entry.status !== 'DOES_NOT_EXIST') {
          this.deleted(entry, version, now);
        }
      }
    }
    if (invalid.length === 0) return undefined;
    const shortName = shortTypeName(typeUrl);
    return invalid
      .map(
        (p) => `${shortName} ${p.name === undefined ? `resources[${p.index}]` : `"${p.name}"`}: ${p.error}`,
      )
      .join('; ');
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

  /** The names went out on a connected stream: their timers start (A57). */
  private startTimers(typeUrl: string, names: readonly string[]): void {
    const typeEntries = this.types.get(typeUrl);
    if (!typeEntries) return;
    for (const name of names) {
      const entry = typeEntries.entries.get(name);
      if (entry) this.startTimer(entry);
    }
  }

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
