import {
  addressKey,
  booleanArg,
  type CancelTimer,
  type ChannelArgs,
  CONNECTING,
  type ConnectivityState,
  clamp,
  type Endpoint,
  FailPicker,
  formatStatus,
  type Helper,
  IDLE,
  IdlePicker,
  type LbUpdate,
  type LoadBalancer,
  NO_METRIC_LABELS,
  numberArg,
  OK_STATUS,
  type PacedConnection,
  type Picker,
  type PolicyFactory,
  type PolicyNode,
  queuePicker,
  READY,
  type Status,
  type Subchannel,
  type SubchannelHealthWatcher,
  type SubchannelNode,
  SubchannelPicker,
  type SubchannelStateWatcher,
  TRANSIENT_FAILURE,
  unavailable,
  unwatchSubchannelHealth,
  unwatchSubchannelState,
  watchSubchannelHealth,
  watchSubchannelState,
} from '../../core/index.js';
import {
  type EndpointsOrOne,
  type FlatAddress,
  happyEyeballsOrder,
  isEndpointArray,
  sameEndpointsOrOne,
  shuffleEndpoints,
  weightedShuffleEndpoints,
} from './address-order.js';
import {
  CONNECTION_ATTEMPT_DELAY_ARG,
  DEFAULT_CONNECTION_ATTEMPT_DELAY_MS,
  HEALTH_WATCH_ARG,
  MAX_CONNECTION_ATTEMPT_DELAY_MS,
  MIN_CONNECTION_ATTEMPT_DELAY_MS,
  PICK_FIRST,
  type PickFirstConfig,
  parsePickFirstConfig,
} from './config.js';
import {
  PICK_FIRST_CONNECTION_ATTEMPTS_FAILED,
  PICK_FIRST_CONNECTION_ATTEMPTS_SUCCEEDED,
  PICK_FIRST_DISCONNECTIONS,
} from './metrics.js';
import { weightedShufflingEnabled } from './weighted-shuffling-flag.js';

const NO_ATTEMPTS: readonly never[] = Object.freeze([]);

/** What pick_first reads of its channel settings. */
interface PickFirstSettings {
  /** The settings object these were read from. */
  readonly args: ChannelArgs | null;
  readonly healthWatch: boolean;
  readonly attemptDelayMs: number;
}

const NO_SETTINGS: PickFirstSettings = Object.freeze({
  args: null,
  healthWatch: false,
  attemptDelayMs: DEFAULT_CONNECTION_ATTEMPT_DELAY_MS,
});
const settingsCache = new WeakMap<ChannelArgs, PickFirstSettings>();

/**
 * Read once per settings object: a parent passes one object to all its children, so thousands of pick_first
 * children share one record instead of each reading and keeping the same values.
 */
function settingsFor(args: ChannelArgs): PickFirstSettings {
  let settings = settingsCache.get(args);
  if (settings === undefined) {
    settings = Object.freeze({
      args,
      healthWatch: booleanArg(args, HEALTH_WATCH_ARG, false),
      attemptDelayMs: clamp(
        numberArg(args, CONNECTION_ATTEMPT_DELAY_ARG, DEFAULT_CONNECTION_ATTEMPT_DELAY_MS),
        MIN_CONNECTION_ATTEMPT_DELAY_MS,
        MAX_CONNECTION_ATTEMPT_DELAY_MS,
      ),
    });
    settingsCache.set(args, settings);
  }
  return settings;
}

const FAILED_THIS_PASS = 1;
const RELEASED = 2;

/**
 * One address pick_first holds a subchannel for. A petiole holds one per endpoint (tens of thousands), so it
 * keeps only what later decisions read, and it is itself the watcher of its subchannel (the object form of the
 * watches: no listener function, no unwatch closure per attempt). Once its connection is chosen, pick_first
 * takes the subchannel over and watches it itself: a settled endpoint keeps no attempt.
 */
class Attempt implements SubchannelStateWatcher, PacedConnection {
  /** The raw state as last delivered to us. */
  state: ConnectivityState;
  /** FAILED_THIS_PASS | RELEASED. */
  private flags = 0;

