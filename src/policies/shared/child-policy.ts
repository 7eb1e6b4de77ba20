import {
  type ChannelArgs,
  type ConnectivityState,
  describeChild,
  type Endpoint,
  ForwardingHelper,
  type Helper,
  HelperForwarder,
  type LoadBalancer,
  ok,
  type ParsedLbConfig,
  type Picker,
  type PolicyFactory,
  type PolicyLookup,
  type PolicyNode,
  randomOf,
  type Status,
  type StatusOr,
} from '../../core/index.js';

const createdMessages = new WeakMap<PolicyFactory, () => string>();

/** The method of a {@link ListUpdatable} policy: a symbol, so no third-party policy's own method is taken for it. */
export const UPDATE_LIST: unique symbol = Symbol('lbtree.updateList');

/**
 * A policy that also takes an endpoint list without the update object around it (the petioles, pick_first):
 * a parent with tens of thousands of children (weighted_target with a target per endpoint) then makes
 * neither an update object nor a `StatusOr` per child. Same meaning as `update` with an ok list.
 */
export interface ListUpdatable<Config = unknown> {
  [UPDATE_LIST](
    endpoints: readonly Endpoint[],
    config: Config,
    attributes: ChannelArgs,
    resolutionNote?: string,
  ): boolean;
}

function isEndpointList(
  endpoints: StatusOr<readonly Endpoint[]> | readonly Endpoint[],
): endpoints is readonly Endpoint[] {
  return Array.isArray(endpoints);
}

function takesLists(policy: LoadBalancer): policy is LoadBalancer & ListUpdatable {
  return typeof (policy as Partial<ListUpdatable>)[UPDATE_LIST] === 'function';
}

/** The trace message of a new instance, one per policy (not a closure per child created). */
function createdMessage(factory: PolicyFactory): () => string {
  // The last one first: a parent creates thousands of children of one policy in a row.
  if (factory === lastFactory) return lastMessage;
  let message = createdMessages.get(factory);
  if (message === undefined) {
    const text = `child policy ${factory.name} created`;
    message = () => text;
    createdMessages.set(factory, message);
  }
  lastFactory = factory;
  lastMessage = message;
  return message;
}
let lastFactory: PolicyFactory | null = null;
let lastMessage: () => string = () => '';

/** The helper of a policy instance that replaced another under the same child: passes up only while live. */
class InstanceHelper extends ForwardingHelper {
  constructor(private readonly owner: ChildPolicySlot) {
    super(owner, randomOf(owner));
  }
  updateState(state: ConnectivityState, status: Status, picker: Picker): void {
    this.owner.reportFrom(this, state, status, picker);
  }
  override requestReresolution(): void {
    this.owner.reresolutionFrom(this);
  }
  updateWakeable(wakeable: boolean): void {
    this.owner.wakeableFrom(this, wakeable);
  }
}

/** What a destroyed slot's `live` holds: no instance's helper ever equals it, and it marks `this` as used. */
const RETIRED = Object.freeze({}) as Helper;

/**
 * The policy instance behind one named child of a multi-child policy (priority, weighted_target, …), and the
 * helper of that instance. Names let a config update reach the existing instance; a config naming a different
 * policy replaces it, make before break (the new instance is updated before the old one is destroyed, so
 * pooled connections carry over). Reports and re-resolution requests from a replaced or destroyed instance
 * are dropped.
 *
 * The first instance's helper is the slot itself, so a parent whose per-child record extends this class
 * (weighted_target's targets, by the ten thousand with a locality per endpoint) makes one object per child,
 * not three; only an instance replacing another gets a helper object of its own, so each instance's reports
 * stay tellable apart. The parent's helper, randomness and policy registry are read through abstract members,
 * so such a record can reach them through its owner instead of keeping three fields each.
 */
export abstract class ChildPolicySlot extends HelperForwarder {
  private policy: LoadBalancer | null = null;
  private factory: PolicyFactory | null = null;
  /**
   * The live instance's helper (`this` or an InstanceHelper); null before the first instance, RETIRED after
   * destroy. Only the first instance may ever have `this` as its helper (a destroyed one stays muted): `this`
   * is used once `live` is not null.
   */
  private live: Helper | null = null;
  /**
   * Whether the live instance's exitIdle() would wake anything: taken as yes from its creation until it says
   * otherwise (Helper.updateWakeable); no while there is no instance.
   */
  private wakeable = false;

  /** Where new instances are made from. */
  protected abstract readonly registry: PolicyLookup;

  /** The live instance's report. */
  protected abstract onPolicyState(state: ConnectivityState, status: Status, picker: Picker): void;

  /** The live instance asks for re-resolution. */
  protected onPolicyReresolution(): void {
    this.parent.requestReresolution();
  }

  /**
   * Whether the live instance's exitIdle() would wake anything changed: by default the parent's helper hears
   * it (a parent with several children listens on each child's helper and combines them).
   */
  protected onPolicyWakeable(wakeable: boolean): void {
    this.parent.updateWakeable?.(wakeable);
  }

  /** Whether exitIdle() would reach anything below this slot (see {@link onPolicyWakeable}). */
  get policyWakeable(): boolean {
    return this.wakeable;
  }

