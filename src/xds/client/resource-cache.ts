// The resources watched and their watchers (gRFC A27, A53, A57, A88), knowing nothing of the wire: cache
// entries per type and name, watcher registration, the cache told at once (never from inside watch()) to a new
// watcher, notifications that survive a watcher that throws, the does-not-exist timer (A27 / A57, A88's
// transient variant), and the data and ambient errors of A88: NACKs, deletions (A53's ignore_resource_deletion
// when A88 is off), connectivity errors.
import type { Any } from '@bufbuild/protobuf/wkt';
import type { Clock } from '../../core/clock.js';
import type { Trace } from '../../core/load-balancer.js';
import { Code, OK_STATUS, type Status, status } from '../../core/status.js';
import { shortTypeName } from '../../protos/type-urls.js';
import type { XdsServerConfig } from './bootstrap.js';
import { CacheEntry, type WatchRegistration } from './cache-entry.js';
import { type DecodedResponse, decodeResources, type InvalidResource } from './decode-response.js';
import { dumpEntry, type XdsResourceDump } from './dump.js';
import type { XdsDecodeContext, XdsResourceType } from './resource-type.js';
import type { CancelWatch, XdsResourceWatcher } from './watcher.js';

/** A27 / A57: a subscribed resource not received within this long does not exist. */
export const RESOURCE_DOES_NOT_EXIST_TIMEOUT_MS = 15_000;
/** A88: with "resource_timer_is_transient_error", the timer lasts this long and reports UNAVAILABLE. */
export const RESOURCE_TRANSIENT_TIMEOUT_MS = 30_000;

/**
 * The server features (A88, A53) that decide what a data error or the resource timer does; the client hands
 * the whole XdsServerConfig, whose URI the dump shows as where a resource came from.
 */
export type ServerFeatures = Pick<
  XdsServerConfig,
  'failOnDataErrors' | 'ignoreResourceDeletion' | 'resourceTimerIsTransientError'
> & { readonly serverUri?: string };

/** A NACK's error_detail naming every invalid resource of a response (A40), or undefined when none is. */
export function nackDetail(typeUrl: string, invalid: readonly InvalidResource[]): string | undefined {
  if (invalid.length === 0) return undefined;
  const shortName = shortTypeName(typeUrl);
  return invalid
    .map((p) => `${shortName} ${p.name === undefined ? `resources[${p.index}]` : `"${p.name}"`}: ${p.error}`)
    .join('; ');
}

/** How the cache's subscriptions reach a server; the owner wires them to an ADS stream. */
export interface CacheSubscriptions {
  /** A name is watched for the first time: it is to be requested. */
  add(typeUrl: string, name: string): void;
  /** prune() dropped a name no watcher wants any more. */
  remove(typeUrl: string, name: string): void;
  /** The subscriptions may change at the end of this turn: call prune(), then send them. */
  flushDue(): void;
}

export interface ResourceCacheOptions {
  readonly clock: Clock;
  readonly trace: Trace;
  /** Named in every error a watcher hears, so that a control plane's operator can find the client. */
  readonly nodeId: string;
  /** Handed as it is to every resource type's decoder. */
  readonly decodeContext: XdsDecodeContext;
  /** A88's data error handling; false: the A53 rules. */
  readonly dataErrorHandling: boolean;
  readonly onWatcherError: (error: unknown) => void;
  readonly subscriptions: CacheSubscriptions;
  /** A57: why the server cannot be reached, while it cannot; a new watcher of a resource not cached hears it. */
  readonly connectivityError: () => Status | undefined;
}

/** The cache entries of one resource type. */
class TypeEntries {
  readonly entries = new Map<string, CacheEntry<unknown>>();

  constructor(readonly type: XdsResourceType<unknown>) {}
}

/**
 * The cache of one authority: what its servers sent, told to its watchers. Timers run on the Clock; the
 * server features come with each event, from the server that caused it.
 */
export class ResourceCache {
  private readonly clock: Clock;
  private readonly trace: Trace;
  private readonly nodeId: string;
  private readonly dataErrorHandling: boolean;
  private readonly types = new Map<string, TypeEntries>();

  constructor(private readonly options: ResourceCacheOptions) {
    this.clock = options.clock;
    this.trace = options.trace;
    this.nodeId = options.nodeId;
    this.dataErrorHandling = options.dataErrorHandling;
  }

