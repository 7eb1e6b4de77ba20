import {
  type CompletePick,
  type ConnectivityState,
  hasWatcher,
  isWatcherArray,
  OK_STATUS,
  READY,
  type Status,
  type Subchannel,
  type SubchannelHealthWatcher,
  TRANSIENT_FAILURE,
  unavailable,
  unwatchSubchannelHealth,
  type WatcherSet,
  watchSubchannelHealth,
  withoutWatcher,
  withWatcher,
} from '../../core/index.js';
import { ForwardingSubchannel } from '../shared/forwarding-subchannel.js';

/** Where an ejectable subchannel reports the calls made on it. */
export interface CallRecorder {
  recordCall(addressKey: string, status: Status): void;
  released(subchannel: EjectableSubchannel): void;
}

/**
 * A child's subchannel as outlier detection hands it out. A61 "Outlier Detection": ejection is reported
 * through the generic health watch (the endpoint's pick_first sees TRANSIENT_FAILURE health) while the raw
 * connectivity state, and so the connection, is left alone for when the endpoint is un-ejected.
 */
export class EjectableSubchannel extends ForwardingSubchannel implements SubchannelHealthWatcher {
  private ejected = false;
  private healthWatchers: WatcherSet<SubchannelHealthWatcher> = null;
  /** Whether this wrapper watches the inner subchannel's health (from the first health watcher on). */
  private watchingInner = false;
  private innerHealth: ConnectivityState;
  private innerHealthStatus: Status = OK_STATUS;
  /** What the health listeners last heard, so they hear only changes. */
  private deliveredState: ConnectivityState;
  private deliveredStatus: Status = OK_STATUS;
  private readonly ejectedStatus: Status;
  /** The child's complete result this subchannel's pick result was built from, and that result. */
  private base: CompletePick | null = null;
  private baseCounted = false;
  private result: CompletePick | null = null;

  constructor(
    inner: Subchannel,
    private readonly recorder: CallRecorder,
  ) {
    super(inner);
    this.innerHealth = inner.health;
    this.deliveredState = inner.health;
    this.ejectedStatus = unavailable(`endpoint of ${inner.key} is ejected by outlier detection`);
  }

  override get health(): ConnectivityState {
    return this.ejected && this.inner.state === READY ? TRANSIENT_FAILURE : this.inner.health;
  }
  get isEjected(): boolean {
    return this.ejected;
  }

  override addHealthWatcher(watcher: SubchannelHealthWatcher): void {
    if (!this.watchingInner) {
      this.watchingInner = true;
      this.innerHealth = this.inner.health;
      this.deliveredState = this.health;
      watchSubchannelHealth(this.inner, this);
    }
    this.healthWatchers = withWatcher(this.healthWatchers, watcher);
  }

  override removeHealthWatcher(watcher: SubchannelHealthWatcher): void {
    this.healthWatchers = withoutWatcher(this.healthWatchers, watcher);
  }

  /** @internal The inner subchannel's health (this wrapper is its health watcher). */
  onSubchannelHealth(state: ConnectivityState, status: Status): void {
    this.innerHealth = state;
    this.innerHealthStatus = status;
    this.deliver();
  }

  override release(): void {
    this.healthWatchers = null;
    if (this.watchingInner) unwatchSubchannelHealth(this.inner, this);
    this.watchingInner = false;
    this.inner.release();
    this.recorder.released(this);
  }

  /** A50 "Subchannel Wrapper" eject() / uneject(), reported through the health watch. */
  setEjected(ejected: boolean): void {
    if (this.ejected === ejected) return;
    this.ejected = ejected;
    this.deliver();
  }

  /**
   * The pick result to hand up for the child's `base` result: the raw subchannel (so the channel sees the
   * connection it knows) with the child's hooks, plus call counting when `counting`. Cached, so picks do not
   * allocate.
   */
  resultFor(base: CompletePick, counting: boolean): CompletePick {
    if (base !== this.base || counting !== this.baseCounted) {
      this.base = base;
      this.baseCounted = counting;
      this.result = counting ? this.countingResult(base) : passThrough(base, this.inner);
    }
    return this.result!;
  }

  private countingResult(base: CompletePick): CompletePick {
    const key = this.inner.key;
    const recorder = this.recorder;
    const childEnded = base.onCallEnded;
    const onCallEnded = childEnded
      ? (status: Status) => {
          childEnded(status);
          recorder.recordCall(key, status);
        }
      : (status: Status) => recorder.recordCall(key, status);
    return Object.freeze({
      type: 'complete',
      subchannel: this.inner,
      onCallStarted: base.onCallStarted,
      onCallEnded,
    });
  }

  private deliver(): void {
    const ejectedNow = this.ejected && this.inner.state === READY;
    const state = ejectedNow ? TRANSIENT_FAILURE : this.innerHealth;
    const status = ejectedNow ? this.ejectedStatus : this.innerHealthStatus;
    if (state === this.deliveredState && status === this.deliveredStatus) return;
    this.deliveredState = state;
    this.deliveredStatus = status;
    const watchers = this.healthWatchers;
    if (watchers === null) return;
    if (!isWatcherArray(watchers)) watchers.onSubchannelHealth(state, status);
    // A watcher removed by an earlier one during this delivery is skipped.
    else
      for (const w of watchers) if (hasWatcher(this.healthWatchers, w)) w.onSubchannelHealth(state, status);
  }
}

function passThrough(base: CompletePick, inner: Subchannel): CompletePick {
  if (base.onCallStarted === undefined && base.onCallEnded === undefined) {
    return Object.freeze({ type: 'complete', subchannel: inner });
  }
  return Object.freeze({
    type: 'complete',
    subchannel: inner,
    onCallStarted: base.onCallStarted,
    onCallEnded: base.onCallEnded,
  });
}