  /** Whether `parsed` would start a new instance (none yet, or a different policy). */
  protected policyReplacedBy(parsed: ParsedLbConfig): boolean {
    return parsed.factory !== this.factory;
  }

  /**
   * `endpoints`: the list (or the resolver error) as an update carries it, or a list as it is (no `StatusOr`
   * made for each of a parent's thousands of children). A policy that takes lists directly gets it without
   * an update object.
   */
  protected updatePolicy(
    parsed: ParsedLbConfig,
    endpoints: StatusOr<readonly Endpoint[]> | readonly Endpoint[],
    attributes: ChannelArgs,
    resolutionNote: string | undefined,
  ): boolean {
    const previous = this.instanceFor(parsed);
    const policy = this.policy!;
    const list = isEndpointList(endpoints) ? endpoints : endpoints.ok ? endpoints.value : null;
    const accepted =
      list !== null && takesLists(policy)
        ? policy[UPDATE_LIST](list, parsed.config, attributes, resolutionNote)
        : policy.update({
            endpoints: isEndpointList(endpoints) ? ok(endpoints) : endpoints,
            config: parsed.config,
            attributes,
            resolutionNote,
          });
    previous?.destroy();
    return accepted;
  }

  /**
   * Makes the live instance `parsed` asks for, if it is not the current one (make before break: the instance it
   * replaces is returned, to be destroyed once the new one has its update).
   */
  private instanceFor(parsed: ParsedLbConfig): LoadBalancer | null {
    if (parsed.factory === this.factory) return null;
    const previous = this.policy;
    const helper: Helper = this.live !== null ? new InstanceHelper(this) : this;
    this.live = helper;
    this.factory = parsed.factory;
    // Until the new instance says otherwise, exitIdle may have something to wake there.
    this.setWakeable(true);
    this.policy = parsed.factory.create(helper, this.registry);
    this.parent.trace(createdMessage(parsed.factory));
    return previous;
  }

  /**
   * The live instance's own description, or (for a policy that gives none) its name with the state and status
   * the parent last recorded for it.
   */
  protected describePolicy(state: ConnectivityState, status: Status): PolicyNode {
    return describeChild(this.policy, this.factory?.name ?? 'none', state, status);
  }

  protected exitPolicyIdle(): void {
    if (this.wakeable) this.policy?.exitIdle();
  }

  protected resetPolicyBackoff(): void {
    this.policy?.resetBackoff();
  }

  protected destroyPolicy(): void {
    this.live = RETIRED;
    this.factory = null;
    const policy = this.policy;
    this.policy = null;
    policy?.destroy();
    this.setWakeable(false);
  }

  private setWakeable(wakeable: boolean): void {
    if (wakeable === this.wakeable) return;
    this.wakeable = wakeable;
    this.onPolicyWakeable(wakeable);
  }

  /** @internal The first instance's report. */
  updateState(state: ConnectivityState, status: Status, picker: Picker): void {
    this.reportFrom(this, state, status, picker);
  }

  /** @internal The first instance's request. */
  override requestReresolution(): void {
    this.reresolutionFrom(this);
  }

  /** @internal The first instance says whether its exitIdle() would wake anything. */
  updateWakeable(wakeable: boolean): void {
    this.wakeableFrom(this, wakeable);
  }

  /** @internal An instance's word on exitIdle, through its helper. */
  wakeableFrom(helper: Helper, wakeable: boolean): void {
    if (this.live === helper) this.setWakeable(wakeable);
  }

  /** @internal An instance's report, through its helper. */
  reportFrom(helper: Helper, state: ConnectivityState, status: Status, picker: Picker): void {
    if (this.live === helper) this.onPolicyState(state, status, picker);
  }

  /** @internal An instance's re-resolution request, through its helper. */
  reresolutionFrom(helper: Helper): void {
    if (this.live === helper) this.onPolicyReresolution();
  }
}

/**
 * A {@link ChildPolicySlot} on its own, for parents with one child or a record of their own per child
 * (priority, xds_wrr_locality, outlier_detection): the live instance's reports go to `helper`.
 */
export class ChildPolicy extends ChildPolicySlot {
  protected readonly parentRandom: () => number;

  constructor(
    protected readonly parent: Helper,
    protected readonly registry: PolicyLookup,
  ) {
    super();
    this.parentRandom = randomOf(parent);
  }

  protected onPolicyState(state: ConnectivityState, status: Status, picker: Picker): void {
    this.parent.updateState(state, status, picker);
  }

  /** Whether `parsed` would start a new instance (none yet, or a different policy). */
  replacedBy(parsed: ParsedLbConfig): boolean {
    return this.policyReplacedBy(parsed);
  }

  /** See {@link ChildPolicySlot.describePolicy}. */
  describe(state: ConnectivityState, status: Status): PolicyNode {
    return this.describePolicy(state, status);
  }

  update(
    parsed: ParsedLbConfig,
    endpoints: StatusOr<readonly Endpoint[]>,
    attributes: ChannelArgs,
    resolutionNote: string | undefined,
  ): boolean {
    return this.updatePolicy(parsed, endpoints, attributes, resolutionNote);
  }

  exitIdle(): void {
    this.exitPolicyIdle();
  }

  resetBackoff(): void {
    this.resetPolicyBackoff();
  }

  destroy(): void {
    this.destroyPolicy();
  }
}