  watch<T>(type: XdsResourceType<T>, name: string, watcher: XdsResourceWatcher<T>): CancelWatch {
    const registration: WatchRegistration<T> = { watcher, active: true };
    const typeEntries = this.typeEntries(type);
    let entry = typeEntries.entries.get(name) as CacheEntry<T> | undefined;
    if (!entry) {
      entry = new CacheEntry(type, name);
      typeEntries.entries.set(name, entry as CacheEntry<unknown>);
      this.trace(() => `xds client: ${shortTypeName(type.typeUrl)} "${name}" REQUESTED`);
      this.options.subscriptions.add(type.typeUrl, name);
      this.options.subscriptions.flushDue();
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
      // The entry goes at the next prune, so that a watch cancelled and started again in one turn keeps it.
      if (watched.watches.size === 0) this.options.subscriptions.flushDue();
    };
  }

  /** Drops the entries no watcher wants any more, and their names from the subscriptions. */
  prune(): void {
    for (const typeEntries of this.types.values()) {
      for (const [name, entry] of typeEntries.entries) {
        if (entry.watches.size > 0) continue;
        entry.cancelTimer();
        typeEntries.entries.delete(name);
        this.options.subscriptions.remove(typeEntries.type.typeUrl, name);
        this.trace(() => `xds client: ${shortTypeName(typeEntries.type.typeUrl)} "${name}" unsubscribed`);
      }
    }
  }

  /** Every entry as CSDS shows it, by type in the order first watched, then by name in the same order. */
  dump(): XdsResourceDump[] {
    const resources = [];
    for (const typeEntries of this.types.values()) {
      for (const entry of typeEntries.entries.values()) resources.push(dumpEntry(entry));
    }
    return resources;
  }

  /** Every cache entry (the XdsClient's resources gauge, A78). */
  *allEntries(): IterableIterator<CacheEntry<unknown>> {
    for (const typeEntries of this.types.values()) yield* typeEntries.entries.values();
  }

  /** Stops every timer; watchers hear nothing more from the cache's timers. */
  close(): void {
    this.cancelTimers();
  }

  /** The names went out on a stream whose transport is connected: their timers start (A57). */
  requested(server: ServerFeatures, typeUrl: string, names: readonly string[]): void {
    const typeEntries = this.types.get(typeUrl);
    if (!typeEntries) return;
    for (const name of names) {
      const entry = typeEntries.entries.get(name);
      if (entry) this.startTimer(server, entry);
    }
  }

