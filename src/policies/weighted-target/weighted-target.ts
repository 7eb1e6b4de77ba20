import {
  CONNECTING,
  type ConnectivityState,
  dealEndpoints,
  type Endpoint,
  FailPicker,
  type Helper,
  IDLE,
  IdlePicker,
  type LbUpdate,
  type LoadBalancer,
  NO_ENDPOINTS,
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
  workMeter,
} from '../../core/index.js';
import { SnapshotArray } from '../snapshot-array.js';
import { WeightedTargetChild, type WeightedTargetChildOwner } from './child.js';
import {
  parseWeightedTargetConfig,
  WEIGHTED_TARGET,
  WEIGHTED_TARGET_CHILD_RETENTION_MS,
  type WeightedTargetChildConfig,
  type WeightedTargetConfig,
} from './config.js';
import { AliasTable, WeightedPicker } from './picker.js';
import { ReadyWeights } from './ready-weights.js';

const NO_TARGETS = unavailable('weighted_target has no targets');
const NO_TARGETS_PICKER = new FailPicker(NO_TARGETS);

/**
 * weighted_target_experimental (gRFC A28): one child per target, all created at once; picks go to READY
 * children at random in proportion to their weights. Targets removed from the config are kept for 15 minutes
 * and reused if they come back.
 *
 * Each update gives the active targets slots and builds what does not change until the next one (the alias
 * table of their weights); a child report then costs O(log n): per-state counts, the slot's picker and the
 * READY weights (a Fenwick tree) change in place, and pickers take O(1) snapshots of them.
 */
export class WeightedTarget implements LoadBalancer<WeightedTargetConfig>, WeightedTargetChildOwner {
  /** Current targets and retained removed ones, by name. */
  private readonly children = new Map<string, WeightedTargetChild>();
  /** The last good endpoint list: a target new in an update with a resolver error gets its share of it. */
  private lastEndpoints: readonly Endpoint[] | null = null;
  /** Child reports during an update are recorded only; the update aggregates once at its end. */
  private updating = false;
  private destroyed = false;
  private reported: ConnectivityState | null = null;
  /** The child that failed last: its error is the status of our TRANSIENT_FAILURE. */
  private lastFailed: WeightedTargetChild | null = null;
  /** The active (not retained) targets, by slot; each knows its slot. */
  private active: WeightedTargetChild[] = [];
  /** How many active targets are in each state. */
  private counts = { IDLE: 0, CONNECTING: 0, READY: 0, TRANSIENT_FAILURE: 0, SHUTDOWN: 0 };
  /** The active targets' weights, by slot; null when there is none. */
  private table: AliasTable | null = null;
  /** By slot: the picker of a READY target, else null. */
  private readyPickers = new SnapshotArray<Picker | null>();
  /** By slot: every active target's latest picker (the TRANSIENT_FAILURE picker picks among them all). */
  private allPickers = new SnapshotArray<Picker>();
  private readyWeights: ReadyWeights | null = null;

  /** @internal `helper.random` as one standalone function, for every picker this policy builds (and its targets). */
  readonly random: () => number;

  constructor(
    /** @internal Its targets' policies reach the channel through it. */
    readonly helper: Helper,
    /** @internal */
    readonly registry: PolicyLookup,
  ) {
    this.random = randomOf(helper);
  }

