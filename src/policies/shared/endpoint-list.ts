import {
  type Address,
  type Attributes,
  type ChannelArgs,
  type ChildNode,
  type Clock,
  CONNECTING,
  type ConnectionPacer,
  type ConnectivityState,
  type Endpoint,
  endpointKey,
  type Helper,
  IDLE,
  type MetricsRecorder,
  NO_CHANNEL_ARGS,
  OK_STATUS,
  type Picker,
  type PolicyFact,
  type PolicyNode,
  queuePicker,
  READY,
  SHUTDOWN,
  type Status,
  type Subchannel,
  sameAddressOrder,
  sameChannelArgs,
  TRANSIENT_FAILURE,
  type Trace,
  workMeter,
} from '../../core/index.js';
import { HEALTH_WATCH_ARG, type PickFirstConfig } from '../pick-first/config.js';
import { PickFirstLeaf } from '../pick-first/pick-first.js';

const NO_CHILDREN: readonly EndpointChild[] = Object.freeze([]);
const CHILD_CONFIG: PickFirstConfig = Object.freeze({ shuffleAddressList: false });
/** The children's settings under a parent with none (shared by every list until its first update). */
const HEALTH_WATCH_ONLY: ChannelArgs = Object.freeze({ [HEALTH_WATCH_ARG]: true });
const childArgsCache = new WeakMap<ChannelArgs, ChannelArgs>([[NO_CHANNEL_ARGS, HEALTH_WATCH_ONLY]]);

/**
 * A parent's settings plus the A61 health watch: one object per parent settings object, shared by every list
 * that gets it (a parent passes one settings object to thousands of petioles, and pick_first reads its
 * settings again only when the object changes).
 */
function childArgsFor(attributes: ChannelArgs): ChannelArgs {
  // The last pair first: a parent hands one settings object to each of its thousands of petioles in a row.
  if (attributes === lastParentArgs) return lastChildArgs;
  let args = childArgsCache.get(attributes);
  if (args === undefined) {
    args = Object.freeze({ ...attributes, [HEALTH_WATCH_ARG]: true });
    childArgsCache.set(attributes, args);
  }
  lastParentArgs = attributes;
  lastChildArgs = args;
  return args;
}
let lastParentArgs: ChannelArgs = NO_CHANNEL_ARGS;
let lastChildArgs: ChannelArgs = HEALTH_WATCH_ONLY;

/**
 * One endpoint of a petiole policy: the pick_first policy that connects to it (A61), which is also its own
 * helper. One object per endpoint, not a child policy, a helper and a one-endpoint list beside each other: a
 * petiole may hold tens of thousands of these, and every object each one keeps is copied by every young
 * generation collection while a large list comes up. In a lazy list (ring_hash) the pick_first part only
 * starts at the first {@link connect}.
 */
export class EndpointChild extends PickFirstLeaf implements Helper {
  state: ConnectivityState;
  status: Status = OK_STATUS;
  picker: Picker = queuePicker;
  /** The last update that listed this endpoint (EndpointList's mark and sweep). */
  generation = 0;
  /** Free for the owning policy: ring_hash keeps the endpoint's index in its current ring here. */
  slot = -1;
  /**
   * Free for the owning policy: least_request keeps the endpoint's call counter here (a field, where a WeakMap
   * keyed by child cost each new READY child a hash and an ephemeron entry the GC must trace).
   */
  ownerData: unknown = undefined;

  constructor(
    endpoint: Endpoint,
    private readonly list: EndpointList,
    lazy: boolean,
  ) {
    super();
    this.endpoints = endpoint;
    // A61: an eager child is assumed CONNECTING until it says otherwise; a lazy one is IDLE until started.
    this.state = lazy ? IDLE : CONNECTING;
  }

  /**
   * The endpoint's {@link endpointKey} (the same for every endpoint this child is given): read from the
   * endpoint, where a one-address endpoint's is cached on its address, rather than kept in a field.
   */
  get key(): string {
    return endpointKey(this.endpoint);
  }