  /**
   * The stream to the server ended: the timers stop (they run again when the names go out on the next one).
   * A57 / A88: a connectivity error is ambient for a cached resource, and the reason it fails otherwise.
   */
  streamEnded(connectivityError: Status | undefined): void {
    this.cancelTimers();
    if (!connectivityError) return;
    const error = connectivityError;
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

  /**
   * Applies the resources of one response from the server: returns the NACK's error detail (naming every
   * invalid resource, A40), or undefined when all were valid.
   */
  applyResponse(
    server: ServerFeatures,
    typeUrl: string,
    version: string,
    resources: readonly Any[],
  ): string | undefined {
    const typeEntries = this.types.get(typeUrl);
    if (!typeEntries) return `resource type ${typeUrl} was not subscribed to`;
    const decoded = decodeResources(typeEntries.type, resources, this.options.decodeContext);
    this.applyDecoded(
      server,
      typeUrl,
      version,
      decoded,
      decoded.invalid.every((p) => p.name !== undefined),
    );
    return nackDetail(typeUrl, decoded.invalid);
  }

  /**
   * Applies a response decoded by the owner (which may share one response among several caches). Resources
   * the cache does not hold are ignored. `deletionsKnown`: every resource's name could be read, so (LDS, CDS)
   * an entry missing from `decoded` was deleted.
   */
  applyDecoded(
    server: ServerFeatures,
    typeUrl: string,
    version: string,
    decoded: DecodedResponse<unknown>,
    deletionsKnown: boolean,
  ): void {
    const typeEntries = this.types.get(typeUrl);
    if (!typeEntries) return;
    const now = this.clock.now();
    const seen = new Set<string>();
    for (const resource of decoded.valid) {
      seen.add(resource.name);
      const entry = typeEntries.entries.get(resource.name);
      if (entry) this.accept(server, entry, resource.value, resource.bytes, version, now);
    }
    for (const problem of decoded.invalid) {
      if (problem.name === undefined) continue;
      seen.add(problem.name);
      const entry = typeEntries.entries.get(problem.name);
      if (entry) this.reject(server, entry, problem.error, version, now);
    }
    // A27 SotW: in LDS and CDS a resource missing from a response was deleted. When a resource's name could
    // not be read, the missing one may be it, so nothing is taken as deleted.
    if (typeEntries.type.allResourcesRequiredInSotW && deletionsKnown) {
      for (const entry of typeEntries.entries.values()) {
        if (!seen.has(entry.name) && entry.hasValue && entry.status !== 'DOES_NOT_EXIST') {
          this.deleted(server, entry, version, now);
        }
      }
    }
  }

  /**
   * A71: some watched resource is not cached (neither received nor known not to exist), which is what makes a
   * connectivity failure a reason to fall back to the next server.
   */
  hasUncachedWatch(): boolean {
    for (const typeEntries of this.types.values()) {
      for (const entry of typeEntries.entries.values()) {
        if (entry.watches.size > 0 && !entry.hasValue && entry.status !== 'DOES_NOT_EXIST') return true;
      }
    }
    return false;
  }

  /** Every subscribed name, by type URL: what a server newly used for this cache is to be asked for. */
  subscriptions(): { typeUrl: string; name: string }[] {
    const names = [];
    for (const typeEntries of this.types.values()) {
      for (const name of typeEntries.entries.keys()) names.push({ typeUrl: typeEntries.type.typeUrl, name });
    }
    return names;
  }

  /** The server the cached resource came from (undefined when none is cached). */
  sourceOf(typeUrl: string, name: string): ServerFeatures | undefined {
    const entry = this.types.get(typeUrl)?.entries.get(name);
    return entry?.hasValue ? (entry.source as ServerFeatures | undefined) : undefined;
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

  private cancelTimers(): void {
    for (const typeEntries of this.types.values()) {
      for (const entry of typeEntries.entries.values()) entry.cancelTimer();
    }
  }

  // --- watchers ------------------------------------------------------------------------------------------

  private replay<T>(entry: CacheEntry<T>, registration: WatchRegistration<T>): void {
    if (entry.hasValue) {
      this.notify(registration, (w) => w.onResourceChanged(entry.value as T));
      // A88 "New Watchers Started After Ambient Errors": the resource, then the ambient error.
      if (entry.ambient) this.notify(registration, (w) => w.onAmbientError(entry.ambient!));
    } else if (entry.error && entry.status !== 'REQUESTED') {
      this.notify(registration, (w) => w.onResourceError(entry.error!.status));
    } else {
      const connectivityError = this.options.connectivityError();
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
      this.options.onWatcherError(e);
    }
  }

  /** Calls every current watcher of the entry (a copy: watchers may cancel or add watches meanwhile). */
  private notifyAll<T>(entry: CacheEntry<T>, call: (watcher: XdsResourceWatcher<T>) => void): void {
    for (const registration of [...entry.watches]) this.notify(registration, call);
  }

  // --- data errors (A88 "Handling Data Errors", A53) ------------------------------------------------------

  private accept<T>(
    server: ServerFeatures,
    entry: CacheEntry<T>,
    value: T,
    bytes: Uint8Array,
    version: string,
    now: number,
  ): void {
    entry.cancelTimer();
    // A47 "XdsClient CDS Watcher": the same resource from another server (fallback) is news to the watchers,
    // who may depend on where it came from (LRS to "self").
    const unchanged = entry.sameAsCached(value, bytes) && entry.source === server;
    const previous = entry.status;
    entry.status = 'ACKED';
    entry.error = undefined;
    entry.setValue(value, bytes, version, now);
    entry.source = server;
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
  private reject(
    server: ServerFeatures,
    entry: CacheEntry<unknown>,
    reason: string,
    version: string,
    now: number,
  ): void {
    entry.cancelTimer();
    const error = status(
      Code.INVALID_ARGUMENT,
      `xDS NACK of ${shortTypeName(entry.type.typeUrl)} "${entry.name}" version "${version}": ${reason} (node ID ${this.nodeId})`,
    );
    entry.status = 'NACKED';
    entry.error = { status: error, version, at: now };
    this.trace(() => `xds client: ${shortTypeName(entry.type.typeUrl)} "${entry.name}" NACKED: ${reason}`);
    this.dataError(entry, error, this.dataErrorHandling && server.failOnDataErrors);
  }

  /** A LDS / CDS resource left out of a response (A53, A88). */
  private deleted(server: ServerFeatures, entry: CacheEntry<unknown>, version: string, now: number): void {
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
      this.dataError(entry, error, server.failOnDataErrors);
    } else if (server.ignoreResourceDeletion) {
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
  private startTimer(server: ServerFeatures, entry: CacheEntry<unknown>): void {
    if (entry.timer || entry.hasValue || entry.status !== 'REQUESTED') return;
    const transient = this.dataErrorHandling && server.resourceTimerIsTransientError;
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
