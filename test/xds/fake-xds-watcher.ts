// A stand-in for the xDS client's watch half (XdsWatcher), for dependency-manager tests: resources are set by
// hand and delivered as the client delivers them (cached values at once to a new watcher).
import type { Status } from '../../src/core/index.js';
import type { XdsResourceType } from '../../src/xds/client/resource-type.js';
import type { XdsResourceWatcher, XdsWatcher } from '../../src/xds/client/watcher.js';
import type { XdsResourceTypes } from '../../src/xds/resolver/dependency-manager.js';

function fakeType<T>(typeUrl: string): XdsResourceType<T> {
  return {
    typeUrl,
    allResourcesRequiredInSotW: false,
    decode: () => ({ ok: false, name: undefined, error: 'fake type' }),
  };
}

export const FAKE_TYPES: XdsResourceTypes = {
  listener: fakeType('lds'),
  routeConfiguration: fakeType('rds'),
  cluster: fakeType('cds'),
  endpoint: fakeType('eds'),
};

type Entry = { value?: unknown; error?: Status; watchers: Set<XdsResourceWatcher<unknown>> };

export class FakeXdsWatcher implements XdsWatcher {
  private readonly entries = new Map<string, Entry>();
  /** Watches started and not cancelled, as `type/name`. */
  readonly active = new Set<string>();

  watch<T>(type: XdsResourceType<T>, name: string, watcher: XdsResourceWatcher<T>): () => void {
    const key = `${type.typeUrl}/${name}`;
    const entry = this.entry(key);
    const w = watcher as XdsResourceWatcher<unknown>;
    entry.watchers.add(w);
    this.active.add(key);
    if (entry.value !== undefined) w.onResourceChanged(entry.value);
    else if (entry.error !== undefined) w.onResourceError(entry.error);
    return () => {
      entry.watchers.delete(w);
      if (entry.watchers.size === 0) this.active.delete(key);
    };
  }

  set<T>(type: XdsResourceType<T>, name: string, value: T): void {
    const entry = this.entry(`${type.typeUrl}/${name}`);
    entry.value = value;
    entry.error = undefined;
    for (const w of [...entry.watchers]) w.onResourceChanged(value);
  }

  error(type: XdsResourceType<unknown>, name: string, s: Status): void {
    const entry = this.entry(`${type.typeUrl}/${name}`);
    entry.value = undefined;
    entry.error = s;
    for (const w of [...entry.watchers]) w.onResourceError(s);
  }

  ambient(type: XdsResourceType<unknown>, name: string, s: Status): void {
    for (const w of [...this.entry(`${type.typeUrl}/${name}`).watchers]) w.onAmbientError(s);
  }

  private entry(key: string): Entry {
    let entry = this.entries.get(key);
    if (entry === undefined) {
      entry = { watchers: new Set() };
      this.entries.set(key, entry);
    }
    return entry;
  }
}
