import {
  type ChannelArgs,
  CONNECTING,
  type ConnectivityState,
  type Endpoint,
  FailPicker,
  type Helper,
  IDLE,
  type LbUpdate,
  type LoadBalancer,
  OK_STATUS,
  type Picker,
  type PolicyFact,
  type PolicyNode,
  queuePicker,
  READY,
  SPREAD_MIN_ENDPOINTS,
  type Status,
  TRANSIENT_FAILURE,
  type UpdateTurns,
  unavailable,
  workMeter,
} from '../../core/index.js';
import { UPDATE_LIST } from './child-policy.js';
import { type EndpointChild, EndpointList, type Placement } from './endpoint-list.js';
import { LastUpdate } from './last-update.js';
import { SnapshotArray } from './snapshot-array.js';

const NO_CHILDREN = Object.freeze([]) as unknown as EndpointChild[];
/** A spread update's cancellation before its first step is queued. */
const NOT_WAITING = () => {};
/**
 * The scratch array every petiole's `entryFor` writes a READY child's entry into (copied out at once; nothing
 * runs in between), so a report allocates no array and a petiole carries none.
 */
const ENTRY: unknown[] = [];

/**
 * The state machine shared by the petioles that keep every endpoint connected (A61 "Petiole policies":
 * round_robin, and least_request per A48 "Subchannel connectivity management" / "Aggregated Connectivity
 * State"): one pick_first child per endpoint, READY > CONNECTING (or IDLE) > TRANSIENT_FAILURE with sticky
 * TF, a failing picker that carries a child's real error, IDLE children asked to reconnect at once. A
 * subclass only says what it keeps of a READY child (`Entry`) and how to pick among them.
 *
 * The READY children's entries live in a {@link SnapshotArray}: a child turning READY, changing its picker or
 * leaving READY is O(1), and so is the picker built after it, so n children connecting one after another
 * cost O(n) in total (a connect storm), not a rebuild over every READY child each time.
 */
