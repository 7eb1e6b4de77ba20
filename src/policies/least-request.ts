import {
  type CallEndDetails,
  type CompletePick,
  ConfigError,
  ConfigReader,
  expectInteger,
  type Helper,
  MAX_UINT32,
  type PickArgs,
  type Picker,
  type PickResult,
  type PolicyFact,
  type PolicyFactory,
  randomOf,
  type Status,
} from '../core/index.js';
import type { EndpointChild } from './shared/endpoint-list.js';
import { EagerPetiole } from './shared/petiole.js';
import { ArraySnapshot, SnapshotArray } from './shared/snapshot-array.js';

export const LEAST_REQUEST = 'least_request_experimental';

/** A48 "LB Policy Config": the default, and the bounds of the effective `choiceCount`. */
export const DEFAULT_CHOICE_COUNT = 2;
export const MIN_CHOICE_COUNT = 2;
export const MAX_CHOICE_COUNT = 10;

/** A48 `LeastRequestLoadBalancingConfig`, with `choiceCount` already clamped to [2, 10]. */
export interface LeastRequestConfig {
  readonly choiceCount: number;
}

/**
 * Parses `{ choiceCount }` (or `choice_count`): a uint32, default 2; below 2 is rejected, above 10 is
 * treated as 10 (A48: "only an effective choice_count in the range [2, 10] will be supported").
 */
export function parseLeastRequestConfig(json: unknown, path: string): LeastRequestConfig {
  const reader = new ConfigReader(json, path);
  const field = reader.field('choiceCount');
  if (field === undefined) return { choiceCount: DEFAULT_CHOICE_COUNT };
  const n = expectInteger(field.value, field.path, 0, MAX_UINT32);
  if (n < MIN_CHOICE_COUNT) {
    throw new ConfigError(field.path, `must be at least ${MIN_CHOICE_COUNT}, got ${n}`);
  }
  return { choiceCount: Math.min(n, MAX_CHOICE_COUNT) };
}

/**
 * The outstanding call counts of one least_request policy's endpoints (A48 "Outstanding request counters"),
 * one slot each in a typed array: a pick reads each sampled endpoint's count from this compact array, not
 * from an object of the endpoint's somewhere on the heap (at 10,000 endpoints that was a cache miss per
 * sample). An endpoint keeps its slot for as long as it stays in the list; a released slot goes to an
 * endpoint added later, from zero.
 */
export class ActiveCounts {
  /** The counts by slot. Replaced by a larger array as slots are taken: read it through this field. */
  counts: Uint32Array;
  private readonly free: number[] = [];
  private used = 0;

  constructor(capacity = 4) {
    this.counts = new Uint32Array(Math.max(1, capacity));
  }

  /** A slot of its own for a new endpoint, counting from zero. */
  take(): number {
    const slot = this.free.length > 0 ? this.free.pop()! : this.used++;
    if (slot >= this.counts.length) {
      const grown = new Uint32Array(this.counts.length * 2);
      grown.set(this.counts);
      this.counts = grown;
    }
    this.counts[slot] = 0;
    return slot;
  }

  /** Gives a slot back (its endpoint left the list). */
  release(slot: number): void {
    this.counts[slot] = 0;
    this.free.push(slot);
  }
}

/**
 * One endpoint's outstanding calls (A48 "Outstanding request counters"): its slot in the policy's
 * {@link ActiveCounts}, with the two hooks that count there. Made once per endpoint and kept while the
 * endpoint stays in the list, so counts survive picker rebuilds and endpoint list updates, and a call
 * started before an update ends on the same slot after it; the hooks are bound once, so a pick allocates
 * nothing. Once released (the endpoint left the list) its calls still ending count for nothing: the slot may
 * be another endpoint's by then.
 */
export class CallCounter {
  /** The slot in `store`, or -1 once released. */
  slot: number;
  /** The child result `result` was built from, and the result with our hooks added. */
  private base: CompletePick | null = null;
  private result: CompletePick | null = null;

  // Bound methods, not arrows: two arrows share a closure context, one more object per endpoint.
  readonly onCallStarted: () => void = this.callStarted.bind(this);
  readonly onCallEnded: () => void = this.callEnded.bind(this);

  /** `store`: the policy's counts (a counter made on its own gets a store of its own). */
  constructor(readonly store: ActiveCounts = new ActiveCounts(1)) {
    this.slot = store.take();
  }

  /** The calls in flight on this endpoint. */
  get active(): number {
    return this.slot < 0 ? 0 : this.store.counts[this.slot]!;
  }

  /** The endpoint left the list: its slot goes back to the store. */
  release(): void {
    if (this.slot < 0) return;
    this.store.release(this.slot);
    this.slot = -1;
  }

  private callStarted(): void {
    if (this.slot >= 0) this.store.counts[this.slot]!++;
  }

  private callEnded(): void {
    const slot = this.slot;
    if (slot >= 0 && this.store.counts[slot]! > 0) this.store.counts[slot]!--;
  }