  /** pick_first's helper is this object: no field for it. */
  protected get helper(): Helper {
    return this;
  }

  /** The endpoint (with the attributes of the list that last changed it). */
  get endpoint(): Endpoint {
    // A petiole's child is only ever given its one endpoint (pick_first's list-or-one), never an array.
    return this.endpoints as Endpoint;
  }

  /** Asks for a connection: starts pick_first if it has not started yet (A61 ring_hash), else leaves IDLE. */
  connect(): void {
    if (this.state === SHUTDOWN) return;
    if (!this.started) this.updateList(this.endpoints, CHILD_CONFIG, this.list.childArgs);
    else this.exitIdle();
  }

  /**
   * @internal EndpointList's: passes a new endpoint or new settings on (a lazy child not started yet only
   * keeps the endpoint).
   */
  updateChild(attributes: ChannelArgs, endpoint: Endpoint): void {
    if (this.started || !this.list.lazy) this.updateList(endpoint, CHILD_CONFIG, attributes);
    else this.endpoints = endpoint;
  }

  /**
   * @internal EndpointList's: the same endpoint re-delivered (equal addresses and attributes) needs nothing
   * from pick_first; keeping the newest object makes the next re-delivery of it an identity check.
   */
  sameEndpoint(endpoint: Endpoint): void {
    this.endpoints = endpoint;
  }

  /** The live view: pick_first's own picture, with the state this endpoint last reported to its list. */
  override describe(): PolicyNode {
    const node = super.describe();
    const status = this.status;
    return {
      ...node,
      state: this.state,
      ...(status.code !== 0 && { status: { code: status.code, details: status.details } }),
    };
  }

  /** @internal EndpointList's. */
  destroyChild(): void {
    this.state = SHUTDOWN;
    this.destroy();
  }

  // The parent's helper is read through the list rather than kept: fewer fields on every endpoint.
  get clock(): Clock {
    return this.list.helper.clock;
  }
  get trace(): Trace {
    return this.list.helper.trace;
  }
  get metricsRecorder(): MetricsRecorder | undefined {
    return this.list.helper.metricsRecorder;
  }
  get connectionPacer(): ConnectionPacer | undefined {
    return this.list.helper.connectionPacer;
  }

  createSubchannel(address: Address, attributes: Attributes): Subchannel {
    return this.list.wrapSubchannel(this, this.list.helper.createSubchannel(address, attributes));
  }
  updateState(state: ConnectivityState, status: Status, picker: Picker): void {
    this.list.onChildReport(this, state, status, picker);
  }
  requestReresolution(): void {
    this.list.helper.requestReresolution();
  }
  random(): number {
    return this.list.helper.random();
  }
}

/** Where an endpoint list placed in steps stands (see {@link EndpointList.startPlacing}). */
export interface Placement {
  readonly endpoints: readonly Endpoint[];
  /** The index of the next endpoint to place. */
  next: number;
  /** The distinct children placed so far, in list order (`count` of them). */
  readonly distinct: EndpointChild[];
  count: number;
  readonly generation: number;
  readonly argsChanged: boolean;
}

/** Counts of children per state, kept incrementally so aggregation never scans the list. */
export type StateCounts = Record<ConnectivityState, number>;

export interface EndpointListOwner {
  /** A child reported; `previous` is its state before. Not called for reports made during `update`. */
  onChildState(child: EndpointChild, previous: ConnectivityState): void;
  /**
   * What the child's pick_first gets for a subchannel created for it: the owner may wrap it (weighted_round_robin
   * attaches its out-of-band load report watch, A58). Without this, the subchannel itself.
   */
  wrapSubchannel?(child: EndpointChild, subchannel: Subchannel): Subchannel;
}

export interface EndpointListOptions {
  /**
   * Create each pick_first child only when {@link EndpointChild.connect} is first called (A61: ring_hash
   * connects lazily, while pick_first connects as soon as it has addresses). Until then a child is IDLE.
   */
  readonly lazy?: boolean;
}

