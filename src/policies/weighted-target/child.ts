import {
  type ChannelArgs,
  CONNECTING,
  type ConnectivityState,
  type Endpoint,
  type Helper,
  OK_STATUS,
  type Picker,
  type PolicyLookup,
  type PolicyNode,
  queuePicker,
  type Status,
  type StatusOr,
} from '../../core/index.js';
import { ChildPolicySlot } from '../shared/child-policy.js';
import { RetentionTimer } from '../shared/retention-timer.js';
import type { WeightedTargetChildConfig } from './config.js';

/** A destroyed target's `retention`: never started again. */
const DESTROYED = new RetentionTimer(null as never, () => {});

export interface WeightedTargetChildOwner {
  /** The policy's own helper, which its targets' policies reach through their target. */
  readonly helper: Helper;
  /** `randomOf(helper)`. */
  readonly random: () => number;
  readonly registry: PolicyLookup;
  /** The child reported; `previous` is its state before. */
  onChildReport(child: WeightedTargetChild, previous: ConnectivityState): void;
  /** Whether the child's exitIdle() would wake anything changed to `wakeable`. */
  onChildWakeable(child: WeightedTargetChild, wakeable: boolean): void;
  onRetentionExpired(child: WeightedTargetChild): void;
}

/**
 * One target of weighted_target_experimental: its weight, its policy and its latest report. It is also its
 * policy's helper and slot (one object per target: a locality per endpoint makes tens of thousands of these).
 */
export class WeightedTargetChild extends ChildPolicySlot {
  /** A new child counts as connecting until it reports (A61). */
  state: ConnectivityState = CONNECTING;
  status: Status = OK_STATUS;
  picker: Picker = queuePicker;
  weight = 1;
  /** The owner's index of this target among its active ones (-1 while retained); during an update, its index in it. */
  slot = -1;
  /**
   * Made when the target is first removed: most targets never are, and there may be tens of thousands.
   * DESTROYED once the target is destroyed.
   */
  private retention: RetentionTimer | null = null;

  constructor(
    readonly name: string,
    private readonly owner: WeightedTargetChildOwner,
  ) {
    super();
  }

  // Read through the owner: three fields fewer on each of (possibly) tens of thousands of targets.
  protected get parent(): Helper {
    return this.owner.helper;
  }
  protected get parentRandom(): () => number {
    return this.owner.random;
  }
  protected get registry(): PolicyLookup {
    return this.owner.registry;
  }

  private get destroyed(): boolean {
    return this.retention === DESTROYED;
  }

  /** A removed target waiting out its retention interval: kept for reuse, never picked. */
  get deactivated(): boolean {
    return this.retention?.running ?? false;
  }

  /** `endpoints`: its share of the list, or the resolver error it gets instead. */
  update(
    config: WeightedTargetChildConfig,
    endpoints: StatusOr<readonly Endpoint[]> | readonly Endpoint[],
    attributes: ChannelArgs,
    resolutionNote: string | undefined,
  ): boolean {
    this.weight = config.weight;
    if (this.policyReplacedBy(config.childPolicy)) {
      // A new policy (or another policy under the same name) starts out connecting.
      this.state = CONNECTING;
      this.status = OK_STATUS;
      this.picker = queuePicker;
    }
    return this.updatePolicy(config.childPolicy, endpoints, attributes, resolutionNote);
  }

  deactivate(retentionMs: number): void {
    if (this.destroyed) return;
    this.retention ??= new RetentionTimer(this.clock, () => this.owner.onRetentionExpired(this));
    if (!this.retention.start(retentionMs)) return;
    this.parent.trace(() => `weighted_target: retaining removed target ${this.name} for ${retentionMs} ms`);
  }

  reactivate(): void {
    this.retention?.stop();
  }

  /** The live view of the target's policy, as this target last heard from it. */
  describe(): PolicyNode {
    return this.describePolicy(this.state, this.status);
  }

  exitIdle(): void {
    this.exitPolicyIdle();
  }

  resetBackoff(): void {
    this.resetPolicyBackoff();
  }

  destroy(): void {
    this.reactivate();
    this.retention = DESTROYED;
    this.destroyPolicy();
  }

  protected override onPolicyWakeable(wakeable: boolean): void {
    this.owner.onChildWakeable(this, wakeable);
  }

  protected onPolicyState(state: ConnectivityState, status: Status, picker: Picker): void {
    if (this.destroyed) return;
    const previous = this.state;
    this.state = state;
    this.status = status;
    this.picker = picker;
    this.owner.onChildReport(this, previous);
  }
}
