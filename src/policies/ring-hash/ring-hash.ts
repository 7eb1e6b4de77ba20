import {
  addressKey,
  type CancelTimer,
  type ChannelArgs,
  CONNECTING,
  type ConnectivityState,
  ENDPOINT_WEIGHT,
  type Endpoint,
  FailPicker,
  formatStatus,
  HASH_KEY,
  type Helper,
  IDLE,
  type LbUpdate,
  type LoadBalancer,
  MAX_UINT32,
  OK_STATUS,
  type PolicyFactory,
  type PolicyNode,
  READY,
  SPREAD_MIN_ENDPOINTS,
  type Status,
  sameChannelArgs,
  sameEndpointList,
  TRANSIENT_FAILURE,
  type UpdateTurns,
  unavailable,
  workMeter,
} from '../../core/index.js';
import { type EndpointChild, OwnedEndpointList, type Placement } from '../shared/endpoint-list.js';
import { sameConfig } from '../shared/last-update.js';
import { effectiveRingSizes, parseRingHashConfig, RING_HASH, type RingHashConfig } from './config.js';
import { RingHashPicker } from './picker.js';
import { buildRing, type Ring } from './ring.js';
import { RingView } from './ring-view.js';

/** A list being placed over several event-loop turns (issue 25 §5). */
interface RingSpread {
  readonly placement: Placement;
  /** The list being placed (the placement's). */
  readonly endpoints: readonly Endpoint[];
  readonly attributes: ChannelArgs;
  readonly config: RingHashConfig;
  /** The children that duplicate endpoints of the list were folded into, and those endpoints. */
  readonly duplicates: EndpointChild[];
  readonly duplicateEndpoints: Endpoint[];
  readonly onDuplicate: (child: EndpointChild, duplicate: Endpoint) => void;
  /** The cancellation of its next step. */
  cancel: () => void;
}

/** A spread list's cancellation before its first step is queued. */
const NOT_WAITING = () => {};

/** The children that duplicate endpoints of a list were folded into, those endpoints, and the fold callback. */
function duplicateFolds() {
  const duplicates: EndpointChild[] = [];
  const duplicateEndpoints: Endpoint[] = [];
  const onDuplicate = (child: EndpointChild, e: Endpoint): void => {
    duplicates.push(child);
    duplicateEndpoints.push(e);
  };
  return { duplicates, duplicateEndpoints, onDuplicate };
}

/**
 * ring_hash_experimental (A42, with A61's pick_first children and A76's request hash header): consistent
 * hashing over a ring built as Envoy builds it. One pick_first child per endpoint, created only when a
 * connection to that endpoint is wanted (a pick lands on it, or the A61 proactive rule picks it).
 */
export class RingHash implements LoadBalancer<RingHashConfig> {
  private readonly list: OwnedEndpointList;
  private ring: Ring | null = null;
  /** The distinct endpoints of the current list in list order; a child's `slot` is its index here. */
  private children: EndpointChild[] = [];
  private keys: string[] = [];
  private weights = new Float64Array(0);
  private minRingSize = 0;
  private maxRingSize = 0;
  /**
   * Each endpoint's latest state and picker, by index, written in place and read by every picker of the current
   * list: a child report costs O(1) and allocates only its small picker, so a connect storm of n endpoints is
   * O(n) in total. Null until the first list.
   */
  private view: RingView | null = null;
  /** IDLE endpoints that have ring entries: the candidates for a proactive connection. */
  private idleInRing = 0;
  /** Endpoints that have ring entries and are not in TRANSIENT_FAILURE (none: every pick fails). */
  private workingInRing = 0;
  private proactiveCursor = 0;
  private connectEndpoint: (endpoint: number) => void = () => {};
  /**
   * Endpoints picks asked to connect since the last hop (the first `pendingCount` slots), and (by index in the
   * current list) whether each is already asked for, so a burst of picks on one IDLE endpoint queues it once.
   * Two arrays take turns and are written by index, never emptied with `length = 0` (V8 then drops the
   * backing store, and every hop would allocate a new one).
   */
  private pendingConnects: (EndpointChild | undefined)[] = [];
  private pendingCount = 0;
  private runningConnects: (EndpointChild | undefined)[] = [];
  private connectRequested = new Uint8Array(0);
  private connectTimer: CancelTimer | null = null;
  private readonly runPendingConnectsNow = (): void => this.runPendingConnects();
  private reported: ConnectivityState | null = null;
  private lastFailure: Status | null = null;
  private refreshing = false;
  private refreshAgain = false;
  private destroyed = false;
  /**
   * A list being placed over several turns; null otherwise. Meanwhile the old ring, view and picker serve (the
   * new list's children are placed beside the old ones, which stay until the last step sweeps them), and the
   * ring of the new list is built once, when the last endpoint is placed.
   */
  private spread: RingSpread | null = null;
  /** The list in use, with its settings and config: delivered again, it places nothing new (no spread). */
  private applied: {
    endpoints: readonly Endpoint[];
    attributes: ChannelArgs;
    config: RingHashConfig;
  } | null = null;
  private readonly random: () => number;