  update(update: LbUpdate<WeightedTargetConfig>): boolean {
    if (this.destroyed) return false;
    const { targets, childOf } = update.config;
    if (update.endpoints.ok) this.lastEndpoints = update.endpoints.value;
    this.updating = true;
    workMeter.visits += 2 * targets.size + this.children.size;
    try {
      // Every target's child (made, reused or brought back from retention), its config, and whether it is
      // new, by its index in this update, which its `slot` holds until assignSlots.
      const updated: WeightedTargetChild[] = new Array(targets.size);
      const configs: WeightedTargetChildConfig[] = new Array(targets.size);
      const isNew = new Uint8Array(targets.size);
      let fresh = 0;
      let index = 0;
      // The first update finds no child to reuse: no lookup (a target per endpoint makes 10,000s of them).
      const reusing = this.children.size > 0;
      // forEach, not for-of over entries: no [name, target] pair allocated per target.
      targets.forEach((target, name) => {
        let child = reusing ? this.children.get(name) : undefined;
        if (child === undefined) {
          child = new WeightedTargetChild(name, this);
          this.children.set(name, child);
          isNew[index] = 1;
          fresh++;
        } else {
          child.reactivate();
        }
        child.slot = index;
        updated[index] = child;
        configs[index++] = target;
      });
      // Each target's share, dealt straight from the list. A resolver error reaches existing children (which
      // keep the endpoints they have); a target new in such an update gets its share of the last good list.
      const shares: (Endpoint[] | undefined)[] = new Array(updated.length);
      const dealt = update.endpoints.ok ? update.endpoints.value : fresh > 0 ? this.lastEndpoints : null;
      if (dealt !== null) this.deal(dealt, childOf, updated, shares, update.endpoints.ok ? null : isNew);
      for (let i = 0; i < updated.length; i++) {
        const endpoints: StatusOr<readonly Endpoint[]> =
          dealt !== null && (update.endpoints.ok || isNew[i] === 1)
            ? ok(shares[i] ?? NO_ENDPOINTS)
            : update.endpoints;
        updated[i]!.update(configs[i]!, endpoints, update.attributes, update.resolutionNote);
      }
      // Every target has its child now: only when there are more children is one of them no longer listed.
      if (this.children.size > targets.size) {
        this.children.forEach((child, name) => {
          if (!targets.has(name)) child.deactivate(WEIGHTED_TARGET_CHILD_RETENTION_MS);
        });
      }
    } finally {
      this.updating = false;
    }
    // Weights may have changed even where no state did: always rebuild.
    this.assignSlots();
    this.aggregate();
    // Like priority: rejected only when there is no list or nothing to route to; each child deals with its own
    // share (an empty share makes that child fail, not its siblings).
    return update.endpoints.ok && targets.size > 0;
  }

  /**
   * Collects each updated target's share of `endpoints` into `shares` (by the target's index in `updated`,
   * which its slot holds during the update); endpoints of other names, or of retained targets, are dropped.
   * `onlyNew`: when given, only the targets it marks (new in this update) take a share.
   */
  private deal(
    endpoints: readonly Endpoint[],
    childOf: WeightedTargetConfig['childOf'],
    updated: readonly WeightedTargetChild[],
    shares: (Endpoint[] | undefined)[],
    onlyNew: Uint8Array | null,
  ): void {
    const children = this.children;
    let lastName: string | undefined;
    let index = -1;
    dealEndpoints(endpoints, childOf, (name, e) => {
      // Endpoints of one target usually come together: skip the lookup while the name repeats. And targets
      // usually come in the order of their first endpoints (xds_wrr_locality's are in first-seen order): the
      // target after the last one is tried by name before the Map.
      if (name !== lastName) {
        lastName = name;
        const next = updated[index + 1];
        if (next !== undefined && next.name === name) {
          index++;
        } else {
          const child = children.get(name);
          index = child !== undefined && updated[child.slot] === child ? child.slot : -1;
        }
        if (onlyNew !== null && index >= 0 && onlyNew[index] === 0) index = -1;
      }
      if (index < 0) return;
      const share = shares[index];
      // Made holding its first endpoint: an empty array's first push reserves 17 slots, and one endpoint per
      // target (a locality per endpoint) is a common shape.
      if (share === undefined) shares[index] = [e];
      else share.push(e);
    });
  }

  exitIdle(): void {
    workMeter.visits += this.children.size;
    for (const child of this.children.values()) if (!child.deactivated) child.exitIdle();
  }

  resetBackoff(): void {
    workMeter.visits += this.children.size;
    for (const child of this.children.values()) child.resetBackoff();
  }

  destroy(): void {
    this.destroyed = true;
    for (const child of this.children.values()) child.destroy();
    this.children.clear();
    this.active = [];
  }

