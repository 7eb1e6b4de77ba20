// A55 "LB Policy for Stateful Session Affinity": the address map of xds_override_host_experimental. One entry
// per address of the latest update, holding the endpoint's EDS health status, the A61 cookie address list for
// that address, and the connection picks may use: the child's newest subchannel for the address, or one the
// policy holds itself (a DRAINING endpoint the child let go of, or one a cookie asked for).

import {
  type Address,
  type Attributes,
  type BackendMetricsListener,
  type CompletePick,
  type ConnectivityState,
  forEachWatcher,
  hasWatcher,
  IDLE,
  type Subchannel,
  type SubchannelHealthWatcher,
  type SubchannelStateWatcher,
  type Unwatch,
  unwatchSubchannelHealth,
  unwatchSubchannelState,
  type WatcherSet,
  watchSubchannelHealth,
  watchSubchannelState,
  withoutWatcher,
  withWatcher,
} from '../../../core/index.js';
import { ForwardingSubchannel } from '../../../policies/shared/forwarding-subchannel.js';
import type { XdsHealthStatus } from '../../resources/cluster-load-assignment.js';

export class AddressEntry {
  /** The connection picks go to, if any. */
  inner: Subchannel | null = null;
  /** The child's wrapper that `inner` belongs to; null when the policy holds `inner` itself (or there is none). */
  wrapper: OverrideHostSubchannel | null = null;
  /** Set when a later update left the address out; a removed entry is never picked or kept. */
  removed = false;
  private cachedFor: Subchannel | null = null;
  private cachedResult: CompletePick | null = null;

  constructor(
    readonly key: string,
    readonly address: Address,
    public health: XdsHealthStatus,
    /** A61: this address first, then the endpoint's other addresses in order, comma-separated. */
    public addressList: string,
    public attributes: Attributes,
    /** The address map update that last named this address (the policy's count of its updates). */
    public stamp: number,
  ) {}

  get owned(): boolean {
    return this.inner !== null && this.wrapper === null;
  }

  get state(): ConnectivityState {
    return this.inner?.state ?? IDLE;
  }

  /** The complete pick on `inner`, built once per connection so picks do not allocate. */
  result(): CompletePick {
    const inner = this.inner!;
    if (this.cachedFor !== inner) {
      this.cachedFor = inner;
      this.cachedResult = Object.freeze({ type: 'complete', subchannel: inner });
    }
    return this.cachedResult!;
  }
}

/** What a wrapper tells its policy. */
export interface OverrideHostSubchannelOwner {
  /** The child released `wrapper`: the policy keeps its connection or releases it (A55 DRAINING rule). */
  childReleased(wrapper: OverrideHostSubchannel): void;
}

/**
 * The policy, watching every connection the map knows (queued override picks may complete when one changes
 * state): one watcher object for all of them, nothing per endpoint.
 */
export type OverrideHostWatcher = OverrideHostSubchannelOwner & SubchannelStateWatcher;

/**
 * The subchannel the child policy sees. Picks hand the channel `inner` (the subchannel the parent gave), and
 * the policy learns which endpoint a child's pick used from `entry`.
 */
export class OverrideHostSubchannel extends ForwardingSubchannel {
  entry: AddressEntry | null = null;
  private base: CompletePick | null = null;
  private mapped: CompletePick | null = null;
  private released = false;
  /**
   * The child's watchers and out-of-band watches: the policy may keep `inner` after the child releases this
   * wrapper, so they are stopped here rather than by `inner.release()`.
   */
  private stateWatchers: WatcherSet<SubchannelStateWatcher> = null;
  private healthWatchers: WatcherSet<SubchannelHealthWatcher> = null;
  private metricsWatches: Unwatch[] | null = null;

  constructor(
    inner: Subchannel,
    private readonly owner: OverrideHostWatcher,
  ) {
    super(inner);
    watchSubchannelState(inner, owner);
  }

  /** A61: the cookie address list of this subchannel's endpoint (its own address when the map lacks it). */
  get addressList(): string {
    const entry = this.entry;
    return entry === null || entry.removed ? this.inner.key : entry.addressList;
  }

  override addStateWatcher(watcher: SubchannelStateWatcher): void {
    if (this.released) return;
    this.stateWatchers = withWatcher(this.stateWatchers, watcher);
    watchSubchannelState(this.inner, watcher);
  }
  override removeStateWatcher(watcher: SubchannelStateWatcher): void {
    if (!hasWatcher(this.stateWatchers, watcher)) return;
    this.stateWatchers = withoutWatcher(this.stateWatchers, watcher);
    unwatchSubchannelState(this.inner, watcher);
  }
  override addHealthWatcher(watcher: SubchannelHealthWatcher): void {
    if (this.released) return;
    this.healthWatchers = withWatcher(this.healthWatchers, watcher);
    watchSubchannelHealth(this.inner, watcher);
  }
  override removeHealthWatcher(watcher: SubchannelHealthWatcher): void {
    if (!hasWatcher(this.healthWatchers, watcher)) return;
    this.healthWatchers = withoutWatcher(this.healthWatchers, watcher);
    unwatchSubchannelHealth(this.inner, watcher);
  }
  /** A51 out-of-band reports (weighted_round_robin below this policy) pass through. */
  override watchBackendMetrics(periodMs: number, listener: BackendMetricsListener): Unwatch {
    const unwatch = this.inner.watchBackendMetrics?.(periodMs, listener);
    if (unwatch === undefined) return () => {};
    // Exact-size arrays: push would leave V8's growth slack, per endpoint.
    this.metricsWatches = this.metricsWatches === null ? [unwatch] : this.metricsWatches.concat(unwatch);
    return () => {
      if (this.metricsWatches === null || !this.metricsWatches.includes(unwatch)) return;
      const rest = this.metricsWatches.filter((w) => w !== unwatch);
      this.metricsWatches = rest.length === 0 ? null : rest;
      unwatch();
    };
  }

  override release(): void {
    if (this.released) return;
    this.released = true;
    unwatchSubchannelState(this.inner, this.owner);
    forEachWatcher(this.stateWatchers, (w) => unwatchSubchannelState(this.inner, w));
    forEachWatcher(this.healthWatchers, (w) => unwatchSubchannelHealth(this.inner, w));
    this.stateWatchers = null;
    this.healthWatchers = null;
    const metrics = this.metricsWatches;
    this.metricsWatches = null;
    if (metrics !== null) for (const unwatch of metrics) unwatch();
    this.owner.childReleased(this);
  }

  /** The child's complete result with `inner` in place of this wrapper (cached per child result). */
  resultFor(base: CompletePick): CompletePick {
    if (base !== this.base) {
      this.base = base;
      this.mapped = Object.freeze({ ...base, subchannel: this.inner });
    }
    return this.mapped!;
  }
}