  constructor(
    readonly subchannel: Subchannel,
    private readonly owner: PickFirstLeaf,
  ) {
    this.state = subchannel.state;
    watchSubchannelState(subchannel, this);
  }

  /** The address's {@link addressKey}: how a new list recognises it. */
  get key(): string {
    return this.subchannel.key;
  }

  /** Whether this address has failed since the current Happy Eyeballs pass started. */
  get failedThisPass(): boolean {
    return (this.flags & FAILED_THIS_PASS) !== 0;
  }
  set failedThisPass(failed: boolean) {
    this.flags = failed ? this.flags | FAILED_THIS_PASS : this.flags & ~FAILED_THIS_PASS;
  }

  get released(): boolean {
    return (this.flags & RELEASED) !== 0;
  }

  /**
   * @internal The connection request, now or a few turns after pick_first asked (the channel's pacer): made only
   * while the address is still held and IDLE. A request on a subchannel in backoff would have grpc-js connect by
   * itself when the backoff ends, outside the pacer; pick_first asks again when it goes IDLE.
   */
  connectPaced(): boolean {
    if (this.released || this.state !== IDLE) return false;
    this.subchannel.requestConnection();
    return true;
  }

  /** @internal The subchannel's connectivity. */
  onSubchannelState(state: ConnectivityState, status: Status): void {
    this.owner.onAttemptState(this, state, status);
  }

  release(): void {
    if (this.released) return;
    this.stopWatching();
    this.subchannel.release();
  }

  /** Stops watching and gives the subchannel, still held, to the caller (this attempt is then done). */
  handOver(): Subchannel {
    this.stopWatching();
    return this.subchannel;
  }

  private stopWatching(): void {
    this.flags |= RELEASED;
    unwatchSubchannelState(this.subchannel, this);
  }
}

/**
 * The attempts of a pass: the one Attempt itself for a single-address list (every petiole child's: no array
 * per endpoint), else an array.
 */
type Attempts = Attempt | readonly Attempt[];

function attemptCount(attempts: Attempts): number {
  return attempts instanceof Attempt ? 1 : attempts.length;
}

function attemptAt(attempts: Attempts, i: number): Attempt | undefined {
  return attempts instanceof Attempt ? (i === 0 ? attempts : undefined) : attempts[i];
}

/** The endpoint of `order` when it is one endpoint with one address (a petiole child's list), else null. */
function onlyAddressOf(order: EndpointsOrOne): Endpoint | null {
  const only = !isEndpointArray(order) ? order : order.length === 1 ? order[0]! : null;
  return only !== null && only.addresses.length === 1 ? only : null;
}

/**
 * What only a pass over several addresses, or a failure, needs (A61 Happy Eyeballs, A62 sticky TF): kept out
 * of pick_first itself because a petiole's endpoint child (one address, tens of thousands of them) that
 * connects at its first try never needs it.
 */
class PassProgress {
  /** Index in `attempts` of the address the Happy Eyeballs timer is waiting on. */
  passIndex = 0;
  passTimer: CancelTimer | null = null;
  /** Failures seen after the first pass; re-resolution is requested each time it reaches the list size. */
  failuresAfterPass = 0;
  lastError: Status | null = null;
}

// PickFirstLeaf's flags.
const FIRST_PASS = 1;
const IDLE_EXIT_SCHEDULED = 2;
const DESTROYED = 4;
const WATCHING_HEALTH = 8;
/** The running pass has walked its whole list: no address is being waited on (`passIndex` means nothing). */
const PASS_WALKED = 16;
/** The parent heard that exitIdle() has nothing to wake (pick_first leaves IDLE only through it or a pick). */
const NOT_WAKEABLE_TOLD = 32;