  constructor(private readonly helper: Helper) {
    this.list = new OwnedEndpointList(
      helper,
      { onChildState: (child, previous) => this.onChildState(child, previous) },
      { lazy: true },
    );
    this.random = () => helper.random();
    // A42: its IDLE endpoints are woken by picks, never by exitIdle() (below), so the parent need not call it.
    helper.updateWakeable?.(false);
  }

  update(update: LbUpdate<RingHashConfig>): boolean {
    if (this.destroyed) return false;
    const note = update.resolutionNote ? ` (${update.resolutionNote})` : '';
    if (!update.endpoints.ok) {
      // With endpoints already in hand (or being placed) a resolver error changes nothing.
      if (this.children.length === 0 && this.spread === null) {
        this.fail(unavailable(`name resolution failed: ${update.endpoints.status.details}${note}`));
      }
      return false;
    }
    let endpoints = update.endpoints.value;
    workMeter.visits += endpoints.length;
    if (endpoints.some((e) => e.addresses.length === 0))
      endpoints = endpoints.filter((e) => e.addresses.length > 0);
    if (endpoints.length === 0) {
      this.clear();
      this.fail(unavailable(`empty endpoint list${note}`));
      return false;
    }
    const turns = this.helper.updateTurns;
    if (turns !== undefined) {
      // The list being spread delivered again: it goes on.
      if (this.spread !== null && this.isList(this.spread, endpoints, update.attributes, update.config)) {
        return true;
      }
      this.stopSpread();
      // A big list waits for later turns; a small one too once the channel has placed a turn's worth in this
      // one. The list in use delivered again places nothing: applied at once, as without turns.
      const again =
        this.applied !== null && this.isList(this.applied, endpoints, update.attributes, update.config);
      if (!again && (endpoints.length >= SPREAD_MIN_ENDPOINTS || !turns.placeNow(endpoints.length))) {
        this.startSpread(turns, endpoints, update.attributes, update.config);
        return true;
      }
    }
    this.applyEndpoints(endpoints, update.attributes, update.config);
    this.refresh();
    return true;
  }

  /** Whether `list` (the one being spread, or the one in use) is this one, with these settings and config. */
  private isList(
    list: {
      readonly endpoints: readonly Endpoint[];
      readonly attributes: ChannelArgs;
      readonly config: RingHashConfig;
    },
    endpoints: readonly Endpoint[],
    attributes: ChannelArgs,
    config: RingHashConfig,
  ): boolean {
    return (
      sameConfig(config, list.config) &&
      sameChannelArgs(attributes, list.attributes) &&
      sameEndpointList(list.endpoints, endpoints)
    );
  }

  private startSpread(
    turns: UpdateTurns,
    endpoints: readonly Endpoint[],
    attributes: ChannelArgs,
    config: RingHashConfig,
  ): void {
    this.spread = {
      placement: this.list.startPlacing(endpoints, attributes),
      endpoints,
      attributes,
      config,
      ...duplicateFolds(),
      cancel: NOT_WAITING,
    };
    this.spreadStep(turns);
  }

  /**
   * Places as much of the spread list as this turn's budget allows; the last step builds the ring and reports,
   * as the list applied in one turn would have.
   */
  private spreadStep(turns: UpdateTurns): void {
    const spread = this.spread!;
    const placement = spread.placement;
    const left = placement.endpoints.length - placement.next;
    this.list.placeSome(placement, turns.take(left), spread.onDuplicate);
    if (placement.next < placement.endpoints.length) {
      spread.cancel = turns.later(() => this.spreadStep(turns));
      return;
    }
    this.spread = null;
    const children = this.list.finishPlacing(placement);
    this.useEndpoints(
      placement.endpoints,
      children,
      spread.duplicates,
      spread.duplicateEndpoints,
      spread.attributes,
      spread.config,
    );
    this.refresh();
  }