/**
 * The shared petiole machinery (A61 "Endpoint list updates"): one pick_first child per endpoint, kept in a
 * Map by the unordered address set, so an update reuses unchanged endpoints (sending them the new address
 * order), creates new ones and destroys removed ones, in linear time. Children get the health watch option.
 *
 * A petiole either is one (the eager petioles extend it: one object per petiole, not a policy, a list and a
 * counts record beside each other, which a target or locality per endpoint makes by the ten thousand) or owns
 * one ({@link OwnedEndpointList}). The per-state counts are the list's own fields: {@link counts} is the list.
 */
export abstract class EndpointList implements StateCounts {
  /**
   * The children by key once the list has held two; until then its only child (or null), so the petiole of a
   * one-endpoint locality (tens of thousands of them in a tree with a locality per endpoint) has no Map.
   */
  private members: Map<string, EndpointChild> | EndpointChild | null = null;
  // How many children are in each state (read through `counts`).
  IDLE = 0;
  CONNECTING = 0;
  READY = 0;
  TRANSIENT_FAILURE = 0;
  SHUTDOWN = 0;
  private updating = false;
  private generation = 0;
  private parentArgs: ChannelArgs = NO_CHANNEL_ARGS;

  constructor(
    /** @internal The parent's helper, which every child's helper forwards to. */
    readonly helper: Helper,
  ) {}

  /**
   * @internal Whether pick_first children start only when asked to connect (A61: ring_hash connects lazily,
   * while pick_first connects as soon as it has addresses); until then a child is IDLE.
   */
  get lazy(): boolean {
    return false;
  }

  /** The settings every pick_first child gets: the parent's plus the A61 health watch. */
  get childArgs(): ChannelArgs {
    return childArgsFor(this.parentArgs);
  }

  /** A child reported; `previous` is its state before. Not called for reports made during an update. */
  protected abstract onChildState(child: EndpointChild, previous: ConnectivityState): void;

  /**
   * @internal What a child's pick_first gets for a new subchannel of that child: the subchannel itself unless
   * a subclass wraps it (weighted_round_robin).
   */
  wrapSubchannel(_child: EndpointChild, subchannel: Subchannel): Subchannel {
    return subchannel;
  }

  /** How many children are in each state: the list itself. */
  get counts(): Readonly<StateCounts> {
    return this;
  }

  get size(): number {
    const members = this.members;
    return members === null ? 0 : members instanceof Map ? members.size : 1;
  }

  /** Every child, in the order they were added. */
  get children(): Iterable<EndpointChild> {
    const members = this.members;
    return members === null ? NO_CHILDREN : members instanceof Map ? members.values() : [members];
  }

  /** The live view of every endpoint, named by its key, with what `factsOf` says of it. */
  describeEndpoints(
    factsOf?: (child: EndpointChild) => Readonly<Record<string, PolicyFact>> | undefined,
  ): ChildNode[] {
    const nodes: ChildNode[] = [];
    for (const child of this.children) {
      const facts = factsOf?.(child);
      nodes.push(
        facts === undefined
          ? { name: child.key, node: child.describe() }
          : { name: child.key, facts, node: child.describe() },
      );
    }
    return nodes;
  }

  /**
   * The child whose endpoint has the key `key`, the key of `e` when `e` is given: a lone child holding the same
   * addresses in the same order is then found without building its own key (a sort and a join, dual-stack).
   */
  private find(key: string, e?: Endpoint): EndpointChild | undefined {
    const members = this.members;
    if (members === null) return undefined;
    if (members instanceof Map) return members.get(key);
    if (e !== undefined && sameAddressOrder(members.endpoint, e)) return members;
    return members.key === key ? members : undefined;
  }

  private add(key: string, child: EndpointChild): void {
    const members = this.members;
    if (members === null) {
      this.members = child;
    } else if (members instanceof Map) {
      members.set(key, child);
    } else {
      this.members = new Map([
        [members.key, members],
        [key, child],
      ]);
    }
  }

