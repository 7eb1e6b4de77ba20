import {
  type CancelTimer,
  type ChannelArgs,
  CONNECTING,
  type ConnectivityState,
  childHelper,
  type Endpoint,
  type Helper,
  IDLE,
  OK_STATUS,
  type Picker,
  type PolicyLookup,
  type PolicyNode,
  queuePicker,
  READY,
  type Status,
  type StatusOr,
  TRANSIENT_FAILURE,
} from '../../core/index.js';
import { ChildPolicy } from '../shared/child-policy.js';
import { RetentionTimer } from '../shared/retention-timer.js';
import { SingleChildPolicy } from '../shared/single-child-policy.js';
import type { PriorityChildConfig } from './config.js';

/** What a child needs from the priority policy that owns it. */
export interface PriorityChildOwner {
  /** The child reported (its state, status and picker are already recorded); `previous` is its state before. */
  onChildReport(child: PriorityChild, previous: ConnectivityState): void;
  /** Whether the child's exitIdle() would wake anything changed ({@link PriorityChild.wakeable}). */
  onChildWakeable(child: PriorityChild): void;
  onFailoverTimer(child: PriorityChild): void;
  onRetentionExpired(child: PriorityChild): void;
}

/**
 * One child of priority_experimental with what A56 "Child Connectivity State Tracking" keeps for it: its
 * latest state, status and picker, its failover timer, and its deactivation (retention) timer.
 */
export class PriorityChild extends SingleChildPolicy {
  /** Until the child says otherwise it is taken to be connecting (A61: a new policy starts CONNECTING). */
  state: ConnectivityState = CONNECTING;
  status: Status = OK_STATUS;
  picker: Picker = queuePicker;
  private ignoreReresolutionRequests = false;
  private seenReadyOrIdleSinceTransientFailure = false;
  private failoverTimer: CancelTimer | null = null;
  private readonly retention: RetentionTimer;
  /** Whether the child has had its first update (its policy instance exists). */
  private updated = false;
  protected readonly child: ChildPolicy;
  private readonly helper: Helper;

  constructor(
    readonly name: string,
    parent: Helper,
    registry: PolicyLookup,
    private readonly owner: PriorityChildOwner,
    private failoverMs: number,
  ) {
    super();
    this.helper = parent;
    const helper = childHelper(parent, {
      updateState: (state, status, picker) => this.onReport(state, status, picker),
      requestReresolution: () => {
        if (!this.ignoreReresolutionRequests && !this.destroyed) parent.requestReresolution();
      },
      updateWakeable: () => owner.onChildWakeable(this),
    });
    this.child = new ChildPolicy(helper, registry);
    this.retention = new RetentionTimer(parent.clock, () => owner.onRetentionExpired(this));
    // A56: the failover timer starts when the child is created.
    this.startFailoverTimer();
  }

  /** The live view of the child's policy, as this child last heard from it. */
  describe(): PolicyNode {
    return this.child.describe(this.state, this.status);
  }

  /** Whether the child's exitIdle() would wake anything (its policy said so, or has not said otherwise). */
  get wakeable(): boolean {
    return this.child.policyWakeable;
  }

  get failoverTimerPending(): boolean {
    return this.failoverTimer !== null;
  }

  get deactivated(): boolean {
    return this.retention.running;
  }

  update(
    config: PriorityChildConfig,
    endpoints: StatusOr<readonly Endpoint[]>,
    attributes: ChannelArgs,
    resolutionNote: string | undefined,
    failoverMs: number,
  ): boolean {
    this.ignoreReresolutionRequests = config.ignoreReresolutionRequests;
    this.failoverMs = failoverMs;
    if (this.updated && this.child.replacedBy(config.config)) {
      // A different policy under the same name starts from scratch, as a newly created child does.
      this.record(CONNECTING, OK_STATUS, queuePicker);
      this.seenReadyOrIdleSinceTransientFailure = false;
      this.startFailoverTimer();
    }
    this.updated = true;
    return this.child.update(config.config, endpoints, attributes, resolutionNote);
  }

  /** The retention timer of A56 "Child Lifetime Management"; a child already deactivated keeps its timer. */
  deactivate(retentionMs: number): void {
    if (this.destroyed || !this.retention.start(retentionMs)) return;
    this.helper.trace(() => `priority: deactivating child ${this.name} for ${retentionMs} ms`);
  }

  maybeReactivate(): void {
    if (this.retention.stop()) this.helper.trace(() => `priority: reactivating child ${this.name}`);
  }

  protected override beforeChildDestroyed(): void {
    this.cancelFailoverTimer();
    this.retention.stop();
  }

  private onReport(state: ConnectivityState, status: Status, picker: Picker): void {
    if (this.destroyed) return;
    const previous = this.state;
    this.record(state, status, picker);
    switch (state) {
      case CONNECTING:
        // Restarted only on a move INTO connecting (a repeated CONNECTING is not one) after the child last
        // worked (upstream A56 refinement of the seed's wording).
        if (previous !== CONNECTING && this.seenReadyOrIdleSinceTransientFailure) this.startFailoverTimer();
        break;
      case READY:
      case IDLE:
        this.seenReadyOrIdleSinceTransientFailure = true;
        this.cancelFailoverTimer();
        break;
      case TRANSIENT_FAILURE:
        this.seenReadyOrIdleSinceTransientFailure = false;
        this.cancelFailoverTimer();
        break;
      default:
        break;
    }
    this.owner.onChildReport(this, previous);
  }

  private record(state: ConnectivityState, status: Status, picker: Picker): void {
    this.state = state;
    this.status = status;
    this.picker = picker;
  }

  private startFailoverTimer(): void {
    this.cancelFailoverTimer();
    this.failoverTimer = this.helper.clock.setTimer(this.failoverMs, () => {
      this.failoverTimer = null;
      this.helper.trace(() => `priority: failover timer of child ${this.name} fired in ${this.state}`);
      // Upstream A56: the timer runs the choice again; the child's recorded state stays what it reported.
      this.owner.onFailoverTimer(this);
    });
  }

  private cancelFailoverTimer(): void {
    this.failoverTimer?.();
    this.failoverTimer = null;
  }
}