  /** Abandons a spread list (a newer update supersedes it, or the policy goes). */
  private stopSpread(): void {
    const spread = this.spread;
    if (spread === null) return;
    this.spread = null;
    spread.cancel();
  }

  /**
   * ring_hash connects only where picks land (A42) and by the A61 proactive rule, so a request to leave
   * IDLE has nothing to start; as in gRPC C-core, it is ignored.
   */
  exitIdle(): void {}

  resetBackoff(): void {
    workMeter.visits += this.children.length;
    for (const child of this.children) child.resetBackoff();
  }

  destroy(): void {
    this.stopSpread();
    this.destroyed = true;
    this.connectTimer?.();
    this.connectTimer = null;
    this.pendingConnects = [];
    this.pendingCount = 0;
    this.list.destroyAll();
    this.children = [];
    this.ring = null;
  }

  /** Updates the children (A61: kept by address set, updated in place) and rebuilds the ring if it changed. */
  private applyEndpoints(
    endpoints: readonly Endpoint[],
    attributes: ChannelArgs,
    config: RingHashConfig,
  ): void {
    const { duplicates, duplicateEndpoints, onDuplicate } = duplicateFolds();
    const children = this.list.updateEndpoints(endpoints, attributes, onDuplicate);
    this.useEndpoints(endpoints, children, duplicates, duplicateEndpoints, attributes, config);
  }

