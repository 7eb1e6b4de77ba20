import {
  type ChannelArgs,
  type ChildNode,
  CONNECTING,
  type ConnectivityState,
  type Endpoint,
  err,
  FailPicker,
  type Helper,
  HierarchicalSplit,
  IDLE,
  type LbUpdate,
  type LoadBalancer,
  NO_CHANNEL_ARGS,
  ok,
  type Picker,
  type PolicyFactory,
  type PolicyLookup,
  type PolicyNode,
  READY,
  type Status,
  type StatusOr,
  TRANSIENT_FAILURE,
  unavailable,
  workMeter,
} from '../../core/index.js';
import { LastUpdate } from '../shared/last-update.js';
import { WakeableTally } from '../shared/wakeable-tally.js';
import { PriorityChild, type PriorityChildOwner } from './child.js';
import {
  PRIORITY,
  type PriorityConfig,
  type PriorityTimers,
  parsePriorityConfig,
  priorityTimers,
} from './config.js';

const EMPTY_PRIORITIES = unavailable('priority policy has empty priority list');
const EMPTY_PRIORITIES_PICKER = new FailPicker(EMPTY_PRIORITIES);

/**
 * priority_experimental (gRFC A56): routes to the highest-priority child that is usable, creating children
 * lazily, failing over after a per-child timeout, and retaining children it moves away from.
 */
export class Priority implements LoadBalancer<PriorityConfig>, PriorityChildOwner {
  private readonly children = new Map<string, PriorityChild>();
  private config: PriorityConfig | null = null;
  private timers: PriorityTimers | null = null;
  /** Each child's endpoints from the latest good list; kept so lazily created children get their share. */
  private split: HierarchicalSplit | null = null;
  /** The resolver error of the latest update, for children created before any list arrived. */
  private resolutionError: Status | null = null;
  private attributes: ChannelArgs = NO_CHANNEL_ARGS;
  private resolutionNote: string | undefined;
  /** The child whose picker is reported (SetCurrentPriority); exitIdle goes to it. */
  private current: PriorityChild | null = null;
  /** Set while an update or a choice is running: child reports are only recorded then. */
  private busy = false;
  /** A child reported while busy: a running choice looks again when it is done. */
  private dirty = false;
  private destroyed = false;
  private reportedState: ConnectivityState | null = null;
  private reportedStatus: Status | null = null;
  private reportedPicker: Picker | null = null;
  /** The last accepted update, so a re-delivery of it changes nothing. */
  private readonly lastUpdate = new LastUpdate<PriorityConfig>();
  /** Whether exitIdle() would wake anything: only the current child gets it, so its word alone (0 or 1). */
  private readonly wakeable: WakeableTally;

  constructor(
    private readonly helper: Helper,
    private readonly registry: PolicyLookup,
  ) {
    this.wakeable = new WakeableTally(helper);
  }

  update(update: LbUpdate<PriorityConfig>): boolean {
    if (this.destroyed) return false;
    const config = update.config;
    // The same list, config and settings again: every child has its share already, and the choice of
    // priority follows the children's reports. Nothing to split, pass on or choose.
    if (!update.endpoints.ok) this.lastUpdate.forget();
    else if (
      this.lastUpdate.repeats(update.endpoints.value, config, update.attributes, update.resolutionNote)
    ) {
      workMeter.visits += update.endpoints.value.length;
      return true;
    }
    const timers = priorityTimers(update.attributes);
    this.config = config;
    this.timers = timers;
    this.attributes = update.attributes;
    this.resolutionNote = update.resolutionNote;
    let childEndpoints: StatusOr<readonly Endpoint[]> | null = null;
    if (update.endpoints.ok) {
      this.split = HierarchicalSplit.of(update.endpoints.value);
      this.resolutionError = null;
    } else {
      // Children that already have endpoints keep them (they ignore the error); new ones get the last list.
      this.resolutionError = update.endpoints.status;
      childEndpoints = update.endpoints;
    }
    // A56 "Configuration Updates": every existing child is updated (or deactivated) before one choice at the
    // end; what children report meanwhile is recorded, not acted on.
    this.busy = true;
    workMeter.visits += this.children.size;
    try {
      for (const [name, child] of this.children) {
        const childConfig = config.priorityOf.has(name) ? config.children.get(name) : undefined;
        if (childConfig === undefined) {
          this.removeChild(child, timers);
          continue;
        }
        child.update(
          childConfig,
          childEndpoints ?? this.endpointsFor(name),
          update.attributes,
          update.resolutionNote,
          timers.failoverMs,
        );
      }
    } finally {
      this.busy = false;
    }
    this.choosePriority();
    // Rejected only when there is no list (a resolver error) or nothing to route to; children deal with their
    // own shares, and most of them may not even exist yet.
    const accepted = update.endpoints.ok && config.priorities.length > 0;
    if (update.endpoints.ok) {
      this.lastUpdate.keep(
        accepted,
        update.endpoints.value,
        config,
        update.attributes,
        update.resolutionNote,
      );
    }
    return accepted;
  }

