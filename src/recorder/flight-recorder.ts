import { writeFile } from 'node:fs/promises';
import {
  type CancelTimer,
  type Clock,
  type ConnectivityState,
  realClock,
  type Status,
} from '../core/index.js';
import {
  type CallClassPicks,
  type CallsEvent,
  type EndLine,
  type HealthEvent,
  type PickerEvent,
  RECORDING_FORMAT,
  type RecordedEvent,
  type RecordedRoute,
  type Recording,
  type RecordingHeader,
  type SubchannelEvent,
  SWITCH_EVENT_VERSION,
  type UpdateEvent,
} from './recording-format.js';

export interface FlightRecorderOptions {
  /** The ring's size in events (default 10,000); the oldest are dropped first. */
  readonly maxEvents?: number;
  /** The length of a call-outcome interval in ms (default 1000). */
  readonly intervalMs?: number;
  /** A name for the recording (the channel's target, say), written in the header. */
  readonly label?: string;
  /** Time source (default the wall clock); tests give the simulator's. */
  readonly clock?: Clock;
  /**
   * The most call classes (an xDS call's route, cluster, path and routed-on headers) one interval counts
   * (default 64; 0 counts none): calls of further classes count per route only.
   */
  readonly maxCallClasses?: number;
}

export const DEFAULT_MAX_EVENTS = 10_000;
export const DEFAULT_INTERVAL_MS = 1000;
export const DEFAULT_MAX_CALL_CLASSES = 64;
/** The longest path or header value a call class keeps, so a class's size is bounded too. */
export const MAX_CLASS_TEXT = 256;

/**
 * The call counters of one endpoint address for the current interval. One object per address for the
 * recorder's life: a call's end only adds to it, so recording allocates nothing per call.
 */
export class EndpointCalls {
  picks = 0;
  calls = 0;
  errors = 0;
  orcaReports = 0;
  cpuUtilizationSum = 0;
  /** Whether it is in the current interval's list. */
  listed = false;
  constructor(readonly address: string) {}
}

/**
 * The picks of one route (its index in the latest update's `xdsRoutes`) that went to one xds_cluster_manager
 * child, in the current interval.
 */
class RouteCalls {
  picks = 0;
  listed = false;
  constructor(
    readonly route: number,
    readonly child: string,
  ) {}
}

/** The picks of one call class in the current interval (made when the class is first seen in it). */
class CallClass {
  picks = 0;
  readonly route: number;
  constructor(
    /** The route's index as the call's pick information has it (a decimal string). */
    readonly routeKey: string,
    readonly child: string,
    readonly path: string,
    /** The values of the recorder's `callClassHeaders`, in their order (undefined: not carried). */
    readonly values: readonly (string | undefined)[],
  ) {
    this.route = Number(routeKey);
  }
}

/** A node of the current interval's call class tree: the class its path ends at, if one, and the next keys. */
interface ClassNode {
  leaf: CallClass | undefined;
  readonly next: Map<string | undefined, ClassNode>;
}

const newClassNode = (): ClassNode => ({ leaf: undefined, next: new Map() });

function fitsInClass(path: string, values: readonly (string | undefined)[]): boolean {
  if (path.length > MAX_CLASS_TEXT) return false;
  for (const v of values) if (v !== undefined && v.length > MAX_CLASS_TEXT) return false;
  return true;
}

/** The node under `node` at `key`, made when missing if there is `room`. */
function nextNode(
  node: ClassNode | undefined,
  key: string | undefined,
  room: boolean,
): ClassNode | undefined {
  if (node === undefined) return undefined;
  let next = node.next.get(key);
  if (next === undefined && room) {
    next = newClassNode();
    node.next.set(key, next);
  }
  return next;
}

/**
 * The headers a call class records: those the routes match on (A28 treats `-bin` and `grpc-` headers as absent)
 * and those their hash policies hash (A42 treats `-bin` headers as absent), sorted.
 */
