import {
  CONNECTING,
  type ConnectivityState,
  type Endpoint,
  FailPicker,
  type Helper,
  HierarchicalSplit,
  IDLE,
  IdlePicker,
  type LbUpdate,
  type LoadBalancer,
  OK_STATUS,
  ok,
  type Picker,
  type PolicyFactory,
  type PolicyLookup,
  queuePicker,
  READY,
  randomOf,
  type Status,
  type StatusOr,
  TRANSIENT_FAILURE,
  unavailable,
} from '../../core/index.js';
import { WeightedTargetChild, type WeightedTargetChildOwner } from './child.js';
import {
  parseWeightedTargetConfig,
  WEIGHTED_TARGET,
  WEIGHTED_TARGET_CHILD_RETENTION_MS,
  type WeightedTargetConfig,
} from './config.js';
import { WeightedPicker } from './picker.js';

const NO_TARGETS = unavailable('weighted_target has no targets');
const NO_TARGETS_PICKER = new FailPicker(NO_TARGETS);

/**
 * weighted_target_experimental (gRFC A28): one child per target, all created at once; picks go to READY
 * children at random in proportion to their weights. Targets removed from the config are kept for 15 minutes
 * and reused if they come back.
 */
export class WeightedTargetLb implements LoadBalancer<WeightedTargetConfig>, WeightedTargetChildOwner {
  /** Current targets and retained removed ones, by name. */
  private readonly children = new Map<string, WeightedTargetChild>();
  private split: HierarchicalSplit | null = null;
  /** Child reports during an update are recorded only; the update aggregates once at its end. */
  private updating = false;
  private destroyed = false;
  private reported: ConnectivityState | null = null;
  /** The child that failed last: its error is the status of our TRANSIENT_FAILURE. */
  private lastFailed: WeightedTargetChild | null = null;

  /** `helper.random` as one standalone function, for every picker this policy builds. */
  private readonly random: () => number;

  constructor(
    private readonly helper: Helper,
    private readonly registry: PolicyLookup,
  ) {
    this.random = randomOf(helper);
  }

  update(update: LbUpdate<WeightedTargetConfig>): boolean {
    if (this.destroyed) return false;
    const targets = update.config.targets;
    if (update.endpoints.ok) this.split = HierarchicalSplit.of(update.endpoints.value);
    const split = this.split;
    this.updating = true;
    try {
      for (const [name, target] of targets) {
        let child = this.children.get(name);
        const isNew = child === undefined;
        if (child === undefined) {
          child = new WeightedTargetChild(name, this.helper, this.registry, this);
          this.children.set(name, child);
        } else {
          child.reactivate();
        }
        // A resolver error reaches existing children (which keep the endpoints they have); a target new in
        // such an update gets its share of the last good list, if there was one.
        const endpoints: StatusOr<readonly Endpoint[]> =
          split !== null && (update.endpoints.ok || isNew) ? ok(split.forChild(name)) : update.endpoints;
        child.update(target, endpoints, update.attributes, update.resolutionNote);
      }
      for (const [name, child] of this.children) {
        if (!targets.has(name)) child.deactivate(WEIGHTED_TARGET_CHILD_RETENTION_MS);
      }
    } finally {
      this.updating = false;
    }
    // Weights may have changed even where no state did: always rebuild.
    this.aggregate();
    // Like priority: rejected only when there is no list or nothing to route to; each child deals with its own
    // share (an empty share makes that child fail, not its siblings).
    return update.endpoints.ok && targets.size > 0;
  }

  exitIdle(): void {
    for (const child of this.children.values()) if (!child.deactivated) child.exitIdle();
  }

  resetBackoff(): void {
    for (const child of this.children.values()) child.resetBackoff();
  }

  destroy(): void {
    this.destroyed = true;
    for (const child of this.children.values()) child.destroy();
    this.children.clear();
  }

  /** @internal WeightedTargetChildOwner */
  onChildReport(child: WeightedTargetChild, previous: ConnectivityState): void {
    if (child.state === TRANSIENT_FAILURE) this.lastFailed = child;
    if (this.updating || this.destroyed || child.deactivated) return;
    // While READY, only READY children are in the picker: other children's moves change nothing we report.
    if (this.reported === READY && child.state !== READY && previous !== READY) return;
    this.aggregate();
  }

  /** @internal WeightedTargetChildOwner */
  onRetentionExpired(child: WeightedTargetChild): void {
    if (this.children.get(child.name) !== child) return;
    this.helper.trace(() => `weighted_target: removed target ${child.name} destroyed after retention`);
    this.children.delete(child.name);
    if (this.lastFailed === child) this.lastFailed = null;
    child.destroy();
  }

  /** A28 aggregation: READY if any child is, else CONNECTING if any is, else IDLE if any is, else TF. */
  private aggregate(): void {
    let connecting = 0;
    let idle = 0;
    let active = 0;
    const readyPickers: Picker[] = [];
    const readyWeights: number[] = [];
    for (const child of this.children.values()) {
      if (child.deactivated) continue;
      active++;
      if (child.state === READY) {
        readyPickers.push(child.picker);
        readyWeights.push(child.weight);
      } else if (child.state === CONNECTING) connecting++;
      else if (child.state === IDLE) idle++;
    }
    if (readyPickers.length > 0) {
      this.report(READY, OK_STATUS, new WeightedPicker(readyPickers, readyWeights, this.random));
    } else if (connecting > 0) {
      if (this.reported !== CONNECTING) this.report(CONNECTING, OK_STATUS, queuePicker);
    } else if (idle > 0) {
      if (this.reported !== IDLE) this.report(IDLE, OK_STATUS, new IdlePicker(() => this.scheduleExitIdle()));
    } else if (active === 0) {
      this.report(TRANSIENT_FAILURE, NO_TARGETS, NO_TARGETS_PICKER);
    } else {
      this.reportFailure();
    }
  }

  /**
   * Every active child failed: each call fails with the error of a child chosen by weight (each child's own
   * real error), and the status we report is the error of the child that failed last.
   */
  private reportFailure(): void {
    const pickers: Picker[] = [];
    const weights: number[] = [];
    let status: Status | null = null;
    for (const child of this.children.values()) {
      if (child.deactivated) continue;
      pickers.push(child.picker);
      weights.push(child.weight);
      status ??= child.status;
    }
    const last = this.lastFailed;
    if (last !== null && !last.deactivated && last.state === TRANSIENT_FAILURE) status = last.status;
    this.report(TRANSIENT_FAILURE, status!, new WeightedPicker(pickers, weights, this.random));
  }

  /** A pick on the IDLE picker wakes every child, off the data path. */
  private scheduleExitIdle(): void {
    this.helper.clock.setTimer(0, () => {
      if (!this.destroyed) this.exitIdle();
    });
  }

  private report(state: ConnectivityState, status: Status, picker: Picker): void {
    this.reported = state;
    this.helper.updateState(state, status, picker);
  }
}

export const weightedTargetFactory: PolicyFactory<WeightedTargetConfig> = {
  name: WEIGHTED_TARGET,
  parseConfig: (json, path, registry) => parseWeightedTargetConfig(json, path, registry),
  create: (helper, registry) => new WeightedTargetLb(helper, registry),
};