  /**
   * The rest of an update once every endpoint is placed (`children`: the distinct ones, in list order; each
   * of `duplicates` absorbed the endpoint beside it in `duplicateEndpoints`): keys, weights, the ring if its
   * inputs changed, and a new view.
   */
  private useEndpoints(
    endpoints: readonly Endpoint[],
    children: EndpointChild[],
    duplicates: readonly EndpointChild[],
    duplicateEndpoints: readonly Endpoint[],
    attributes: ChannelArgs,
    config: RingHashConfig,
  ): void {
    this.applied = { endpoints, attributes, config };
    const n = children.length;
    // This loop, the ring comparison and the state loop below.
    workMeter.visits += 3 * n + duplicates.length;
    const keys = new Array<string>(n);
    const weights = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const child = children[i]!;
      child.slot = i;
      keys[i] = ringKey(child.endpoint);
      weights[i] = endpointWeight(child.endpoint);
    }
    // Duplicates (same address set; A61: resolver attributes are ignored) add their weight to the first.
    for (let j = 0; j < duplicates.length; j++) {
      const slot = duplicates[j]!.slot;
      weights[slot] = weights[slot]! + endpointWeight(duplicateEndpoints[j]!);
    }
    const { minRingSize, maxRingSize } = effectiveRingSizes(config, attributes);
    if (
      this.ring === null ||
      minRingSize !== this.minRingSize ||
      maxRingSize !== this.maxRingSize ||
      !sameRingInputs(this.children, this.keys, this.weights, children, keys, weights)
    ) {
      this.ring = buildRing(keys, weights, minRingSize, maxRingSize);
      workMeter.visits += n + this.ring.size;
      this.minRingSize = minRingSize;
      this.maxRingSize = maxRingSize;
      this.helper.trace(
        () =>
          `ring_hash: built a ring of ${this.ring!.size} entries for ${n} endpoints (sizes ${minRingSize}..${maxRingSize})`,
      );
    }
    this.children = children;
    this.keys = keys;
    this.weights = weights;
    this.connectEndpoint = (e) => this.scheduleConnect(children, e);
    this.connectRequested = new Uint8Array(n);
    const view = new RingView(
      this.ring,
      config.requestHashHeader,
      this.list.counts,
      this.connectEndpoint,
      this.random,
    );
    this.view = view;
    const perEndpoint = this.ring.entriesPerEndpoint;
    this.idleInRing = 0;
    this.workingInRing = 0;
    this.proactiveCursor = 0;
    for (let i = 0; i < n; i++) {
      const child = children[i]!;
      view.set(i, child.state, child.picker);
      if (perEndpoint[i]! > 0) {
        if (child.state === IDLE) this.idleInRing++;
        if (child.state !== TRANSIENT_FAILURE) this.workingInRing++;
      }
      if (child.state === TRANSIENT_FAILURE) this.lastFailure = child.status;
    }
    view.allFailed = this.workingInRing === 0;
  }

  private clear(): void {
    this.stopSpread();
    this.applied = null;
    this.list.destroyAll();
    this.pendingConnects = [];
    this.pendingCount = 0;
    this.children = [];
    this.keys = [];
    this.weights = new Float64Array(0);
    this.ring = null;
    this.connectRequested = new Uint8Array(0);
    this.view = null;
    this.idleInRing = 0;
    this.workingInRing = 0;
  }

  private onChildState(child: EndpointChild, previous: ConnectivityState): void {
    const slot = child.slot;
    if (this.destroyed || this.children[slot] !== child) return;
    const inRing = this.ring!.entriesPerEndpoint[slot]! > 0;
    if (inRing) {
      if (previous === IDLE) this.idleInRing--;
      if (child.state === IDLE) this.idleInRing++;
      if (previous === TRANSIENT_FAILURE) this.workingInRing++;
      if (child.state === TRANSIENT_FAILURE) this.workingInRing--;
    }
    const view = this.view!;
    view.set(slot, child.state, child.picker);
    view.allFailed = this.workingInRing === 0;
    if (previous === IDLE && child.state === CONNECTING && this.aggregatedState() === this.reported) {
      // An endpoint a pick (or the proactive rule) started is connecting, and the aggregated state stands: the
      // published picker reads the endpoint's live state (A42 allows a picker to read state the policy keeps
      // current) and queues there. A new picker would change nothing a pick sees, so each endpoint of a
      // connect storm makes one picker, when it is READY, not two.
      return;
    }
    if (child.state === TRANSIENT_FAILURE) {
      this.lastFailure = child.status;
      // pick_first re-resolves when it fails to connect or loses its connection; a READY child turned
      // unhealthy (health watch) is the one case it does not see.
      if (previous === READY) this.helper.requestReresolution();
    }
    this.refresh();
  }

  /**
   * Reports the aggregated state with a new picker (A42: a new picker on every endpoint state change), then
   * applies the A61 proactive-connection rule. A connection started here can make a child report at once;
   * such nested reports are folded into another round instead of re-entering.
   */
  private refresh(): void {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = true;
    try {
      do {
        this.refreshAgain = false;
        this.report();
        this.connectProactively();
      } while (this.refreshAgain && !this.destroyed);
    } finally {
      this.refreshing = false;
    }
  }

  /** A42 "Aggregated Connectivity State", the six rules in order. */
  private aggregatedState(): ConnectivityState {
    const counts = this.list.counts;
    if (counts[READY] > 0) return READY;
    if (counts[TRANSIENT_FAILURE] >= 2) return TRANSIENT_FAILURE;
    if (counts[CONNECTING] > 0) return CONNECTING;
    if (counts[TRANSIENT_FAILURE] === 1 && this.children.length > 1) return CONNECTING;
    if (counts[IDLE] > 0) return IDLE;
    return TRANSIENT_FAILURE;
  }

  private report(): void {
    workMeter.visits++;
    const state = this.aggregatedState();
    let status = OK_STATUS;
    if (state === TRANSIENT_FAILURE) {
      const last = this.lastFailure ? formatStatus(this.lastFailure) : 'unknown';
      status = unavailable(`no reachable endpoints; last error: ${last}`);
    }
    // The ring picker serves every state, TRANSIENT_FAILURE included (A42).
    // A new picker object for every report, though all read the same view: a parent passes a report up only
    // when something differs (priority compares pickers), and calls queued on the channel are re-picked
    // only on a new picker.
    const picker = new RingHashPicker(this.view!);
    this.reported = state;
    this.helper.updateState(state, status, picker);
  }

  /**
   * A61 (upstream text): while the aggregated state is TRANSIENT_FAILURE or CONNECTING and no endpoint is
   * CONNECTING, start one IDLE endpoint, so the policy recovers even when a parent sends it no picks.
   */
  private connectProactively(): void {
    if (this.reported !== TRANSIENT_FAILURE && this.reported !== CONNECTING) return;
    if (this.list.counts[CONNECTING] > 0 || this.idleInRing === 0) return;
    const n = this.children.length;
    const perEndpoint = this.ring!.entriesPerEndpoint;
    // Resume after the last endpoint chosen, so repeated outages do not rescan the same prefix.
    for (let i = 0; i < n; i++) {
      let e = this.proactiveCursor + i;
      if (e >= n) e -= n;
      workMeter.visits++;
      if (this.children[e]!.state === IDLE && perEndpoint[e]! > 0) {
        this.proactiveCursor = e + 1 === n ? 0 : e + 1;
        const child = this.children[e]!;
        traceProactiveConnect(this.helper, child);
        child.connect();
        return;
      }
    }
  }

  /**
   * A pick asked for endpoint `e` of the list `children` to connect: hop off the data path (as pick_first's
   * IdlePicker does). A picker from before the latest update still names its own list's children.
   */
  private scheduleConnect(children: readonly EndpointChild[], e: number): void {
    if (this.destroyed) return;
    if (children === this.children) {
      if (this.connectRequested[e] === 1) return;
      this.connectRequested[e] = 1;
    }
    this.pendingConnects[this.pendingCount++] = children[e]!;
    this.connectTimer ??= this.helper.clock.setTimer(0, this.runPendingConnectsNow);
  }

  private runPendingConnects(): void {
    this.connectTimer = null;
    const pending = this.pendingConnects;
    const count = this.pendingCount;
    // Picks during the connects below (a child reporting) queue into the other array and another hop.
    this.pendingConnects = this.runningConnects;
    this.pendingCount = 0;
    this.runningConnects = pending;
    workMeter.visits += count;
    const children = this.children;
    const requested = this.connectRequested;
    for (let i = 0; i < count; i++) {
      const child = pending[i]!;
      pending[i] = undefined;
      if (children[child.slot] === child) requested[child.slot] = 0;
      // A child dropped by an update since is SHUTDOWN, and connect() ignores it.
      child.connect();
    }
  }

  /** The live view: the ring's size and each endpoint's share of it (A42), and every endpoint's pick_first. */
  describe(): PolicyNode {
    const state = this.reported ?? CONNECTING;
    const ring = this.ring;
    const failure = state === TRANSIENT_FAILURE ? this.lastFailure : null;
    return {
      policy: RING_HASH,
      state,
      ...(failure !== null && { status: { code: failure.code, details: failure.details } }),
      facts: { ringSize: ring?.size ?? 0, minRingSize: this.minRingSize, maxRingSize: this.maxRingSize },
      children: this.list.describeEndpoints((child) =>
        ring !== null && child.slot >= 0
          ? { ringEntries: ring.entriesPerEndpoint[child.slot] ?? 0 }
          : undefined,
      ),
    };
  }

  private fail(status: Status): void {
    this.helper.requestReresolution();
    this.reported = TRANSIENT_FAILURE;
    this.helper.updateState(TRANSIENT_FAILURE, status, new FailPicker(status));
  }
}