function routedOnHeaders(routes: readonly RecordedRoute[] | undefined): string[] {
  const names = new Set<string>();
  for (const route of routes ?? []) {
    for (const h of route.matcher?.headers ?? [])
      if (!h.name.endsWith('-bin') && !h.name.startsWith('grpc-')) names.add(h.name);
    for (const p of route.hashPolicies ?? []) {
      const name = p.type === 'header' ? p.headerName.toLowerCase() : '';
      if (name !== '' && !name.endsWith('-bin')) names.add(name);
    }
  }
  return [...names].sort();
}

/** What a dropped event leaves behind, so an export still starts from a complete picture. */
interface Baseline {
  update: UpdateEvent | undefined;
  picker: PickerEvent | undefined;
  readonly subchannels: Map<string, SubchannelEvent>;
  readonly health: Map<string, HealthEvent>;
}

type WithoutTime<T> = Omit<T, 'type' | 'at'>;

/**
 * A bounded ring of what one channel's LB tree saw and did (docs/recording-format.md): updates at the root,
 * connection states and health per address, pickers published, and call outcomes per endpoint and interval.
 * When the ring is full the oldest event goes; the latest update, picker and per-address states it held are
 * kept aside (one of each), so an export always starts from a state the replay can rebuild.
 */
export class FlightRecorder {
  readonly maxEvents: number;
  readonly intervalMs: number;
  readonly label: string;
  readonly maxCallClasses: number;
  private readonly clock: Clock;
  private readonly origin: number;
  private readonly startedAt: string;
  private readonly ring: RecordedEvent[] = [];
  private head = 0;
  private dropped = 0;
  private readonly baseline: Baseline = {
    update: undefined,
    picker: undefined,
    subchannels: new Map(),
    health: new Map(),
  };
  private readonly counters = new Map<string, EndpointCalls>();
  private readonly listed: EndpointCalls[] = [];
  /** Per route key (the xDS route's index as a string, as the call's pick information has it), per child. */
  private readonly routeCounters = new Map<string, Map<string, RouteCalls>>();
  private readonly routesListed: RouteCalls[] = [];
  /** The last route and child counted, and their counter: most calls in a row take the same route. */
  private lastRoute: string | undefined;
  private lastChild: string | undefined;
  private lastRouteCalls: RouteCalls | undefined;
  /** The headers call classes record, from the latest update's routes (see {@link callClassHeaders}). */
  private classHeaders: readonly string[] = [];
  /**
   * The current interval's call classes, in a tree keyed by route, child, path, then each header value (map
   * lookups of the call's own strings: no key is built per call); the last one counted, which calls repeat.
   */
  private classTree: ClassNode = newClassNode();
  private readonly classes: CallClass[] = [];
  private lastClass: CallClass | undefined;
  /** The node of the last (route, child, path) looked up: calls of one method differ in their headers only. */
  private lastPathNode: { route: string; child: string; path: string; node: ClassNode } | undefined;
  /** The open interval's start, and its timer (null while no call is counted: an idle channel has none). */
  private intervalStart = 0;
  private intervalTimer: CancelTimer | null = null;
  private failedPicks = 0;
  private droppedPicks = 0;

  constructor(options: FlightRecorderOptions = {}) {
    this.maxEvents = options.maxEvents ?? DEFAULT_MAX_EVENTS;
    this.intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
    this.label = options.label ?? '';
    this.maxCallClasses = options.maxCallClasses ?? DEFAULT_MAX_CALL_CLASSES;
    if (!Number.isInteger(this.maxEvents) || this.maxEvents < 1) {
      throw new RangeError(`FlightRecorder maxEvents: expected a positive integer, got ${this.maxEvents}`);
    }
    if (!Number.isInteger(this.intervalMs) || this.intervalMs < 1) {
      throw new RangeError(`FlightRecorder intervalMs: expected a positive integer, got ${this.intervalMs}`);
    }
    if (!Number.isInteger(this.maxCallClasses) || this.maxCallClasses < 0) {
      throw new RangeError(
        `FlightRecorder maxCallClasses: expected an integer >= 0, got ${this.maxCallClasses}`,
      );
    }
    this.clock = options.clock ?? realClock;
    this.origin = this.clock.now();
    this.startedAt = new Date().toISOString();
  }

  /** Milliseconds since the recorder was made, the time base of every event. */
  now(): number {
    return Math.round(this.clock.now() - this.origin);
  }

