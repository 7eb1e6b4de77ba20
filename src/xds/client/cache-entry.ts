import type { CancelTimer } from '../../core/clock.js';
import type { Status } from '../../core/status.js';
import type { XdsResourceType } from './resource-type.js';
import type { XdsResourceWatcher } from './watcher.js';

/**
 * The cache states of gRFC A88 "Cache Entry States, CSDS, and XdsClient Metrics" (the CSDS
 * ClientResourceStatus names). RECEIVED_ERROR (xRFC TP3) is absent: the generated protos predate TP3.
 */
export type XdsResourceStatus = 'REQUESTED' | 'DOES_NOT_EXIST' | 'ACKED' | 'NACKED' | 'TIMEOUT';

/** The last data error of an entry: a NACK (the rejected version), a deletion, or the resource timer. */
export interface XdsEntryError {
  readonly status: Status;
  /** version_info of the response that carried it ('' for the timer). */
  readonly version: string;
  /** Clock time (ms). */
  readonly at: number;
}

/** One registration of a watcher (a watcher may watch the same name twice; each watch cancels alone). */
export interface WatchRegistration<T> {
  readonly watcher: XdsResourceWatcher<T>;
  active: boolean;
}

/** What the client holds for one subscribed resource. */
export class CacheEntry<T> {
  readonly watches = new Set<WatchRegistration<T>>();
  status: XdsResourceStatus = 'REQUESTED';
  /** The resource in use; `hasValue` tells it apart from a value that is legitimately `undefined`. */
  hasValue = false;
  value: T | undefined;
  bytes: Uint8Array | undefined;
  /** version_info of the response the cached value came in. */
  version = '';
  /** Clock time (ms) the cached value was last received. */
  updatedAt: number | undefined;
  error: XdsEntryError | undefined;
  /** The ambient error watchers were told and that no later update has cleared (A88). */
  ambient: Status | undefined;
  /** The server the cached value came from (A71: with fallback, not always the first). */
  source: { readonly serverUri?: string } | undefined;
  /** The does-not-exist timer, while it runs. */
  timer: CancelTimer | undefined;

  constructor(
    readonly type: XdsResourceType<T>,
    readonly name: string,
  ) {}

  setValue(value: T, bytes: Uint8Array, version: string, at: number): void {
    this.hasValue = true;
    this.value = value;
    this.bytes = bytes;
    this.version = version;
    this.updatedAt = at;
  }

  dropValue(): void {
    this.hasValue = false;
    this.value = undefined;
    this.bytes = undefined;
    this.ambient = undefined;
    this.source = undefined;
  }

  /** A88: the same resource content as cached (type's equality, else the bytes). */
  sameAsCached(value: T, bytes: Uint8Array): boolean {
    if (!this.hasValue) return false;
    if (this.type.equal) return this.type.equal(this.value as T, value);
    return bytesEqual(this.bytes!, bytes);
  }

  cancelTimer(): void {
    this.timer?.();
    this.timer = undefined;
  }
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
