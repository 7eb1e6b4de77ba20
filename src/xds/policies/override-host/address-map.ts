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
  IDLE,
  type StateListener,
  type Subchannel,
  type Unwatch,
} from '../../../core/index.js';
import { ForwardingSubchannel } from '../../../policies/forwarding-subchannel.js';
import type { XdsHealthStatus } from '../../endpoints.js';

export class AddressEntry {
  /** The connection picks go to, if any. */
  inner: Subchannel | null = null;
  /** The child's wrapper that `inner` belongs to; null when the policy holds `inner` itself (or there is none). */
  wrapper: OverrideHostSubchannel | null = null;
  /** Stops the policy's own watch of an `inner` it holds. */
  ownedUnwatch: Unwatch | null = null;
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
  /**
   * Hears that a connection the map knows changed state (queued override picks may now complete): one function
   * for every wrapper of the policy, not a closure per endpoint.
   */
  readonly onSubchannelState: StateListener;
}

/**
 * The subchannel the child policy sees. Picks hand the channel `inner` (the subchannel the parent gave), and
 * the policy learns which endpoint a child's pick used from `entry`.
 */
export class OverrideHostSubchannel extends ForwardingSubchannel {
  entry: AddressEntry | null = null;
  private readonly unwatchOwn: Unwatch;
  private base: CompletePick | null = null;
  private mapped: CompletePick | null = null;
  private released = false;
  /** The child's watches, made on the first (a channel holds one wrapper per endpoint). */
  private watches: Unwatch[] | null = null;

  constructor(
    inner: Subchannel,
    private readonly owner: OverrideHostSubchannelOwner,
  ) {
    super(inner);
    this.unwatchOwn = inner.watchConnectivity(owner.onSubchannelState);
  }

  /** A61: the cookie address list of this subchannel's endpoint (its own address when the map lacks it). */
  get addressList(): string {
    const entry = this.entry;
    return entry === null || entry.removed ? this.inner.key : entry.addressList;
  }

  override watchConnectivity(listener: StateListener): Unwatch {
    return this.track(this.inner.watchConnectivity(listener));
  }
  override watchHealth(listener: StateListener): Unwatch {
    return this.track(this.inner.watchHealth(listener));
  }
  /** A51 out-of-band reports (weighted_round_robin below this policy) pass through. */
  override watchBackendMetrics(periodMs: number, listener: BackendMetricsListener): Unwatch {
    const unwatch = this.inner.watchBackendMetrics?.(periodMs, listener);
    return unwatch === undefined ? () => {} : this.track(unwatch);
  }

  /**
   * The policy may keep `inner` after the child releases this wrapper, so the child's watches are stopped
   * here rather than by `inner.release()`.
   */
  private track(unwatch: Unwatch): Unwatch {
    // Exact-size arrays: push would leave V8's growth slack, per endpoint.
    this.watches = this.watches === null ? [unwatch] : this.watches.concat(unwatch);
    return () => {
      if (this.watches === null || !this.watches.includes(unwatch)) return;
      const rest = this.watches.filter((w) => w !== unwatch);
      this.watches = rest.length === 0 ? null : rest;
      unwatch();
    };
  }
  override release(): void {
    if (this.released) return;
    this.released = true;
    this.unwatchOwn();
    const watches = this.watches;
    this.watches = null;
    if (watches !== null) for (const unwatch of watches) unwatch();
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