  /** Events in the ring now. */
  get size(): number {
    return this.ring.length;
  }

  /** Events dropped from the ring so far. */
  get droppedEvents(): number {
    return this.dropped;
  }

  update(update: WithoutTime<UpdateEvent>): void {
    this.push({ type: 'update', at: this.now(), ...update });
    this.classHeaders = routedOnHeaders(update.xdsRoutes);
  }

  /**
   * The headers (lower-cased names, sorted) whose values a call class records: those the latest update's
   * routes match on or hash by. {@link callClassPicked} takes their values in this order.
   */
  get callClassHeaders(): readonly string[] {
    return this.classHeaders;
  }

  /** grpc-js is switching the channel's root policy from `from` to `to` (`started`), or switched (`done`). */
  rootSwitch(from: string, to: string, phase: 'started' | 'done'): void {
    this.push({ type: 'switch', at: this.now(), from, to, phase });
  }

  subchannelState(address: string, state: ConnectivityState, details?: string): void {
    this.push({
      type: 'subchannel',
      at: this.now(),
      address,
      state,
      ...(details !== undefined ? { details } : {}),
    });
  }

  subchannelHealth(address: string, healthy: boolean): void {
    this.push({ type: 'health', at: this.now(), address, healthy });
  }

  /** A timer the tree set at `setAt` for `delayMs` fired now (a replay runs it as late). */
  timerFired(setAt: number, delayMs: number): void {
    if (delayMs > 0) this.push({ type: 'timer', at: this.now(), setAt, delayMs });
  }

  picker(state: ConnectivityState, status: Status): void {
    this.push({
      type: 'picker',
      at: this.now(),
      state,
      status: { code: status.code, details: status.details },
    });
  }

  /** The counters of one address, made on first use and kept: hold it, and count calls with `callEnded`. */
  endpoint(address: string): EndpointCalls {
    let counter = this.counters.get(address);
    if (counter === undefined) {
      counter = new EndpointCalls(address);
      this.counters.set(address, counter);
    }
    return counter;
  }

  /** The root's picker sent a call to `counter`'s endpoint. */
  picked(counter: EndpointCalls): void {
    if (this.intervalTimer === null) this.openInterval();
    this.list(counter);
    counter.picks++;
  }

  /** A call on `counter`'s endpoint ended; `cpuUtilization` when its trailers had an ORCA report. */
  callEnded(counter: EndpointCalls, ok: boolean, cpuUtilization?: number): void {
    if (this.intervalTimer === null) this.openInterval();
    this.list(counter);
    counter.calls++;
    if (!ok) counter.errors++;
    if (cpuUtilization !== undefined) {
      counter.orcaReports++;
      counter.cpuUtilizationSum += cpuUtilization;
    }
  }

  private list(counter: EndpointCalls): void {
    if (!counter.listed) {
      counter.listed = true;
      this.listed.push(counter);
    }
  }

  /**
   * A pick (complete, failed or dropped) of a call the xDS config selector sent down route `route` (its index
   * in the update's `xdsRoutes`, as a decimal string) to xds_cluster_manager's child `child` (`cluster:NAME`,
   * the call attribute the tree was given); a route that is not an index is ignored.
   */
  routePicked(route: string, child: string): void {
    const counter =
      route === this.lastRoute && child === this.lastChild
        ? this.lastRouteCalls
        : this.routeCalls(route, child);
    if (counter === undefined) return;
    if (this.intervalTimer === null) this.openInterval();
    if (!counter.listed) {
      counter.listed = true;
      this.routesListed.push(counter);
    }
    counter.picks++;
  }