  /** The child's result with this counter's hooks: rebuilt only when the child's result changes. */
  counted(base: CompletePick): CompletePick {
    if (base !== this.base) {
      this.base = base;
      this.result = withHooks(base, this);
    }
    return this.result!;
  }
}

/** `base` with `counter`'s hooks; a child's own hooks (pick_first has none) still run. */
function withHooks(base: CompletePick, counter: CallCounter): CompletePick {
  const started = base.onCallStarted;
  const ended = base.onCallEnded;
  if (started === undefined && ended === undefined) {
    return Object.freeze({
      type: 'complete',
      subchannel: base.subchannel,
      onCallStarted: counter.onCallStarted,
      onCallEnded: counter.onCallEnded,
    });
  }
  return Object.freeze({
    type: 'complete',
    subchannel: base.subchannel,
    onCallStarted: () => {
      counter.onCallStarted();
      started?.();
    },
    onCallEnded: (status: Status, details?: CallEndDetails) => {
      counter.onCallEnded();
      ended?.(status, details);
    },
  });
}

/** A READY child whose picker has no constant result: asked per pick, and what it completes is counted. */
export class CountedDelegate {
  readonly type = 'delegate';
  constructor(
    readonly picker: Picker,
    readonly counter: CallCounter,
  ) {}
}

/**
 * One slot of the least_request picker's entries: each READY child takes two, its count slot in the policy's
 * {@link ActiveCounts} (read by every sample) and its counted constant result, or its picker when it has none
 * (asked per pick).
 */
export type LeastRequestSlot = number | CompletePick | CountedDelegate;

/** A READY child's two slots. */
export function leastRequestSlots(picker: Picker, counter: CallCounter): readonly LeastRequestSlot[] {
  return [counter.slot, resultSlot(picker, counter)];
}

/** A READY child's second slot: its counted constant result, or its picker. */
function resultSlot(picker: Picker, counter: CallCounter): LeastRequestSlot {
  const constant = picker.constantResult;
  return constant?.type === 'complete' ? counter.counted(constant) : new CountedDelegate(picker, counter);
}

/** What every picker of one least_request policy shares, until its config changes. */
export interface LeastRequestPicking {
  /** The policy's outstanding call counts, read by every sample. */
  readonly store: ActiveCounts;
  readonly choiceCount: number;
  readonly random: () => number;
}

/**
 * A48 "Picker Behavior": samples `choiceCount` READY children uniformly at random (with replacement, as Envoy
 * does: A48 "Allow picking same candidate multiple times") and picks the one with the fewest outstanding
 * calls; on a tie the first sampled wins. A pick reads a few array slots and one count per sample from the
 * policy's typed array, and allocates nothing: each child's result, hooks included, is prebuilt. The picker
 * is itself a snapshot of the policy's READY entries, two slots per child (see {@link LeastRequestSlot}): a
 * READY report makes one object, not a picker and a snapshot.
 */
export class LeastRequestPicker extends ArraySnapshot<LeastRequestSlot> implements Picker {
  private readonly n: number;
  private readonly store: ActiveCounts;
  private readonly choiceCount: number;
  private readonly random: () => number;

  /** @internal Made through `SnapshotArray.snapshotWith` (or {@link of}). */
  constructor(items: readonly LeastRequestSlot[], length: number, picking: LeastRequestPicking) {
    super(items, length);
    if (length === 0 || length % 2 !== 0) {
      throw new RangeError('LeastRequestPicker needs two slots per child, and at least one child');
    }
    this.n = length / 2;
    this.store = picking.store;
    this.choiceCount = picking.choiceCount;
    this.random = picking.random;
  }

  /** A picker over fixed lists: one counter per picker, every counter of one {@link ActiveCounts}. */
  static of(
    pickers: readonly Picker[],
    counters: readonly CallCounter[],
    choiceCount: number,
    random: () => number,
  ): LeastRequestPicker {
    if (pickers.length === 0 || counters.length !== pickers.length) {
      throw new RangeError('LeastRequestPicker needs one counter per picker, and at least one picker');
    }
    const store = counters[0]!.store;
    if (counters.some((c) => c.store !== store)) {
      throw new RangeError("LeastRequestPicker's counters must share one ActiveCounts");
    }
    const entries = new SnapshotArray<LeastRequestSlot>();
    for (let i = 0; i < pickers.length; i++) {
      for (const slot of leastRequestSlots(pickers[i]!, counters[i]!)) entries.push(slot);
    }
    return entries.snapshotWith(leastRequestPicker, { store, choiceCount, random });
  }

  pick(args: PickArgs): PickResult {
    const n = this.n;
    const best = n > 1 ? this.leastLoadedSample(n) : 0;
    const result = this.at(2 * best + 1) as CompletePick | CountedDelegate;
    if (result.type !== 'delegate') return result;
    // A child without a constant result (not a pick_first): ask its picker and count what it completes.
    const picked = result.picker.pick(args);
    return picked.type === 'complete' ? withHooks(picked, result.counter) : picked;
  }

