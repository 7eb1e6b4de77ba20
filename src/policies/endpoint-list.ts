import {
  type ChannelArgs,
  CONNECTING,
  type ConnectivityState,
  childHelper,
  type Endpoint,
  endpointKey,
  type Helper,
  OK_STATUS,
  ok,
  type Picker,
  queuePicker,
  type Status,
} from '../core/index.js';
import { HEALTH_WATCH_ARG, type PickFirstConfig } from './pick-first/config.js';
import { PickFirst } from './pick-first/pick-first.js';

const CHILD_CONFIG: PickFirstConfig = Object.freeze({ shuffleAddressList: false });

/** One endpoint of a petiole policy and the pick_first child that connects to it (A61). */
export class EndpointChild {
  /** A61: a new child is assumed CONNECTING until it says otherwise. */
  state: ConnectivityState = CONNECTING;
  status: Status = OK_STATUS;
  picker: Picker = queuePicker;
  readonly policy: PickFirst;

  constructor(
    readonly key: string,
    public endpoint: Endpoint,
    helper: Helper,
  ) {
    this.policy = new PickFirst(helper);
  }
}

/** Counts of children per state, kept incrementally so aggregation never scans the list. */
export type StateCounts = Record<ConnectivityState, number>;

export interface EndpointListOwner {
  /** A child reported; `previous` is its state before. Not called for reports made during `update`. */
  onChildState(child: EndpointChild, previous: ConnectivityState): void;
}

/**
 * The shared petiole machinery (A61 "Endpoint list updates"): one pick_first child per endpoint, kept in a
 * Map by the unordered address set, so an update reuses unchanged endpoints (sending them the new address
 * order), creates new ones and destroys removed ones, in linear time. Children get the health watch option.
 */
export class EndpointList {
  private byKey = new Map<string, EndpointChild>();
  readonly counts: StateCounts = { IDLE: 0, CONNECTING: 0, READY: 0, TRANSIENT_FAILURE: 0, SHUTDOWN: 0 };
  private updating = false;

  constructor(
    private readonly helper: Helper,
    private readonly owner: EndpointListOwner,
  ) {}

  get size(): number {
    return this.byKey.size;
  }

  get children(): ReadonlyMap<string, EndpointChild> {
    return this.byKey;
  }

  /** Applies an endpoint list; duplicate endpoints (same address set) collapse into the first. */
  update(endpoints: readonly Endpoint[], attributes: ChannelArgs): void {
    const childArgs: ChannelArgs = { ...attributes, [HEALTH_WATCH_ARG]: true };
    const previous = this.byKey;
    const next = new Map<string, EndpointChild>();
    this.updating = true;
    try {
      for (const e of endpoints) {
        const key = endpointKey(e);
        if (next.has(key)) continue;
        let child = previous.get(key);
        if (child) {
          previous.delete(key);
          child.endpoint = e;
        } else {
          child = this.createChild(key, e);
        }
        next.set(key, child);
        child.policy.update({ endpoints: ok([e]), config: CHILD_CONFIG, attributes: childArgs });
      }
      for (const removed of previous.values()) this.destroyChild(removed);
      this.byKey = next;
    } finally {
      this.updating = false;
    }
  }

  destroyAll(): void {
    for (const child of this.byKey.values()) this.destroyChild(child);
    this.byKey = new Map();
  }

  private createChild(key: string, e: Endpoint): EndpointChild {
    const child: EndpointChild = new EndpointChild(
      key,
      e,
      childHelper(this.helper, {
        updateState: (state, status, picker) => this.onChildReport(child, state, status, picker),
      }),
    );
    this.counts[CONNECTING]++;
    return child;
  }

  private destroyChild(child: EndpointChild): void {
    this.counts[child.state]--;
    child.state = 'SHUTDOWN';
    child.policy.destroy();
  }

  private onChildReport(
    child: EndpointChild,
    state: ConnectivityState,
    status: Status,
    picker: Picker,
  ): void {
    if (child.state === 'SHUTDOWN') return;
    const previous = child.state;
    this.counts[previous]--;
    this.counts[state]++;
    child.state = state;
    child.status = status;
    child.picker = picker;
    if (!this.updating) this.owner.onChildState(child, previous);
  }
}