  /**
   * A pick counted by {@link routePicked}, by its call's class: the route, the child, the call's path and the
   * values of {@link callClassHeaders} (the caller may reuse the array). The interval counts up to
   * `maxCallClasses` classes; a call of another class, or whose path or a header value is longer than
   * {@link MAX_CLASS_TEXT} characters, then counts under its route only.
   */
  callClassPicked(route: string, child: string, path: string, values: readonly (string | undefined)[]): void {
    const last = this.lastClass;
    if (last !== undefined && sameClass(last, route, child, path, values)) {
      last.picks++;
      return;
    }
    // A new class (or any node of its path) is made only while the interval has room for it.
    const room = this.classes.length < this.maxCallClasses && fitsInClass(path, values);
    const at = this.lastPathNode;
    let node: ClassNode | undefined;
    if (at !== undefined && at.route === route && at.child === child && at.path === path) node = at.node;
    else {
      if (!this.routeCounters.has(route)) return;
      node = nextNode(nextNode(nextNode(this.classTree, route, room), child, room), path, room);
      if (node !== undefined) this.lastPathNode = { route, child, path, node };
    }
    for (let i = 0; i < values.length && node !== undefined; i++) node = nextNode(node, values[i], room);
    if (node === undefined) return;
    let c = node.leaf;
    if (c === undefined) {
      c = new CallClass(route, child, path, [...values]);
      node.leaf = c;
      this.classes.push(c);
      if (this.intervalTimer === null) this.openInterval();
    }
    this.lastClass = c;
    c.picks++;
  }

  /** The counter of (route, child), made on first use and kept; undefined when `route` is not an index. */
  private routeCalls(route: string, child: string): RouteCalls | undefined {
    let children = this.routeCounters.get(route);
    if (children === undefined) {
      const index = Number(route);
      if (!Number.isInteger(index) || index < 0 || String(index) !== route) return undefined;
      children = new Map();
      this.routeCounters.set(route, children);
    }
    let counter = children.get(child);
    if (counter === undefined) {
      counter = new RouteCalls(Number(route), child);
      children.set(child, counter);
    }
    this.lastRoute = route;
    this.lastChild = child;
    this.lastRouteCalls = counter;
    return counter;
  }

  /** The root's picker failed (or, `dropped`, dropped) a call. */
  pickFailed(dropped: boolean): void {
    if (this.intervalTimer === null) this.openInterval();
    if (dropped) this.droppedPicks++;
    else this.failedPicks++;
  }

  /** The recording so far, with the current interval's calls. */
  snapshot(): Recording {
    const ring = [...this.ring.slice(this.head), ...this.ring.slice(0, this.head)];
    const header: RecordingHeader = {
      format: RECORDING_FORMAT,
      // The lowest version whose page the file follows: without a switch, readers of version 1 read it.
      version: ring.some((e) => e.type === 'switch') ? SWITCH_EVENT_VERSION : 1,
      startedAt: this.startedAt,
      intervalMs: this.intervalMs,
      maxEvents: this.maxEvents,
      droppedEvents: this.dropped,
      label: this.label,
      maxCallClasses: this.maxCallClasses,
    };
    const b = this.baseline;
    const kept: RecordedEvent[] = [
      ...(b.update ? [b.update] : []),
      ...b.subchannels.values(),
      ...b.health.values(),
      ...(b.picker ? [b.picker] : []),
    ].sort((x, y) => x.at - y.at);
    const endAt = this.now();
    const current = this.intervalTimer === null ? undefined : this.currentCalls(endAt);
    return { header, events: [...kept, ...ring, ...(current ? [current] : [])], endAt };
  }

  /** The recording as JSON lines (docs/recording-format.md): the header, one line per event, the end line. */
  export(): string {
    const recording = this.snapshot();
    const end: EndLine = { type: 'end', at: recording.endAt, events: recording.events.length };
    const lines = [recording.header, ...recording.events, end].map((x) => JSON.stringify(x));
    return `${lines.join('\n')}\n`;
  }

  /** Writes {@link export} to a file. */
  async writeFile(path: string): Promise<void> {
    await writeFile(path, this.export());
  }

  /**
   * Starts an interval with the first call counted after an idle one. Calls are counted without reading the
   * clock (a clock read costs more than the counting on some machines). The interval closes when its timer
   * runs or when another event is recorded, whichever is first; its event records its true bounds.
   */
  private openInterval(): void {
    this.intervalStart = this.now();
    this.intervalTimer = this.clock.setTimer(this.intervalMs, () => this.closeInterval());
  }