export abstract class EagerPetiole<Config, Entry = Picker>
  extends EndpointList
  implements LoadBalancer<Config>
{
  /**
   * The READY children's entries, each `entryWidth` slots, in the order of `readySet`. Made the first time
   * a picker needs a snapshot of them (null until then): a round_robin of one endpoint (a target or locality
   * per endpoint) passes its one READY child's picker up as it is and never makes one.
   */
  private ready: SnapshotArray<Entry> | null = null;
  /**
   * The READY children (in no particular order); each child's `slot` is its index here. While the set has held
   * at most one child since it was last empty, it is that child itself, no array (a round_robin of one
   * endpoint, a target or locality per endpoint, makes tens of thousands of petioles); the array is made for a
   * second one. Empty: an empty array.
   */
  private readySet: EndpointChild[] | EndpointChild = NO_CHILDREN;
  /** null until the first report; treated as CONNECTING, the state A61 says a new policy starts in. */
  private reported: ConnectivityState | null = null;
  /** The child whose failure the TRANSIENT_FAILURE picker shows (its real connection error). */
  private lastFailed: EndpointChild | null = null;
  /**
   * The last accepted list of two or more endpoints, so a re-delivery of it changes nothing (null otherwise: a
   * one-endpoint list is placed as cheaply as it is compared, and tens of thousands of petioles carry none).
   */
  private lastUpdate: LastUpdate<Config> | null = null;
  /**
   * An update being placed over several event-loop turns (issue 25 §5: a list of 500 or more, or any list
   * once the channel has placed a turn's budget), with its config and the cancellation of its next step; null
   * otherwise. Meanwhile the petiole reports nothing: its last picker serves.
   */
  private spread: { placement: Placement; config: Config; cancel: () => void } | null = null;
  /** What the parent last heard of exitIdle() (Helper.updateWakeable): whether an IDLE child waits for it. */
  private toldWakeable = true;

  // The petiole is its endpoint list (one object per petiole: a locality per endpoint makes many).
  constructor(helper: Helper) {
    super(helper);
  }

  /** The policy's name in the live view. */
  protected abstract get policyName(): string;

  /** What the live view shows of the policy itself (weighted_round_robin: its settings). */
  protected describeFacts(): Readonly<Record<string, PolicyFact>> | undefined {
    return undefined;
  }

  /** What the live view shows of one endpoint beside its state (weighted_round_robin: its weight). */
  protected describeEndpoint(_child: EndpointChild): Readonly<Record<string, PolicyFact>> | undefined {
    return undefined;
  }

  /** The live view: the aggregate state (A61) and every endpoint's pick_first. */
  describe(): PolicyNode {
    const state = this.reported ?? CONNECTING;
    const failed = this.lastFailed;
    const status =
      state !== TRANSIENT_FAILURE
        ? undefined
        : failed !== null && failed.state === TRANSIENT_FAILURE
          ? failed.status
          : undefined;
    const facts = this.describeFacts();
    return {
      policy: this.policyName,
      state,
      ...(status !== undefined && { status: { code: status.code, details: status.details } }),
      ...(facts !== undefined && { facts }),
      children: this.describeEndpoints((child) => this.describeEndpoint(child)),
    };
  }

  /** How many slots each READY child's entry takes (parallel fields a pick reads without a hop). */
  protected get entryWidth(): number {
    return 1;
  }

  /**
   * What the picker needs of a READY child: writes its `entryWidth` values into `into[0]`, `into[1]`, …
   * (a scratch array shared by every petiole, so a report allocates no array); called again whenever the child's
   * picker changes.
   */
  protected abstract entryFor(child: EndpointChild, into: Entry[]): void;

  /**
   * The READY picker over the live READY entries (at least one): over `entries.snapshot()`, or a picker that is
   * itself the snapshot (`entries.snapshotWith`, round_robin: one object per report instead of two).
   */
  protected abstract readyPickerOf(entries: SnapshotArray<Entry>): Picker;

  /**
   * The READY picker when `child` is the only READY child, if the subclass's picker over one child picks
   * exactly as that child's own picker does (round_robin): then it is reported as it is, with no snapshot or
   * picker built (a target or locality per endpoint makes every petiole a one-child one). Null: build one.
   */
  protected onlyReadyPicker(_child: EndpointChild): Picker | null {
    return null;
  }

  /** Takes the config of an accepted update, just before the picker is rebuilt. */
  protected applyConfig(_config: Config): void {}

  /** A child that was not READY is now (a new connection): weighted_round_robin restarts its blackout. */
  protected childBecameReady(_child: EndpointChild): void {}

  /** Reports a fresh READY picker over the same READY set (weighted_round_robin's periodic weight update). */
  protected refreshPicker(): void {
    if (this.reported === READY && this.readyCount() > 0 && this.spread === null) {
      this.report(READY, OK_STATUS, this.readyPickerOf(this.readyEntries()));
    }
  }

  update(update: LbUpdate<Config>): boolean {
    if (update.endpoints.ok) {
      return this[UPDATE_LIST](
        update.endpoints.value,
        update.config,
        update.attributes,
        update.resolutionNote,
      );
    }
    // With endpoints already in hand a resolver error changes nothing.
    if (this.size === 0) {
      const note = update.resolutionNote ? ` (${update.resolutionNote})` : '';
      this.fail(unavailable(`name resolution failed: ${update.endpoints.status.details}${note}`));
    }
    return false;
  }

  /**
   * @internal {@link ListUpdatable}: {@link update} with an endpoint list, taken without the update object
   * around it: a parent calls it for each of its (tens of thousands of) children.
   */
  [UPDATE_LIST](
    endpoints: readonly Endpoint[],
    config: Config,
    attributes: ChannelArgs,
    resolutionNote?: string,
  ): boolean {
    if (endpoints.length === 0) {
      this.stopSpread();
      this.lastUpdate?.forget();
      this.destroyAll();
      this.clearReady();
      const note = resolutionNote ? ` (${resolutionNote})` : '';
      this.fail(unavailable(`empty endpoint list${note}`));
      this.tellWakeable();
      return false;
    }
    const turns = this.helper.updateTurns;
    const one = endpoints.length === 1;
    // One endpoint (a target or locality per endpoint makes tens of thousands of these): no array of one. A new
    // one counts against the turn's budget (10,000 of them are 10,000 endpoints to place), and waits like a
    // longer list once the turn has none left; one re-delivered as it is places nothing.
    if (
      one &&
      (turns === undefined || (this.spread === null && this.holdsOnly(endpoints[0]!)) || turns.placeNow(1))
    ) {
      this.stopSpread();
      this.lastUpdate?.forget();
      const child = this.updateOneEndpoint(endpoints[0]!, attributes);
      this.applyConfig(config);
      this.clearReady();
      workMeter.visits += 2;
      if (child.state === READY) this.addReady(child);
      else child.slot = -1;
      this.afterUpdate(child);
      this.aggregate();
      this.tellWakeable();
      return true;
    }
    if (one) {
      // One endpoint waiting for a later turn: it starts over (as cheaply as it would be compared), and keeps
      // no last update (tens of thousands of petioles carry none).
      this.lastUpdate?.forget();
    } else {
      // The same list again (a resolver re-delivering it): every child already has its endpoint, and the READY
      // set and the picker already follow the children's states. Nothing to place, rebuild or report. (The
      // same list as one being spread: that one goes on.)
      this.lastUpdate ??= new LastUpdate();
      const last = this.lastUpdate;
      workMeter.visits += endpoints.length;
      if (last.repeats(endpoints, config, attributes, resolutionNote)) return true;
      last.keep(true, endpoints, config, attributes, resolutionNote);
    }
    this.stopSpread();
    // A big list waits for later turns; a small one too once the channel has placed a turn's worth in this one
    // (a one-endpoint list that gets here has found the turn's budget spent).
    if (
      turns !== undefined &&
      (one || endpoints.length >= SPREAD_MIN_ENDPOINTS || !turns.placeNow(endpoints.length))
    ) {
      this.spread = {
        placement: this.startPlacing(endpoints, attributes),
        config,
        cancel: NOT_WAITING,
      };
      this.spreadStep(turns);
      return true;
    }
    // The distinct children in list order: an array walks faster than the list's Map.
    this.finishUpdate(this.updateEndpoints(endpoints, attributes), config);
    return true;
  }

  /**
   * Places as much of the spread update as this turn's budget allows; the rest waits for a later turn, and the
   * last step finishes the update as a one-turn update would have.
   */
  private spreadStep(turns: UpdateTurns): void {
    const spread = this.spread!;
    const placement = spread.placement;
    this.placeSome(placement, turns.take(placement.endpoints.length - placement.next));
    if (placement.next < placement.endpoints.length) {
      spread.cancel = turns.later(() => this.spreadStep(turns));
      return;
    }
    this.spread = null;
    this.finishUpdate(this.finishPlacing(placement), spread.config);
  }

  /** Abandons a spread update (a newer update supersedes it, or the policy goes). */
  private stopSpread(): void {
    const spread = this.spread;
    if (spread === null) return;
    this.spread = null;
    spread.cancel();
  }

  /** The end of an update that placed `children` (distinct, in list order): the READY set, wake-ups, the report. */
  private finishUpdate(children: EndpointChild[], config: Config): void {
    this.applyConfig(config);
    // The update is O(n) anyway: the READY set starts over, in list order.
    this.clearReady();
    workMeter.visits += 2 * children.length;
    for (let i = 0; i < children.length; i++) {
      const child = children[i]!;
      if (child.state === READY) this.addReady(child);
      else child.slot = -1;
    }
    // Apart, since exitIdle may make a child report (and join the READY set) at once.
    for (let i = 0; i < children.length; i++) this.afterUpdate(children[i]!);
    this.aggregate();
    this.tellWakeable();
  }

  /** After an update has placed every child: remembers a failed one's error, wakes an IDLE one. */
  private afterUpdate(child: EndpointChild): void {
    if (child.state === TRANSIENT_FAILURE) this.lastFailed = child;
    else if (child.state === IDLE) child.exitIdle();
  }

  /**
   * Only an IDLE child has anything to do on exitIdle (pick_first ignores it otherwise), and the counts say
   * whether there is one. grpc-js calls exitIdle down the whole tree on EVERY call, so walking 10,000
   * children here made each RPC O(n).
   */
  exitIdle(): void {
    if (this.IDLE === 0) return;
    workMeter.visits += this.size;
    for (const child of this.children) if (child.state === IDLE) child.exitIdle();
  }

  resetBackoff(): void {
    workMeter.visits += this.size;
    for (const child of this.children) child.resetBackoff();
  }

  destroy(): void {
    this.stopSpread();
    this.destroyAll();
    this.clearReady();
  }

  private clearReady(): void {
    this.ready = null;
    this.readySet = NO_CHILDREN;
  }

  private readyCount(): number {
    const set = this.readySet;
    return Array.isArray(set) ? set.length : 1;
  }

  /** The READY children's entries, made from the READY children the first time they are needed. */
  private readyEntries(): SnapshotArray<Entry> {
    if (this.ready === null) {
      const ready = new SnapshotArray<Entry>();
      workMeter.visits += this.readyCount();
      const set = this.readySet;
      if (!Array.isArray(set)) this.pushEntry(ready, set);
      else for (const child of set) this.pushEntry(ready, child);
      this.ready = ready;
    }
    return this.ready;
  }

  private pushEntry(ready: SnapshotArray<Entry>, child: EndpointChild): void {
    const entry = ENTRY as Entry[];
    this.entryFor(child, entry);
    for (let k = 0; k < this.entryWidth; k++) {
      ready.push(entry[k]!);
      entry[k] = undefined as Entry; // the scratch keeps no child's objects alive
    }
  }

  private addReady(child: EndpointChild): void {
    if (this.ready !== null) this.pushEntry(this.ready, child);
    const set = this.readySet;
    if (!Array.isArray(set)) {
      this.readySet = [set, child];
      child.slot = 1;
    } else if (set.length === 0) {
      this.readySet = child;
      child.slot = 0;
    } else {
      child.slot = set.push(child) - 1;
    }
  }

  private replaceReady(child: EndpointChild): void {
    if (this.ready === null) return; // made from the children's latest pickers when needed
    const first = child.slot * this.entryWidth;
    const entry = ENTRY as Entry[];
    this.entryFor(child, entry);
    for (let k = 0; k < this.entryWidth; k++) {
      this.ready.set(first + k, entry[k]!);
      entry[k] = undefined as Entry;
    }
  }

  private removeReady(child: EndpointChild): void {
    const slot = child.slot;
    child.slot = -1;
    const children = this.readySet;
    if (!Array.isArray(children)) {
      // The only READY child (slot 0) leaves.
      this.readySet = NO_CHILDREN;
      this.ready?.swapRemoveGroup(0, this.entryWidth);
      return;
    }
    const last = children.pop()!;
    this.ready?.swapRemoveGroup(slot * this.entryWidth, this.entryWidth);
    if (slot < children.length) {
      children[slot] = last;
      last.slot = slot;
    }
  }

  private fail(status: Status): void {
    this.lastFailed = null;
    this.helper.requestReresolution();
    this.report(TRANSIENT_FAILURE, status, new FailPicker(status));
  }

  /** A child reported (outside an update). */
  protected onChildState(child: EndpointChild, previous: ConnectivityState): void {
    if (previous === READY) {
      if (child.state === READY) this.replaceReady(child);
      else this.removeReady(child);
    } else if (child.state === READY) {
      this.childBecameReady(child);
      this.addReady(child);
    }
    if (child.state === TRANSIENT_FAILURE) {
      this.lastFailed = child;
      // pick_first re-resolves itself when it fails to connect or loses its connection; a READY child turned
      // unhealthy (health watch) is the one case it does not see, so the petiole asks here.
      if (previous === READY) this.helper.requestReresolution();
    } else if (child.state === IDLE) {
      // Petioles keep every endpoint connected.
      child.exitIdle();
    }
    this.tellWakeable();
    // Only changes that can alter what we report need a new picker; none while an update is spread (its old
    // picker serves until the update is complete, and the last step reports).
    if (this.spread !== null) return;
    if (child.state === READY || previous === READY || this.reported !== READY) this.aggregate();
  }

  /**
   * Tells the parent whether exitIdle() would wake anything (an IDLE child), when that changed: it seldom
   * does, since an IDLE child is asked to reconnect as soon as it reports IDLE.
   */
  private tellWakeable(): void {
    const wakeable = this.IDLE > 0;
    if (wakeable === this.toldWakeable) return;
    this.toldWakeable = wakeable;
    this.helper.updateWakeable?.(wakeable);
  }

  /** A61 petiole state: READY > CONNECTING (or IDLE) > TRANSIENT_FAILURE, with sticky TF. */
  private aggregate(): void {
    workMeter.visits++;
    if (this.READY > 0) {
      const set = this.readySet;
      const one = !Array.isArray(set) ? set : set.length === 1 ? set[0]! : null;
      const only = one !== null ? this.onlyReadyPicker(one) : null;
      this.report(READY, OK_STATUS, only ?? this.readyPickerOf(this.readyEntries()));
      return;
    }
    const stillTrying = this.CONNECTING + this.IDLE > 0;
    if (stillTrying && this.reported !== TRANSIENT_FAILURE) {
      if (this.reported !== CONNECTING) this.report(CONNECTING, OK_STATUS, queuePicker);
      return;
    }
    // All children failed, or we were in TF already (sticky until a child is READY): fail with a child's
    // real error.
    const failed = this.lastFailed;
    if (failed && failed.state === TRANSIENT_FAILURE) {
      this.report(TRANSIENT_FAILURE, failed.status, failed.picker);
    } else if (this.reported !== TRANSIENT_FAILURE) {
      const status = unavailable('no endpoint is reachable');
      this.report(TRANSIENT_FAILURE, status, new FailPicker(status));
    }
  }

  private report(state: ConnectivityState, status: Status, picker: Picker): void {
    this.reported = state;
    this.helper.updateState(state, status, picker);
  }
}
