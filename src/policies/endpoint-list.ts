import {
  type Address,
  type Attributes,
  type ChannelArgs,
  type Clock,
  CONNECTING,
  type ConnectivityState,
  type Endpoint,
  endpointKey,
  type Helper,
  NO_CHANNEL_ARGS,
  OK_STATUS,
  ok,
  type Picker,
  queuePicker,
  type Status,
  type Subchannel,
  sameAddressOrder,
  sameChannelArgs,
  type Trace,
} from '../core/index.js';
import { HEALTH_WATCH_ARG, type PickFirstConfig } from './pick-first/config.js';
import { PickFirst } from './pick-first/pick-first.js';

const CHILD_CONFIG: PickFirstConfig = Object.freeze({ shuffleAddressList: false });

/**
 * One endpoint of a petiole policy and the pick_first child that connects to it (A61). It is also that
 * child's helper (no per-child closures: a petiole may hold tens of thousands of these).
 */
export class EndpointChild implements Helper {
  /** A61: a new child is assumed CONNECTING until it says otherwise. */
  state: ConnectivityState = CONNECTING;
  status: Status = OK_STATUS;
  picker: Picker = queuePicker;
  /** The last update that listed this endpoint (EndpointList's mark and sweep). */
  generation = 0;
  readonly policy: PickFirst;
  readonly clock: Clock;
  readonly trace: Trace;

  constructor(
    readonly key: string,
    public endpoint: Endpoint,
    private readonly list: EndpointList,
    private readonly parent: Helper,
  ) {
    this.clock = parent.clock;
    this.trace = parent.trace;
    this.policy = new PickFirst(this);
  }

  createSubchannel(address: Address, attributes: Attributes): Subchannel {
    return this.parent.createSubchannel(address, attributes);
  }
  updateState(state: ConnectivityState, status: Status, picker: Picker): void {
    this.list.onChildReport(this, state, status, picker);
  }
  requestReresolution(): void {
    this.parent.requestReresolution();
  }
  random(): number {
    return this.parent.random();
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
  private generation = 0;
  private parentArgs: ChannelArgs = NO_CHANNEL_ARGS;
  private childArgs: ChannelArgs = { [HEALTH_WATCH_ARG]: true };

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
    const argsChanged = !sameChannelArgs(attributes, this.parentArgs);
    if (argsChanged) {
      this.parentArgs = attributes;
      this.childArgs = { ...attributes, [HEALTH_WATCH_ARG]: true };
    }
    const childArgs = this.childArgs;
    // Mark and sweep by generation rather than building a second Map: a re-delivered list of 10,000
    // endpoints then costs one lookup per endpoint.
    const generation = ++this.generation;
    const children = this.byKey;
    let distinct = 0;
    this.updating = true;
    try {
      for (const e of endpoints) {
        const key = endpointKey(e);
        let child = children.get(key);
        const isNew = child === undefined;
        if (child === undefined) {
          child = this.createChild(key, e);
          children.set(key, child);
        } else if (child.generation === generation) {
          continue; // a duplicate of an endpoint already in this list
        }
        child.generation = generation;
        distinct++;
        const previous = child.endpoint;
        child.endpoint = e;
        // An endpoint re-delivered as it was needs nothing from its child (hot for large, stable lists).
        const unchanged =
          previous === e || (previous.attributes === e.attributes && sameAddressOrder(previous, e));
        if (!isNew && !argsChanged && unchanged) continue;
        child.policy.update({ endpoints: ok([e]), config: CHILD_CONFIG, attributes: childArgs });
      }
      if (distinct < children.size) this.sweep(generation);
    } finally {
      this.updating = false;
    }
  }

  private sweep(generation: number): void {
    for (const [key, child] of this.byKey) {
      if (child.generation !== generation) {
        this.byKey.delete(key);
        this.destroyChild(child);
      }
    }
  }

  destroyAll(): void {
    for (const child of this.byKey.values()) this.destroyChild(child);
    this.byKey = new Map();
  }

  private createChild(key: string, e: Endpoint): EndpointChild {
    const child = new EndpointChild(key, e, this, this.helper);
    this.counts[CONNECTING]++;
    return child;
  }

  private destroyChild(child: EndpointChild): void {
    this.counts[child.state]--;
    child.state = 'SHUTDOWN';
    child.policy.destroy();
  }

  onChildReport(child: EndpointChild, state: ConnectivityState, status: Status, picker: Picker): void {
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