  /** Writes the interval's counts and opens the next one, unless nothing was counted in it. */
  private closeInterval(): void {
    this.intervalTimer?.();
    const now = this.now();
    const done = this.currentCalls(now);
    for (const c of this.listed) {
      c.picks = 0;
      c.calls = 0;
      c.errors = 0;
      c.orcaReports = 0;
      c.cpuUtilizationSum = 0;
      c.listed = false;
    }
    this.listed.length = 0;
    for (const r of this.routesListed) {
      r.picks = 0;
      r.listed = false;
    }
    this.routesListed.length = 0;
    if (this.classes.length > 0) {
      this.classes.length = 0;
      this.classTree = newClassNode();
    }
    this.lastClass = undefined;
    this.lastPathNode = undefined;
    this.failedPicks = 0;
    this.droppedPicks = 0;
    if (done === undefined) {
      this.intervalTimer = null;
      return;
    }
    this.push(done);
    this.intervalStart = now;
    this.intervalTimer = this.clock.setTimer(this.intervalMs, () => this.closeInterval());
  }

  /** The open interval as an event ending at `end`, or undefined when nothing was counted in it. */
  private currentCalls(end: number): CallsEvent | undefined {
    if (
      this.listed.length === 0 &&
      this.failedPicks === 0 &&
      this.droppedPicks === 0 &&
      this.routesListed.length === 0
    )
      return undefined;
    return {
      type: 'calls',
      at: this.intervalStart,
      durationMs: end - this.intervalStart,
      endpoints: this.listed.map((c) => ({
        address: c.address,
        picks: c.picks,
        calls: c.calls,
        errors: c.errors,
        orcaReports: c.orcaReports,
        cpuUtilization: c.orcaReports === 0 ? 0 : c.cpuUtilizationSum / c.orcaReports,
      })),
      failedPicks: this.failedPicks,
      droppedPicks: this.droppedPicks,
      ...(this.routesListed.length > 0
        ? {
            routes: this.routesListed
              .map((r) => ({ route: r.route, child: r.child, picks: r.picks }))
              .sort((a, b) => a.route - b.route || (a.child < b.child ? -1 : a.child > b.child ? 1 : 0)),
          }
        : {}),
      ...(this.classes.length > 0 ? { callClasses: this.callClasses() } : {}),
    };
  }

  /** The interval's call classes, by route, child, path and header values. */
  private callClasses(): CallClassPicks[] {
    const names = this.classHeaders;
    return this.classes
      .map((c) => {
        const headers: Record<string, string> = {};
        c.values.forEach((v, i) => {
          if (v !== undefined) headers[names[i]!] = v;
        });
        return { route: c.route, child: c.child, path: c.path, headers, picks: c.picks };
      })
      .map((c) => ({ c, order: JSON.stringify([c.child, c.path, c.headers]) }))
      .sort((a, b) => a.c.route - b.c.route || compare(a.order, b.order))
      .map((x) => x.c);
  }

  private push(event: RecordedEvent): void {
    // Every other event closes the open interval: a replay then knows which calls came before it and which
    // after (the calls a new picker released, the calls before and after an ejection).
    if (event.type !== 'calls' && this.intervalTimer !== null) this.closeInterval();
    const ring = this.ring;
    if (ring.length < this.maxEvents) {
      ring.push(event);
      return;
    }
    this.keepAside(ring[this.head]!);
    ring[this.head] = event;
    this.head = (this.head + 1) % ring.length;
    this.dropped++;
  }

  private keepAside(event: RecordedEvent): void {
    const b = this.baseline;
    switch (event.type) {
      case 'update':
        b.update = event;
        break;
      case 'picker':
        b.picker = event;
        break;
      case 'subchannel':
        b.subchannels.set(event.address, event);
        break;
      case 'health':
        b.health.set(event.address, event);
        break;
      case 'calls':
      case 'timer':
      case 'switch':
        break;
    }
  }
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function sameClass(
  c: CallClass,
  route: string,
  child: string,
  path: string,
  values: readonly (string | undefined)[],
): boolean {
  if (c.routeKey !== route || c.child !== child || c.path !== path) return false;
  if (c.values.length !== values.length) return false;
  for (let i = 0; i < values.length; i++) if (c.values[i] !== values[i]) return false;
  return true;
}