  exitIdle(): void {
    // A56: only the current child gets it (the others are lazily created, or failed over, or retained).
    this.current?.exitIdle();
  }

  resetBackoff(): void {
    workMeter.visits += this.children.size;
    for (const child of this.children.values()) child.resetBackoff();
  }

  destroy(): void {
    this.destroyed = true;
    for (const child of this.children.values()) child.destroy();
    this.children.clear();
    this.current = null;
  }

  /** @internal PriorityChildOwner */
  onChildReport(child: PriorityChild, previous: ConnectivityState): void {
    if (child.state === previous && !this.busy && !this.destroyed) {
      // The choice reads only states and failover timers, and a report in the same state changes neither (the
      // timer restarts only on a move into CONNECTING): the current child's new picker goes up as it is, and
      // any other child's report changes nothing. This keeps a READY child's stream of pickers (a connect
      // storm below us) O(1) per report.
      if (child === this.current) this.report(child.state, child.status, child.picker);
      return;
    }
    this.traceReport(child);
    this.choosePriority();
  }

  /**
   * Kept out of onChildReport: a closure there capturing `child` makes V8 allocate a context for it on every
   * call, the same-state fast path's too (96 bytes per report in a connect storm).
   */
  private traceReport(child: PriorityChild): void {
    this.helper.trace(() => `priority: child ${child.name} reported ${child.state}`);
  }

  /** @internal PriorityChildOwner */
  onChildWakeable(child: PriorityChild): void {
    if (child === this.current) this.tellWakeable();
  }

  /** Tells the parent whether exitIdle() would wake anything: whether the current child's would. */
  private tellWakeable(): void {
    const current = this.current;
    this.wakeable.reset(current?.wakeable ? 1 : 0);
    this.wakeable.tell();
  }

  /** @internal PriorityChildOwner */
  onFailoverTimer(_child: PriorityChild): void {
    this.choosePriority();
  }

  /** @internal PriorityChildOwner */
  onRetentionExpired(child: PriorityChild): void {
    if (this.children.get(child.name) !== child) return;
    this.helper.trace(() => `priority: child ${child.name} destroyed after retention`);
    this.children.delete(child.name);
    child.destroy();
  }

  /**
   * A child no longer in the config: deactivated (A56), or destroyed at once when retention of removed
   * children is off (A115).
   */
  private removeChild(child: PriorityChild, timers: PriorityTimers): void {
    if (timers.retainRemovedChildren) {
      child.deactivate(timers.retentionMs);
      return;
    }
    this.helper.trace(() => `priority: child ${child.name} removed and destroyed (A115)`);
    this.children.delete(child.name);
    if (this.current === child) this.current = null;
    child.destroy();
  }

  private endpointsFor(name: string): StatusOr<readonly Endpoint[]> {
    if (this.split !== null) return ok(this.split.forChild(name));
    return err(this.resolutionError ?? unavailable('no endpoints received yet'));
  }

  /** Runs ChoosePriority; a choice asked for while one is running (or during an update) is folded in. */
  private choosePriority(): void {
    if (this.destroyed || this.config === null) return;
    if (this.busy) {
      this.dirty = true;
      return;
    }
    this.busy = true;
    try {
      // A child created by the choice may report from inside its first update; looking again then is
      // idempotent (A56 "Algorithm for Choosing a Priority") and ends once no child reports.
      do {
        this.dirty = false;
        this.runChoosePriority(this.config);
      } while (this.dirty);
    } finally {
      this.busy = false;
    }
    this.tellWakeable();
  }