  /**
   * Applies an endpoint list; duplicate endpoints (same address set, attributes ignored) collapse into the
   * first, and `onDuplicate` hears of each one (ring_hash sums their weights). Returns the distinct children
   * in list order.
   */
  updateEndpoints(
    endpoints: readonly Endpoint[],
    attributes: ChannelArgs,
    onDuplicate?: (child: EndpointChild, duplicate: Endpoint) => void,
  ): EndpointChild[] {
    const placement = this.startPlacing(endpoints, attributes);
    this.placeSome(placement, endpoints.length, onDuplicate);
    return this.finishPlacing(placement);
  }

  /**
   * The start of {@link updateEndpoints} in steps (issue 25 §5: a big list placed over several event-loop
   * turns): takes the settings and opens a new generation. Then {@link placeSome} until every endpoint is
   * placed, and {@link finishPlacing}. Between steps the list holds the children of both lists (the old ones
   * not yet placed again stay until the sweep at the end); another update abandons the placement.
   */
  startPlacing(endpoints: readonly Endpoint[], attributes: ChannelArgs): Placement {
    const argsChanged = this.takeArgs(attributes);
    // Mark and sweep by generation rather than building a second Map: a re-delivered list of 10,000
    // endpoints then costs one lookup per endpoint.
    const generation = ++this.generation;
    // Sized for the list at once (trimmed at the end if it had duplicates): no growth steps.
    return { endpoints, next: 0, distinct: new Array(endpoints.length), count: 0, generation, argsChanged };
  }

  /** Places the next `n` endpoints of `placement` (fewer when fewer are left). */
  placeSome(
    placement: Placement,
    n: number,
    onDuplicate?: (child: EndpointChild, duplicate: Endpoint) => void,
  ): void {
    const { endpoints, distinct, generation, argsChanged } = placement;
    const end = Math.min(endpoints.length, placement.next + n);
    let count = placement.count;
    this.updating = true;
    workMeter.visits += end - placement.next;
    try {
      // Indexed, not for-of: the loop calls out per endpoint, and V8 then keeps an iterator result per step.
      for (let i = placement.next; i < end; i++) {
        const e = endpoints[i]!;
        const child = this.place(e, generation, argsChanged);
        if (child !== null) distinct[count++] = child;
        else onDuplicate?.(this.find(endpointKey(e))!, e); // a duplicate of an endpoint already in this list
      }
    } finally {
      this.updating = false;
      placement.next = end;
      placement.count = count;
    }
  }

  /** The end of a placement: the children of endpoints it did not list go; the distinct children, in list order. */
  finishPlacing(placement: Placement): EndpointChild[] {
    const { distinct, count } = placement;
    if (count < distinct.length) distinct.length = count;
    if (count < this.size) {
      this.updating = true;
      try {
        this.sweep(placement.generation);
      } finally {
        this.updating = false;
      }
    }
    return distinct;
  }

  /** Whether the list is one child holding `e` as it is (a re-delivery of it places nothing). */
  holdsOnly(e: Endpoint): boolean {
    const members = this.members;
    if (members === null || members instanceof Map) return false;
    const previous = members.endpoint;
    return previous === e || (previous.attributes === e.attributes && sameAddressOrder(previous, e));
  }

  /**
   * {@link updateEndpoints} for a list of one endpoint, returning its child: no array of one (a target or
   * locality per endpoint makes tens of thousands of one-endpoint lists).
   */
  updateOneEndpoint(endpoint: Endpoint, attributes: ChannelArgs): EndpointChild {
    const argsChanged = this.takeArgs(attributes);
    const generation = ++this.generation;
    this.updating = true;
    workMeter.visits++;
    try {
      const child = this.place(endpoint, generation, argsChanged)!;
      if (this.size > 1) this.sweep(generation);
      return child;
    } finally {
      this.updating = false;
    }
  }

