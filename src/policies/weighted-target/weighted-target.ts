import {
  type ChildNode,
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
  type Picker,
  type PolicyFactory,
  type PolicyLookup,
  type PolicyNode,
  queuePicker,
  READY,
  randomOf,
  type Status,
  TRANSIENT_FAILURE,
  unavailable,
  workMeter,
} from '../../core/index.js';
import { SnapshotArray } from '../shared/snapshot-array.js';
import { WakeableTally } from '../shared/wakeable-tally.js';
import { WeightedTargetChild, type WeightedTargetChildOwner } from './child.js';
import {
  parseWeightedTargetConfig,
  WEIGHTED_TARGET,
  WEIGHTED_TARGET_CHILD_RETENTION_MS,
  type WeightedTargetChildConfig,
  type WeightedTargetConfig,
} from './config.js';
import { AliasTable, WeightedPicker, type WeightedPicking } from './picker.js';
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
  /**
   * Removed targets waiting out their retention, by name (null while there has been none). The current ones
   * are `active`, by slot: an update finds each by its position first, and by name only when that misses.
   */
  private retained: Map<string, WeightedTargetChild> | null = null;
  /** The last good endpoint list: a target new in an update with a resolver error gets its share of it. */
  private lastEndpoints: readonly Endpoint[] | null = null;
  /** Child reports during an update are recorded only; the update aggregates once at its end. */
  private updating = false;
  private destroyed = false;
  private reported: ConnectivityState | null = null;
  /** The child that failed last: its error is the status of our TRANSIENT_FAILURE. */
  private lastFailed: WeightedTargetChild | null = null;
  /** The active (not retained) targets, by slot (the order of the latest update's targets); each knows its slot. */
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
  /** What the READY pickers of the latest update share, and the failing pickers (every slot present). */
  private picking: WeightedPicking | null = null;
  private failing: WeightedPicking | null = null;
  /**
   * How many active targets' exitIdle() would wake something (one READY and one IDLE target report READY, yet
   * exitIdle() must still wake the IDLE one): none, and exitIdle() has nothing to do.
   */
  private readonly wakeable: WakeableTally;

  /** @internal `helper.random` as one standalone function, for every picker this policy builds (and its targets). */
  readonly random: () => number;

  constructor(
    /** @internal Its targets' policies reach the channel through it. */
    readonly helper: Helper,
    /** @internal */
    readonly registry: PolicyLookup,
  ) {
    this.random = randomOf(helper);
    this.wakeable = new WakeableTally(helper);
  }

  /** The live view (A28): every target with its weight, the retained ones marked. */
  describe(): PolicyNode {
    const children: ChildNode[] = [];
    for (const child of this.active) {
      children.push({ name: child.name, facts: { weight: child.weight }, node: child.describe() });
    }
    if (this.retained !== null) {
      for (const child of this.retained.values()) {
        children.push({
          name: child.name,
          facts: { weight: child.weight, retained: true },
          node: child.describe(),
        });
      }
    }
    const state = this.reported ?? CONNECTING;
    const failed = state === TRANSIENT_FAILURE ? this.lastFailed : null;
    return {
      policy: WEIGHTED_TARGET,
      state,
      ...(failed !== null && { status: { code: failed.status.code, details: failed.status.details } }),
      children,
    };
  }

  update(update: LbUpdate<WeightedTargetConfig>): boolean {
    if (this.destroyed) return false;
    const { targets, childOf } = update.config;
    if (update.endpoints.ok) this.lastEndpoints = update.endpoints.value;
    const previous = this.active;
    const retained = this.retained;
    this.updating = true;
    workMeter.visits += 2 * targets.size + previous.length;
    // Every target's child (made, reused or brought back from retention), its config, and whether it is new,
    // by its index in this update, which its `slot` holds from here on.
    const updated: WeightedTargetChild[] = new Array(targets.size);
    try {
      const configs: WeightedTargetChildConfig[] = new Array(targets.size);
      const isNew = new Uint8Array(targets.size);
      let fresh = 0;
      let index = 0;
      let byName: Map<string, WeightedTargetChild> | null = null;
      // forEach, not for-of over entries: no [name, target] pair allocated per target.
      targets.forEach((target, name) => {
        // The target at the same position last time, if it has this name (a config re-delivered, or one that
        // kept its targets' order); else looked up by name, in an index made only when that first misses. A
        // first update looks nothing up.
        let child = previous[index];
        if (child === undefined || child.name !== name) {
          if (byName === null && previous.length > 0) byName = indexByName(previous);
          child = byName?.get(name) ?? retained?.get(name);
        }
        if (child === undefined) {
          child = new WeightedTargetChild(name, this);
          isNew[index] = 1;
          fresh++;
        } else if (child.deactivated) {
          child.reactivate();
          retained!.delete(name);
        }
        child.slot = index;
        updated[index] = child;
        configs[index++] = target;
      });
      // Each target's share, dealt straight from the list. A resolver error reaches existing children (which
      // keep the endpoints they have); a target new in such an update gets its share of the last good list.
      const shares: (Endpoint[] | undefined)[] = new Array(updated.length);
      const dealt = update.endpoints.ok ? update.endpoints.value : fresh > 0 ? this.lastEndpoints : null;
      if (dealt !== null) deal(dealt, childOf, updated, shares, update.endpoints.ok ? null : isNew);
      for (let i = 0; i < updated.length; i++) {
        // Its share as it is (no StatusOr per target), or the resolver error.
        const endpoints =
          dealt !== null && (update.endpoints.ok || isNew[i] === 1)
            ? (shares[i] ?? NO_ENDPOINTS)
            : update.endpoints;
        updated[i]!.update(configs[i]!, endpoints, update.attributes, update.resolutionNote);
      }
      // A target of the last update that this one does not list (its slot is another's now) is retained.
      for (let i = 0; i < previous.length; i++) {
        const child = previous[i]!;
        if (updated[child.slot] === child) continue;
        child.slot = -1;
        this.retained ??= new Map();
        this.retained.set(child.name, child);
        child.deactivate(WEIGHTED_TARGET_CHILD_RETENTION_MS);
      }
    } finally {
      this.updating = false;
    }
    // Weights may have changed even where no state did: always rebuild.
    this.assignSlots(updated);
    this.aggregate();
    this.wakeable.tell();
    // Like priority: rejected only when there is no list or nothing to route to; each child deals with its own
    // share (an empty share makes that child fail, not its siblings).
    return update.endpoints.ok && targets.size > 0;
  }

  exitIdle(): void {
    // grpc-js calls this before every call: nothing to walk unless a target has something to wake.
    if (!this.wakeable.any) return;
    workMeter.visits += this.active.length;
    for (const child of this.active) child.exitIdle();
  }

  resetBackoff(): void {
    workMeter.visits += this.active.length + (this.retained?.size ?? 0);
    for (const child of this.active) child.resetBackoff();
    if (this.retained !== null) for (const child of this.retained.values()) child.resetBackoff();
  }

  destroy(): void {
    this.destroyed = true;
    for (const child of this.active) child.destroy();
    if (this.retained !== null) for (const child of this.retained.values()) child.destroy();
    this.retained = null;
    this.active = [];
  }

  /** After an update: slots, counts, weights and pickers of its targets (`updated`, in slot order), in O(n). */
  private assignSlots(updated: WeightedTargetChild[]): void {
    const n = updated.length;
    // This loop, the alias table and the Fenwick tree.
    workMeter.visits += 3 * n;
    // Sized at once: no growth steps.
    const weights: number[] = new Array(n);
    const readyPickers: (Picker | null)[] = new Array(n);
    const allPickers: Picker[] = new Array(n);
    const counts = { IDLE: 0, CONNECTING: 0, READY: 0, TRANSIENT_FAILURE: 0, SHUTDOWN: 0 };
    let wakeable = 0;
    for (let slot = 0; slot < n; slot++) {
      const child = updated[slot]!;
      weights[slot] = child.weight;
      readyPickers[slot] = child.state === READY ? child.picker : null;
      allPickers[slot] = child.picker;
      counts[child.state]++;
      if (child.policyWakeable) wakeable++;
    }
    this.wakeable.reset(wakeable);
    this.active = updated;
    this.counts = counts;
    this.readyPickers = SnapshotArray.adopt(readyPickers);
    this.allPickers = SnapshotArray.adopt(allPickers);
    this.table = n > 0 ? new AliasTable(weights) : null;
    this.readyWeights = new ReadyWeights(weights, (slot) => readyPickers[slot] !== null);
    this.picking = null;
    this.failing = null;
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
  onChildWakeable(child: WeightedTargetChild, wakeable: boolean): void {
    // During an update the active targets are recounted after it; a retained target gets no exitIdle().
    if (this.updating || this.destroyed || child.deactivated || this.active[child.slot] !== child) return;
    this.wakeable.change(wakeable);
    this.wakeable.tell();
  }

  /** @internal WeightedTargetChildOwner */
  onRetentionExpired(child: WeightedTargetChild): void {
    if (this.retained?.get(child.name) !== child) return;
    this.helper.trace(() => `weighted_target: removed target ${child.name} destroyed after retention`);
    this.retained.delete(child.name);
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
      this.picking ??= { table: this.table!, random: this.random, ready: this.readyWeights };
      this.report(READY, OK_STATUS, WeightedPicker.over(this.readyPickers, this.picking));
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
    this.failing ??= { table: this.table!, random: this.random, ready: null };
    const last = this.lastFailed;
    const status =
      last !== null && !last.deactivated && last.state === TRANSIENT_FAILURE
        ? last.status
        : this.active[0]!.status;
    this.report(TRANSIENT_FAILURE, status, WeightedPicker.over(this.allPickers, this.failing));
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

/** The targets by name: made only when an update's targets do not come in the order of the last one's. */
function indexByName(children: readonly WeightedTargetChild[]): Map<string, WeightedTargetChild> {
  const byName = new Map<string, WeightedTargetChild>();
  workMeter.visits += children.length;
  for (let i = 0; i < children.length; i++) byName.set(children[i]!.name, children[i]!);
  return byName;
}

/**
 * Collects each updated target's share of `endpoints` into `shares` (by the target's index in `updated`, which
 * its slot holds during the update); endpoints of names no target has are dropped. `onlyNew`: when given, only
 * the targets it marks (new in this update) take a share.
 */
function deal(
  endpoints: readonly Endpoint[],
  childOf: WeightedTargetConfig['childOf'],
  updated: readonly WeightedTargetChild[],
  shares: (Endpoint[] | undefined)[],
  onlyNew: Uint8Array | null,
): void {
  let byName: Map<string, WeightedTargetChild> | null = null;
  let lastName: string | undefined;
  let index = -1;
  dealEndpoints(endpoints, childOf, (name, e) => {
    // Endpoints of one target usually come together: skip the lookup while the name repeats. And targets
    // usually come in the order of their first endpoints (xds_wrr_locality's are in first-seen order): the
    // target after the last one is tried by name before an index of them all, made only if that misses.
    if (name !== lastName) {
      lastName = name;
      const next = updated[index + 1];
      if (next !== undefined && next.name === name) {
        index++;
      } else {
        byName ??= indexByName(updated);
        index = byName.get(name)?.slot ?? -1;
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

export const weightedTargetFactory: PolicyFactory<WeightedTargetConfig> = {
  name: WEIGHTED_TARGET,
  parseConfig: (json, path, registry) => parseWeightedTargetConfig(json, path, registry),
  create: (helper, registry) => new WeightedTarget(helper, registry),
};

/** @deprecated The earlier name of {@link WeightedTarget} (policy classes are named without a suffix, like `RoundRobin`). */
export const WeightedTargetLb = WeightedTarget;
/** @deprecated See {@link WeightedTarget}. */
export type WeightedTargetLb = WeightedTarget;