/** A76: the endpoint's hash key attribute when set and non-empty, else its first address (A61). */
function ringKey(e: Endpoint): string {
  const key = e.attributes.get(HASH_KEY);
  return typeof key === 'string' && key !== '' ? key : addressKey(e.addresses[0]!);
}

/**
 * The endpoint weight attribute, as EDS gives it: an integer in [1, 2^32 - 1] (fractions are floored). A
 * missing or unusable weight counts as 1, as in C-core; the bound keeps the ring arithmetic finite.
 */
function endpointWeight(e: Endpoint): number {
  const w = e.attributes.get(ENDPOINT_WEIGHT);
  return typeof w === 'number' && w >= 1 ? Math.min(Math.floor(w), MAX_UINT32) : 1;
}

function sameRingInputs(
  oldChildren: readonly EndpointChild[],
  oldKeys: readonly string[],
  oldWeights: Float64Array,
  children: readonly EndpointChild[],
  keys: readonly string[],
  weights: Float64Array,
): boolean {
  if (oldChildren.length !== children.length) return false;
  for (let i = 0; i < children.length; i++) {
    if (oldChildren[i] !== children[i] || oldKeys[i] !== keys[i] || oldWeights[i] !== weights[i])
      return false;
  }
  return true;
}

/**
 * A function of its own: a closure in connectProactively's loop capturing the loop's endpoint index would make
 * V8 allocate a context for it on every iteration.
 */
function traceProactiveConnect(helper: Helper, child: EndpointChild): void {
  helper.trace(() => `ring_hash: proactively connecting ${child.key}`);
}

export const ringHashFactory: PolicyFactory<RingHashConfig> = {
  name: RING_HASH,
  parseConfig: (json, path) => parseRingHashConfig(json, path),
  create: (helper) => new RingHash(helper),
};