  /** Takes the parent's settings; whether they changed. */
  private takeArgs(attributes: ChannelArgs): boolean {
    if (sameChannelArgs(attributes, this.parentArgs)) return false;
    this.parentArgs = attributes;
    return true;
  }

  /**
   * Finds or makes the child of `e` and marks it as in this update (`generation`), passing it the endpoint
   * as needed; null when an earlier endpoint of this update had the same key (a duplicate).
   */
  private place(e: Endpoint, generation: number, argsChanged: boolean): EndpointChild | null {
    const key = endpointKey(e);
    let child = this.find(key, e);
    if (child === undefined) {
      child = this.createChild(e);
      this.add(key, child);
      child.generation = generation;
      if (!this.lazy) child.updateChild(childArgsFor(this.parentArgs), e);
      return child;
    }
    if (child.generation === generation) return null;
    child.generation = generation;
    const previous = child.endpoint;
    // An endpoint re-delivered as it was needs nothing from its child (hot for large, stable lists).
    const unchanged =
      previous === e || (previous.attributes === e.attributes && sameAddressOrder(previous, e));
    if (unchanged && !argsChanged) child.sameEndpoint(e);
    else child.updateChild(childArgsFor(this.parentArgs), e);
    return child;
  }

  private sweep(generation: number): void {
    workMeter.visits += this.size;
    const members = this.members;
    if (members === null) return;
    if (!(members instanceof Map)) {
      if (members.generation !== generation) {
        this.members = null;
        this.destroyChild(members);
      }
      return;
    }
    for (const [key, child] of members) {
      if (child.generation !== generation) {
        members.delete(key);
        this.destroyChild(child);
      }
    }
  }

  destroyAll(): void {
    workMeter.visits += this.size;
    for (const child of this.children) this.destroyChild(child);
    this.members = null;
  }

  /**
   * Adds `delta` to a state's count. Named stores, not `this[state]`: a keyed store on a policy object (one
   * shape per petiole class) made each child report several times slower than on a plain record.
   */
  private count(state: ConnectivityState, delta: number): void {
    switch (state) {
      case IDLE:
        this.IDLE += delta;
        break;
      case CONNECTING:
        this.CONNECTING += delta;
        break;
      case READY:
        this.READY += delta;
        break;
      case TRANSIENT_FAILURE:
        this.TRANSIENT_FAILURE += delta;
        break;
      default:
        this.SHUTDOWN += delta;
    }
  }

  private createChild(e: Endpoint): EndpointChild {
    const child = new EndpointChild(e, this, this.lazy);
    this.count(child.state, 1);
    return child;
  }

  private destroyChild(child: EndpointChild): void {
    this.count(child.state, -1);
    child.destroyChild();
    this.childDestroyed(child);
  }

  /** A child left the list (destroyed): least_request gives its call counter's slot back. */
  protected childDestroyed(_child: EndpointChild): void {}

  /** @internal EndpointChild's: its report. */
  onChildReport(child: EndpointChild, state: ConnectivityState, status: Status, picker: Picker): void {
    if (child.state === SHUTDOWN) return;
    const previous = child.state;
    this.count(previous, -1);
    this.count(state, 1);
    child.state = state;
    child.status = status;
    child.picker = picker;
    if (!this.updating) this.onChildState(child, previous);
  }
}

/** An {@link EndpointList} a policy owns rather than is (ring_hash): reports go to `owner`. */
export class OwnedEndpointList extends EndpointList {
  private readonly startsLazily: boolean;

  constructor(
    helper: Helper,
    private readonly owner: EndpointListOwner,
    options?: EndpointListOptions,
  ) {
    super(helper);
    this.startsLazily = options?.lazy ?? false;
  }

  override get lazy(): boolean {
    return this.startsLazily;
  }

  protected onChildState(child: EndpointChild, previous: ConnectivityState): void {
    this.owner.onChildState(child, previous);
  }

  override wrapSubchannel(child: EndpointChild, subchannel: Subchannel): Subchannel {
    return this.owner.wrapSubchannel?.(child, subchannel) ?? subchannel;
  }
}