  /** After an update: slots, counts, weights and pickers of the active targets, built in O(n). */
  private assignSlots(): void {
    const size = this.children.size;
    // This loop, the alias table and the Fenwick tree.
    workMeter.visits += 3 * size;
    // Sized at once (trimmed to the active targets after): no growth steps. forEach, not for-of: no iterator
    // result per child.
    const active: WeightedTargetChild[] = new Array(size);
    const weights: number[] = new Array(size);
    const readyPickers: (Picker | null)[] = new Array(size);
    const allPickers: Picker[] = new Array(size);
    const counts = { IDLE: 0, CONNECTING: 0, READY: 0, TRANSIENT_FAILURE: 0, SHUTDOWN: 0 };
    let n = 0;
    this.children.forEach((child) => {
      if (child.deactivated) {
        child.slot = -1;
        return;
      }
      child.slot = n;
      active[n] = child;
      weights[n] = child.weight;
      readyPickers[n] = child.state === READY ? child.picker : null;
      allPickers[n++] = child.picker;
      counts[child.state]++;
    });
    if (n < size) {
      active.length = n;
      weights.length = n;
      readyPickers.length = n;
      allPickers.length = n;
    }
    this.active = active;
    this.counts = counts;
    this.readyPickers = SnapshotArray.adopt(readyPickers);
    this.allPickers = SnapshotArray.adopt(allPickers);
    this.table = n > 0 ? new AliasTable(weights) : null;
    this.readyWeights = new ReadyWeights(weights, (slot) => readyPickers[slot] !== null);
  }

  /** @internal WeightedTargetChildOwner */
  onChildReport(child: WeightedTargetChild, previous: ConnectivityState): void {
    if (child.state === TRANSIENT_FAILURE) this.lastFailed = child;
    // During an update the slots are rebuilt after it; a retained target has none.
    if (this.updating || this.destroyed || child.deactivated || this.active[child.slot] !== child) return;
    const slot = child.slot;
    this.counts[previous]--;
    this.counts[child.state]++;
    this.allPickers.set(slot, child.picker);
    if (child.state === READY) {
      this.readyPickers.set(slot, child.picker);
      if (previous !== READY) this.readyWeights!.add(slot, child.weight);
    } else if (previous === READY) {
      this.readyPickers.set(slot, null);
      this.readyWeights!.add(slot, -child.weight);
    }
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
    workMeter.visits++;
    const counts = this.counts;
    if (counts[READY] > 0) {
      if (this.active.length === 1) {
        // One target (an xDS cluster with one locality): every weighted pick lands on it, so its own picker is
        // ours as it is: no picker to build per report, and its constant result reaches the parents.
        const only = this.active[0]!;
        this.report(READY, OK_STATUS, only.picker);
        return;
      }
      const picker = new WeightedPicker(
        this.table!,
        this.readyPickers.snapshot(),
        this.random,
        this.readyWeights,
      );
      this.report(READY, OK_STATUS, picker);
    } else if (counts[CONNECTING] > 0) {
      if (this.reported !== CONNECTING) this.report(CONNECTING, OK_STATUS, queuePicker);
    } else if (counts[IDLE] > 0) {
      if (this.reported !== IDLE) this.report(IDLE, OK_STATUS, new IdlePicker(() => this.scheduleExitIdle()));
    } else if (this.active.length === 0) {
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
    const last = this.lastFailed;
    const status =
      last !== null && !last.deactivated && last.state === TRANSIENT_FAILURE
        ? last.status
        : this.active[0]!.status;
    this.report(
      TRANSIENT_FAILURE,
      status,
      new WeightedPicker(this.table!, this.allPickers.snapshot(), this.random),
    );
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
  create: (helper, registry) => new WeightedTarget(helper, registry),
};

/** @deprecated The earlier name of {@link WeightedTarget} (policy classes are named without a suffix, like `RoundRobin`). */
export const WeightedTargetLb = WeightedTarget;
/** @deprecated See {@link WeightedTarget}. */
export type WeightedTargetLb = WeightedTarget;