  /** A56 ChoosePriority, as its pseudo-code. */
  private runChoosePriority(config: PriorityConfig): void {
    const priorities = config.priorities;
    if (priorities.length === 0) {
      this.current = null;
      this.report(TRANSIENT_FAILURE, EMPTY_PRIORITIES, EMPTY_PRIORITIES_PICKER);
      return;
    }
    for (let priority = 0; priority < priorities.length; priority++) {
      workMeter.visits++;
      const name = priorities[priority]!;
      let child = this.children.get(name);
      if (child === undefined) {
        child = this.createChild(name, config);
      } else {
        child.maybeReactivate();
      }
      if (child.state === READY || child.state === IDLE) {
        this.setCurrentPriority(config, priority, true);
        return;
      }
      if (child.failoverTimerPending) {
        this.setCurrentPriority(config, priority, false);
        return;
      }
    }
    // Nothing READY or IDLE, and no failover timer pending: the first CONNECTING child, else the last.
    workMeter.visits += priorities.length;
    for (let priority = 0; priority < priorities.length; priority++) {
      if (this.children.get(priorities[priority]!)!.state === CONNECTING) {
        this.setCurrentPriority(config, priority, false);
        return;
      }
    }
    this.setCurrentPriority(config, priorities.length - 1, false);
  }

  private createChild(name: string, config: PriorityConfig): PriorityChild {
    const timers = this.timers!;
    this.helper.trace(() => `priority: creating child ${name}`);
    const child = new PriorityChild(name, this.helper, this.registry, this, timers.failoverMs);
    this.children.set(name, child);
    child.update(
      config.children.get(name)!,
      this.endpointsFor(name),
      this.attributes,
      this.resolutionNote,
      timers.failoverMs,
    );
    return child;
  }

  /** A56 SetCurrentPriority. */
  private setCurrentPriority(config: PriorityConfig, priority: number, deactivateLower: boolean): void {
    const priorities = config.priorities;
    if (deactivateLower) {
      const retentionMs = this.timers!.retentionMs;
      workMeter.visits += priorities.length - priority;
      for (let p = priority + 1; p < priorities.length; p++) {
        this.children.get(priorities[p]!)?.deactivate(retentionMs);
      }
    }
    const child = this.children.get(priorities[priority]!)!;
    this.current = child;
    this.report(child.state, child.status, child.picker);
  }

  /** The live view (A56): the priority in use, and every child with its priority and timers. */
  describe(): PolicyNode {
    const config = this.config;
    const current = this.current;
    const children: ChildNode[] = [];
    for (const child of this.children.values()) {
      const index = config?.priorityOf.get(child.name) ?? -1;
      children.push({
        name: child.name,
        facts: {
          ...(index >= 0 && { priority: index }),
          inUse: child === current,
          failoverTimerPending: child.failoverTimerPending,
          deactivated: child.deactivated,
        },
        node: child.describe(),
      });
    }
    const state = this.reportedState ?? CONNECTING;
    const status = this.reportedStatus;
    return {
      policy: PRIORITY,
      state,
      ...(status !== null && status.code !== 0 && { status: { code: status.code, details: status.details } }),
      facts: {
        priorities: config?.priorities ?? [],
        ...(current !== null && { priorityInUse: current.name }),
      },
      children,
    };
  }

  /** Passes the chosen child's report up; an identical one (a choice that changed nothing) is not repeated. */
  private report(state: ConnectivityState, status: Status, picker: Picker): void {
    if (state === this.reportedState && status === this.reportedStatus && picker === this.reportedPicker)
      return;
    this.reportedState = state;
    this.reportedStatus = status;
    this.reportedPicker = picker;
    this.helper.updateState(state, status, picker);
  }
}

export const priorityFactory: PolicyFactory<PriorityConfig> = {
  name: PRIORITY,
  parseConfig: (json, path, registry) => parsePriorityConfig(json, path, registry),
  create: (helper, registry) => new Priority(helper, registry),
};

/** @deprecated The earlier name of {@link Priority} (policy classes are named without a suffix, like `RoundRobin`). */
export const PriorityLb = Priority;
/** @deprecated See {@link Priority}. */
export type PriorityLb = Priority;
