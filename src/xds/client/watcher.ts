import type { Status } from '../../core/status.js';
import type { XdsResourceType } from './resource-type.js';

/** What a watcher of one xDS resource hears (gRFC A88 "Changes to Watcher APIs"). */
export interface XdsResourceWatcher<T> {
  /** A new or changed valid resource (also the cached one, at once, to a new watcher). */
  onResourceChanged(value: T): void;
  /** A88 data error: the resource does not exist, or was NACKed with no good version cached. Drop what you had. */
  onResourceError(status: Status): void;
  /** A88 ambient error: stream trouble, or a NACK while a good version is cached. Keep using what you had. */
  onAmbientError(status: Status): void;
}

/** Stops one watch; calling it twice is harmless. */
export type CancelWatch = () => void;

/** The watch half of the xDS client: what the resolver and the xDS policies depend on. */
export interface XdsWatcher {
  /** Starts watching `name` of `type`; the result cancels the watch. */
  watch<T>(type: XdsResourceType<T>, name: string, watcher: XdsResourceWatcher<T>): CancelWatch;
}