/**
 * pick_first (A62 sticky TRANSIENT_FAILURE and shuffling, A61 Happy Eyeballs and generic health reporting):
 * the universal leaf. It connects to one address of its list and sends every call there. This is all of it
 * but where its helper comes from: {@link PickFirst} keeps the parent's, and a petiole's endpoint child (one
 * per endpoint, tens of thousands) is its own helper, so every field here is paid once per endpoint.
 */
export abstract class PickFirstLeaf
  implements LoadBalancer<PickFirstConfig>, SubchannelStateWatcher, SubchannelHealthWatcher
{
  /**
   * The endpoints in the order passes walk them (the list, or its shuffle), null before the first list and
   * after a failed one. The flattened address list is derived from it per pass and not kept (A61 Flattening).
   */
  private order: EndpointsOrOne | null = null;
  /** The addresses of the running pass (or of sticky-TF retrying), in attempt order. */
  private attempts: Attempts = NO_ATTEMPTS;
  /** FIRST_PASS | IDLE_EXIT_SCHEDULED | DESTROYED | WATCHING_HEALTH | PASS_WALKED | NOT_WAKEABLE_TOLD. */
  private flags = 0;
  /** Made on first need (see {@link PassProgress}); read through the accessors below. */
  private progress: PassProgress | null = null;
  /** The chosen connection: pick_first watches it itself (its attempt is gone). */
  private selected: Subchannel | null = null;
  private reported: ConnectivityState = CONNECTING;
  private settings: PickFirstSettings = NO_SETTINGS;
  /**
   * The endpoints of the list in use, to recognise a re-delivered identical list cheaply. A petiole's
   * endpoint child (a subclass) keeps its one endpoint here, before its first pass too.
   */
  protected endpoints: EndpointsOrOne = NO_ATTEMPTS as never;
  /** The parent's helper (a field in {@link PickFirst}; the object itself in a petiole's endpoint child). */
  protected abstract readonly helper: Helper;

  private get firstPass(): boolean {
    return (this.flags & FIRST_PASS) !== 0;
  }
  private set firstPass(on: boolean) {
    this.flags = on ? this.flags | FIRST_PASS : this.flags & ~FIRST_PASS;
  }
  private get destroyed(): boolean {
    return (this.flags & DESTROYED) !== 0;
  }

  // A default value is never written to an absent record, so a petiole child connecting at its first try makes
  // none.
  private get passIndex(): number {
    return this.progress?.passIndex ?? 0;
  }
  private set passIndex(index: number) {
    if (index !== 0 || this.progress !== null) this.progressRecord().passIndex = index;
  }
  private get passTimer(): CancelTimer | null {
    return this.progress?.passTimer ?? null;
  }
  private set passTimer(timer: CancelTimer | null) {
    if (timer !== null || this.progress !== null) this.progressRecord().passTimer = timer;
  }
  private get failuresAfterPass(): number {
    return this.progress?.failuresAfterPass ?? 0;
  }
  private set failuresAfterPass(count: number) {
    if (count !== 0 || this.progress !== null) this.progressRecord().failuresAfterPass = count;
  }
  private get lastError(): Status | null {
    return this.progress?.lastError ?? null;
  }
  private set lastError(status: Status | null) {
    if (status !== null || this.progress !== null) this.progressRecord().lastError = status;
  }
  private progressRecord(): PassProgress {
    this.progress ??= new PassProgress();
    return this.progress;
  }

  /** Whether a list has started a pass (or failed) here; false before the first list. */
  protected get started(): boolean {
    return this.order !== null;
  }

  update(update: LbUpdate<PickFirstConfig>): boolean {
    if (update.endpoints.ok) {
      return this.updateList(update.endpoints.value, update.config, update.attributes, update.resolutionNote);
    }
    if (this.destroyed) return false;
    if (update.attributes !== this.settings.args) this.settings = settingsFor(update.attributes);
    // A resolver error with a previous list is ignored: the previous list keeps serving.
    if (this.order === null) {
      const note = update.resolutionNote ? ` (${update.resolutionNote})` : '';
      this.failWithoutAddresses(
        unavailable(`name resolution failed: ${update.endpoints.status.details}${note}`),
      );
    }
    return false;
  }

  /**
   * @internal {@link update} with an endpoint list, taken without the update object around it: a petiole
   * calls it for each of its (tens of thousands of) endpoints.
   */
  updateList(
    endpoints: EndpointsOrOne,
    config: PickFirstConfig,
    attributes: ChannelArgs,
    resolutionNote?: string,
  ): boolean {
    if (this.destroyed) return false;
    if (attributes !== this.settings.args) this.settings = settingsFor(attributes);
    const shuffle = config.shuffleAddressList;
    if (!shuffle && this.order !== null && sameEndpointsOrOne(endpoints, this.endpoints)) {
      // The same addresses in the same order are not a new list: whatever runs (a pass, sticky-TF retries,
      // a connection) carries on. Restarting would only re-walk the list, and in sticky TF would re-request
      // re-resolution at once, a loop with a resolver that answers with the same list. New endpoint
      // attributes still reach the subchannels created from now on (passes read them from `order`).
      this.endpoints = endpoints;
      this.order = endpoints;
      return true;
    }
    this.endpoints = endpoints;
    const order = shuffle && isEndpointArray(endpoints) ? this.shuffled(endpoints) : endpoints;
    const only = onlyAddressOf(order);
    const addresses = only === null ? happyEyeballsOrder(order) : null;
    if (addresses !== null && addresses.length === 0) {
      const note = resolutionNote ? ` (${resolutionNote})` : '';
      this.failWithoutAddresses(unavailable(`empty address list${note}`));
      return false;
    }
    this.order = order;
    const selected = this.selected;
    if (
      selected &&
      (addresses === null
        ? addressKey(only!.addresses[0]!) === selected.key
        : addresses.some((a) => a.key === selected.key))
    ) {
      // Still connected to an address of the new list: keep serving on it; a pass for an older list ends.
      this.releaseAttempts();
      return true;
    }
    // While IDLE, the next exitIdle() (or a pick) starts the pass over the latest list.
    if (this.reported === IDLE && !selected) return true;
    this.startPass(only === null ? this.listAttempts(addresses!) : this.onlyAttempt(only));
    return true;
  }

  exitIdle(): void {
    if (this.destroyed || this.reported !== IDLE || this.selected || !this.order) return;
    const only = onlyAddressOf(this.order);
    this.startPass(
      only === null ? this.listAttempts(happyEyeballsOrder(this.order)) : this.onlyAttempt(only),
    );
  }

  resetBackoff(): void {
    const attempts = this.attempts;
    for (let i = 0, n = attemptCount(attempts); i < n; i++) attemptAt(attempts, i)!.subchannel.resetBackoff();
    this.selected?.resetBackoff();
  }

  destroy(): void {
    this.flags |= DESTROYED;
    this.releaseAttempts();
    this.releaseSelected();
  }

  /** The live view: the chosen connection, else the addresses being tried, with their states. */
  describe(): PolicyNode {
    const subchannels: SubchannelNode[] = [];
    if (this.selected !== null) subchannels.push(subchannelNode(this.selected, this.selected.health));
    const attempts = this.attempts;
    for (let i = 0, n = attemptCount(attempts); i < n; i++) {
      const a = attemptAt(attempts, i)!;
      subchannels.push(subchannelNode(a.subchannel, a.state));
    }
    const error = this.reported === TRANSIENT_FAILURE ? this.lastError : null;
    return {
      policy: PICK_FIRST,
      state: this.reported,
      ...(error !== null && { status: { code: error.code, details: error.details } }),
      subchannels,
    };
  }

  /** A62's shuffle, weighted by the endpoints' weights (A113) unless GRPC_EXPERIMENTAL_PF_WEIGHTED_SHUFFLING=false. */
  private shuffled(endpoints: readonly Endpoint[]): Endpoint[] {
    const random = () => this.helper.random();
    return weightedShufflingEnabled()
      ? weightedShuffleEndpoints(endpoints, random)
      : shuffleEndpoints(endpoints, random);
  }

  /** Empty list, or a resolver error before any list: drop everything and fail (A62, sticky). */
  private failWithoutAddresses(status: Status): void {
    this.order = null;
    this.releaseAttempts();
    this.releaseSelected();
    this.helper.requestReresolution();
    this.report(TRANSIENT_FAILURE, status, new FailPicker(status));
  }

  /**
   * The attempts of a pass over `addresses` (A61): subchannels for addresses already held are kept (their
   * backoff state with them); the rest are created, and those no longer listed are released.
   */
  private listAttempts(addresses: readonly FlatAddress[]): Attempt[] {
    const held = this.attempts;
    const count = attemptCount(held);
    const previous = count > 0 ? new Map<string, Attempt>() : null;
    for (let i = 0; i < count; i++) previous!.set(attemptAt(held, i)!.key, attemptAt(held, i)!);
    const next: Attempt[] = new Array(addresses.length);
    for (let i = 0; i < addresses.length; i++) {
      const address = addresses[i]!;
      const kept = previous?.get(address.key);
      if (kept) {
        previous!.delete(address.key);
        kept.failedThisPass = false;
        next[i] = kept;
      } else {
        const subchannel = this.helper.createSubchannel(address.address, address.attributes);
        next[i] = new Attempt(subchannel, this);
      }
    }
    if (previous) for (const stale of previous.values()) stale.release();
    return next;
  }

  /**
   * {@link listAttempts} for a list of one endpoint with one address (every petiole child's), without
   * building the flattened list: one allocation fewer per endpoint on a large list's first update.
   */
  private onlyAttempt(endpoint: Endpoint): Attempt {
    const address = endpoint.addresses[0]!;
    const key = addressKey(address);
    const held = this.attempts;
    const count = attemptCount(held);
    let kept: Attempt | undefined;
    for (let i = 0; i < count; i++) if (attemptAt(held, i)!.key === key) kept = attemptAt(held, i);
    let attempt: Attempt;
    if (kept) {
      kept.failedThisPass = false;
      attempt = kept;
    } else {
      attempt = new Attempt(this.helper.createSubchannel(address, endpoint.attributes), this);
    }
    for (let i = 0; i < count; i++) if (attemptAt(held, i) !== kept) attemptAt(held, i)!.release();
    return attempt;
  }

  /** Starts a Happy Eyeballs pass (A61) over `next`, made by {@link listAttempts} or {@link onlyAttempt}. */
  private startPass(next: Attempts): void {
    this.cancelPassTimer();
    this.attempts = next;
    this.firstPass = true;
    this.failuresAfterPass = 0;
    // Sticky TRANSIENT_FAILURE (A62): a new list does not leave TF; only READY does.
    if (!this.selected && this.reported !== TRANSIENT_FAILURE)
      this.report(CONNECTING, OK_STATUS, queuePicker);
    this.attemptFrom(0);
  }

  /** A61: walk the list from `index`, starting one connection attempt and the Connection Attempt Delay timer. */
  private attemptFrom(index: number): void {
    const attempts = this.attempts;
    for (let i = index, n = attemptCount(attempts); i < n; i++) {
      const a = attemptAt(attempts, i)!;
      switch (a.state) {
        case READY:
          this.select(a);
          return;
        case IDLE:
          this.requestConnection(a);
          this.waitOn(i);
          return;
        case CONNECTING:
          // Already connecting: treat it as requested.
          this.waitOn(i);
          return;
        case TRANSIENT_FAILURE:
          // In backoff after a recent failure: counts as attempted; move on at once.
          a.failedThisPass = true;
          break;
        default:
          break;
      }
    }
    // No address is waited on now: the pass waits for the outcomes of those in flight.
    this.flags |= PASS_WALKED;
    this.maybeFinishPass();
  }

  /** Asks for a connection on an IDLE address: at once, or through the channel's pacer (issue 25 §5). */
  private requestConnection(a: Attempt): void {
    const pacer = this.helper.connectionPacer;
    if (pacer === undefined) a.subchannel.requestConnection();
    else pacer.request(a);
  }

  private waitOn(index: number): void {
    this.flags &= ~PASS_WALKED;
    this.passIndex = index;
    if (index === attemptCount(this.attempts) - 1) return; // the last address: wait for the attempt itself
    this.passTimer = this.helper.clock.setTimer(this.settings.attemptDelayMs, () => {
      this.passTimer = null;
      this.attemptFrom(index + 1);
    });
  }

  private cancelPassTimer(): void {
    this.passTimer?.();
    this.passTimer = null;
  }

  /** @internal Called by an Attempt's connectivity watch. */
  onAttemptState(a: Attempt, state: ConnectivityState, status: Status): void {
    if (a.released || this.destroyed) return;
    a.state = state;
    switch (state) {
      case READY:
        this.helper.metricsRecorder?.addCounter(
          PICK_FIRST_CONNECTION_ATTEMPTS_SUCCEEDED,
          1,
          NO_METRIC_LABELS,
        );
        // The first READY wins, even one we did not ask for.
        this.select(a);
        return;
      case TRANSIENT_FAILURE:
        this.helper.metricsRecorder?.addCounter(PICK_FIRST_CONNECTION_ATTEMPTS_FAILED, 1, NO_METRIC_LABELS);
        this.lastError = status;
        a.failedThisPass = true;
        if (this.firstPass) {
          if ((this.flags & PASS_WALKED) === 0 && attemptAt(this.attempts, this.passIndex) === a) {
            // The address being waited on failed: move on without waiting for the timer.
            this.cancelPassTimer();
            this.attemptFrom(this.passIndex + 1);
          } else {
            this.maybeFinishPass();
          }
          return;
        }
        if (++this.failuresAfterPass >= attemptCount(this.attempts)) {
          this.failuresAfterPass = 0;
          this.helper.requestReresolution();
        }
        if (!this.selected) this.reportFailure();
        return;
      case IDLE:
        // Backoff is over. After the first pass we keep trying every address (A62 sticky TF); during the
        // pass the address waits for the pass to finish.
        if (!this.firstPass) this.requestConnection(a);
        return;
      default:
        return;
    }
  }

  private maybeFinishPass(): void {
    if (!this.firstPass) return;
    const attempts = this.attempts;
    const count = attemptCount(attempts);
    for (let i = 0; i < count; i++) if (!attemptAt(attempts, i)!.failedThisPass) return;
    this.firstPass = false;
    this.cancelPassTimer();
    this.failuresAfterPass = 0;
    this.helper.requestReresolution();
    for (let i = 0; i < count; i++) {
      const a = attemptAt(attempts, i)!;
      if (a.state === IDLE) this.requestConnection(a);
    }
    if (!this.selected) this.reportFailure();
  }

  private reportFailure(): void {
    const last = this.lastError ? formatStatus(this.lastError) : 'unknown';
    const status = unavailable(`failed to connect to all addresses; last error: ${last}`);
    this.report(TRANSIENT_FAILURE, status, new FailPicker(status));
  }

  /** Chooses a READY subchannel: every other subchannel is released, in-flight attempts included. */
  private select(a: Attempt): void {
    this.cancelPassTimer();
    this.releaseSelected();
    const attempts = this.attempts;
    // A single-address pass (every petiole child's) has nothing else to keep.
    if (attempts instanceof Attempt) this.attempts = attempts === a ? NO_ATTEMPTS : attempts;
    else this.attempts = attempts.filter((x) => x !== a);
    this.releaseAttempts();
    const chosen = a.handOver();
    this.selected = chosen;
    watchSubchannelState(chosen, this);
    if (this.settings.healthWatch) {
      this.flags |= WATCHING_HEALTH;
      watchSubchannelHealth(chosen, this);
      this.reportHealth(chosen, chosen.health, OK_STATUS);
    } else {
      this.report(READY, OK_STATUS, new SubchannelPicker(chosen));
    }
  }

  /** @internal The chosen connection's connectivity: leaving READY loses it. */
  onSubchannelState(state: ConnectivityState, _status: Status): void {
    if (state !== READY && this.selected !== null && !this.destroyed) {
      this.helper.metricsRecorder?.addCounter(PICK_FIRST_DISCONNECTIONS, 1, NO_METRIC_LABELS);
      this.onSelectedLost();
    }
  }

  /** @internal A61: the chosen connection's health, watched with the health watch on. */
  onSubchannelHealth(state: ConnectivityState, status: Status): void {
    if (this.selected !== null && !this.destroyed) this.reportHealth(this.selected, state, status);
  }

  /** A61: with the health watch on, the chosen connection's health is what the parent sees. */
  private reportHealth(chosen: Subchannel, health: ConnectivityState, status: Status): void {
    if (health === READY) {
      this.report(READY, OK_STATUS, new SubchannelPicker(chosen));
    } else if (health === TRANSIENT_FAILURE) {
      const failure = status.code === 0 ? unavailable(`backend ${chosen.key} is unhealthy`) : status;
      this.report(TRANSIENT_FAILURE, failure, new FailPicker(failure));
    } else {
      this.report(health, OK_STATUS, queuePicker);
    }
  }

  /** The chosen connection left READY: drop it, re-resolve, and go IDLE (or keep a newer list's pass). */
  private onSelectedLost(): void {
    this.releaseSelected();
    this.helper.requestReresolution();
    if (attemptCount(this.attempts) > 0) {
      // A pass over a newer list was running while we served the old connection; it now decides.
      if (this.firstPass) this.report(CONNECTING, OK_STATUS, queuePicker);
      else this.reportFailure();
      return;
    }
    this.flags &= ~IDLE_EXIT_SCHEDULED;
    this.report(IDLE, OK_STATUS, new IdlePicker(() => this.scheduleExitIdle()));
  }

  private releaseSelected(): void {
    const selected = this.selected;
    if (selected === null) return;
    this.selected = null;
    unwatchSubchannelState(selected, this);
    if ((this.flags & WATCHING_HEALTH) !== 0) {
      this.flags &= ~WATCHING_HEALTH;
      unwatchSubchannelHealth(selected, this);
    }
    selected.release();
  }

  /** A pick on the IDLE picker asks to reconnect; hop off the data path before touching subchannels. */
  private scheduleExitIdle(): void {
    if ((this.flags & IDLE_EXIT_SCHEDULED) !== 0) return;
    this.flags |= IDLE_EXIT_SCHEDULED;
    this.helper.clock.setTimer(0, () => this.exitIdle());
  }

  private releaseAttempts(): void {
    this.cancelPassTimer();
    const attempts = this.attempts;
    for (let i = 0, n = attemptCount(attempts); i < n; i++) attemptAt(attempts, i)!.release();
    this.attempts = NO_ATTEMPTS;
    this.firstPass = false;
  }

  private report(state: ConnectivityState, status: Status, picker: Picker): void {
    this.reported = state;
    // exitIdle() wakes pick_first only while it is IDLE: the parent hears when that changes, before the report.
    const idle = state === IDLE;
    if (idle === ((this.flags & NOT_WAKEABLE_TOLD) !== 0)) {
      this.flags ^= NOT_WAKEABLE_TOLD;
      this.helper.updateWakeable?.(idle);
    }
    this.helper.updateState(state, status, picker);
  }
}

function subchannelNode(subchannel: Subchannel, state: ConnectivityState): SubchannelNode {
  const picks = subchannel.picks;
  return picks === undefined ? { address: subchannel.key, state } : { address: subchannel.key, state, picks };
}

/** pick_first as a policy under its parent's helper. */
export class PickFirst extends PickFirstLeaf {
  constructor(protected readonly helper: Helper) {
    super();
  }
}

export const pickFirstFactory: PolicyFactory<PickFirstConfig> = {
  name: PICK_FIRST,
  parseConfig: (json, path) => parsePickFirstConfig(json, path),
  create: (helper) => new PickFirst(helper),
};