  /**
   * The least loaded of `choiceCount` children sampled uniformly with replacement; on a tie, the first sampled.
   * Each draw u gives two samples: ⌊u·n⌋, and ⌊f·n⌋ of its remainder f = u·n − ⌊u·n⌋, itself uniform on [0, 1)
   * and independent of the first to the draw's resolution (Math.random's 52 bits leave f 38 at 10,000
   * children). A draw is a call through the helper's randomness: the default two samples make one.
   */
  private leastLoadedSample(n: number): number {
    const random = this.random;
    const counts = this.store.counts;
    const choiceCount = this.choiceCount;
    if (choiceCount === 2) {
      // A48's default, straight through: one draw, two samples, the second wins only with fewer calls.
      const x = random() * n;
      const first = x < n ? x | 0 : n - 1;
      const y = (x - first) * n;
      const second = y < n ? y | 0 : n - 1;
      return counts[this.at(2 * second) as number]! < counts[this.at(2 * first) as number]! ? second : first;
    }
    let best = 0;
    let fewest = 0;
    for (let i = 0; i < choiceCount; i += 2) {
      const x = random() * n;
      // u·n can round up to n itself: such a draw counts as the last child (and so does its remainder's).
      const first = x < n ? x | 0 : n - 1;
      const load = counts[this.at(2 * first) as number]!;
      if (i === 0 || load < fewest) {
        best = first;
        fewest = load;
      }
      if (i + 1 === choiceCount) break;
      const y = (x - first) * n;
      const second = y < n ? y | 0 : n - 1;
      const secondLoad = counts[this.at(2 * second) as number]!;
      if (secondLoad < fewest) {
        best = second;
        fewest = secondLoad;
      }
    }
    return best;
  }
}

const leastRequestPicker = (
  items: readonly LeastRequestSlot[],
  length: number,
  picking: LeastRequestPicking,
): LeastRequestPicker => new LeastRequestPicker(items, length, picking);

/**
 * least_request_experimental (gRFC A48) as an A61 petiole over pick_first (A61 "Least Request": like WRR, with
 * outstanding call counts stored per endpoint). Connectivity management and state are round_robin's
 * ({@link EagerPetiole}); duplicate endpoints collapse into one child and get no extra weight (A48
 * "Duplicate addresses in resolution result").
 */
export class LeastRequest extends EagerPetiole<LeastRequestConfig, LeastRequestSlot> {
  protected override get entryWidth(): number {
    return 2;
  }
  /** Every endpoint's outstanding calls, by the slot its {@link CallCounter} holds. */
  private readonly activeCounts = new ActiveCounts();
  /** What every picker shares: made again only when the config changes. */
  private picking: LeastRequestPicking;

  constructor(helper: Helper) {
    super(helper);
    this.picking = { store: this.activeCounts, choiceCount: DEFAULT_CHOICE_COUNT, random: randomOf(helper) };
  }

  private get choiceCount(): number {
    return this.picking.choiceCount;
  }

  protected override applyConfig(config: LeastRequestConfig): void {
    if (config.choiceCount === this.picking.choiceCount) return;
    this.picking = { ...this.picking, choiceCount: config.choiceCount };
  }

  protected get policyName(): string {
    return LEAST_REQUEST;
  }

  protected override describeFacts(): Readonly<Record<string, PolicyFact>> {
    return { choiceCount: this.choiceCount };
  }

  /** A48: the calls in flight on the endpoint, once it has been READY. */
  protected override describeEndpoint(
    child: EndpointChild,
  ): Readonly<Record<string, PolicyFact>> | undefined {
    const counter = child.ownerData as CallCounter | undefined;
    return counter === undefined ? undefined : { activeCalls: counter.active };
  }

  protected entryFor(child: EndpointChild, into: LeastRequestSlot[]): void {
    // Kept on the child until it is destroyed (its slot then goes back): a re-added endpoint starts at zero.
    let counter = child.ownerData as CallCounter | undefined;
    if (counter === undefined) {
      counter = new CallCounter(this.activeCounts);
      child.ownerData = counter;
    }
    into[0] = counter.slot;
    into[1] = resultSlot(child.picker, counter);
  }

  protected override childDestroyed(child: EndpointChild): void {
    (child.ownerData as CallCounter | undefined)?.release();
  }

  protected readyPickerOf(entries: SnapshotArray<LeastRequestSlot>): Picker {
    return entries.snapshotWith(leastRequestPicker, this.picking);
  }
}

export const leastRequestFactory: PolicyFactory<LeastRequestConfig> = {
  name: LEAST_REQUEST,
  parseConfig: (json, path) => parseLeastRequestConfig(json, path),
  create: (helper) => new LeastRequest(helper),
};
