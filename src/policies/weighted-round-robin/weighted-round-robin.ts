import {
  BACKEND_SERVICE_ARG,
  BACKEND_SERVICE_LABEL,
  type CancelTimer,
  type ChannelArgs,
  type Endpoint,
  type Helper,
  LOCALITY_LABEL,
  METRIC_LOCALITY,
  type MetricLabels,
  type MetricsRecorder,
  type Picker,
  type PolicyFact,
  type PolicyFactory,
  randomOf,
  type Subchannel,
} from '../../core/index.js';
import { UPDATE_LIST } from '../shared/child-policy.js';
import type { EndpointChild } from '../shared/endpoint-list.js';
import { EagerPetiole } from '../shared/petiole.js';
import type { ArraySnapshot, SnapshotArray } from '../shared/snapshot-array.js';
import {
  parseWeightedRoundRobinConfig,
  WEIGHTED_ROUND_ROBIN,
  WEIGHTED_ROUND_ROBIN_DEFAULTS,
  type WeightedRoundRobinConfig,
} from './config.js';
import { EndpointWeight } from './endpoint-weight.js';
import {
  WRR_ENDPOINT_WEIGHT_NOT_YET_USABLE,
  WRR_ENDPOINT_WEIGHT_STALE,
  WRR_ENDPOINT_WEIGHTS,
  WRR_RR_FALLBACK,
} from './metrics.js';
import { OobWatchedSubchannel } from './oob-watched-subchannel.js';
import { PickCount, WeightedEndpoint, WeightedRoundRobinPicker } from './picker.js';
import { StaticStrideScheduler } from './static-stride-scheduler.js';

/** How many scheduler rebuilds a READY-set change may cause per weight_update_period, at most. */
const REBUILDS_PER_PERIOD_ON_CHANGE = 10;
/** READY sets this small are rebuilt on any new picker's first pick: O(1) each. */
const FREE_REBUILD_SIZE = 64;

/**
 * weighted_round_robin (A58) as an A61 petiole over pick_first: round_robin's connectivity rules, with picks
 * spread by weights computed from the endpoints' own load reports (A51): per call, or out of band when
 * enable_oob_load_report is set, through an ORCA watch on every subchannel of the endpoint. Weights live per
 * endpoint and survive address-list updates (A61 "Weighted Round Robin").
 *
 * The scheduler is rebuilt every weight_update_period. When the READY set changes in between, the new
 * picker rebuilds it at once, at most ten times per period; past that, the picker builds its scheduler from
 * the known weights on its first pick (grpc-go builds one whenever a picker starts), when the set is small
 * (at most 64 endpoints) or the policy's pickers have made at least n picks since the last rebuild, so a
 * rebuild costs O(1) per pick. Otherwise it rotates evenly until the catch-up rebuild a tenth of a period
 * after the last one: n endpoints connecting one by one cost O(n) per rebuild, not per endpoint, with or
 * without calls in between.
 */
export class WeightedRoundRobin extends EagerPetiole<WeightedRoundRobinConfig, WeightedEndpoint> {
  private config: WeightedRoundRobinConfig = WEIGHTED_ROUND_ROBIN_DEFAULTS;
  private readonly weights = new WeakMap<EndpointChild, EndpointWeight>();
  private readonly random: () => number;
  /** The READY set the scheduler was built over, the scheduler, and when. */
  private built: ArraySnapshot<WeightedEndpoint> | null = null;
  private scheduler: StaticStrideScheduler | null = null;
  private builtAt = Number.NEGATIVE_INFINITY;
  private readonly pickCount = new PickCount();
  private cancelTick: CancelTimer | null = null;
  private cancelCatchUp: CancelTimer | null = null;
  /** Every live subchannel of the children, each able to hold an out-of-band watch. */
  private readonly watched = new Set<OobWatchedSubchannel>();
  /** A78 / A89 labels of this policy's metrics, from its latest update. */
  private metricLabels: MetricLabels = {};

  constructor(helper: Helper) {
    super(helper);
    this.random = randomOf(helper);
  }

  override [UPDATE_LIST](
    endpoints: readonly Endpoint[],
    config: WeightedRoundRobinConfig,
    attributes: ChannelArgs,
    resolutionNote?: string,
  ): boolean {
    if (this.helper.metricsRecorder !== undefined) this.metricLabels = wrrMetricLabels(endpoints, attributes);
    return super[UPDATE_LIST](endpoints, config, attributes, resolutionNote);
  }

  protected override applyConfig(config: WeightedRoundRobinConfig): void {
    const periodChanged = config.weightUpdatePeriodMs !== this.config.weightUpdatePeriodMs;
    const oobChanged = oobPeriod(config) !== oobPeriod(this.config);
    this.config = config;
    for (const child of this.children) this.weights.get(child)?.setConfig(config);
    // A58 "OOB Load Reporting": watches start, stop, or restart with the new period on the live subchannels.
    if (oobChanged) for (const subchannel of this.watched) subchannel.setOobPeriod(oobPeriod(config));
    this.built = null; // penalty or periods may have changed the weights
    if (periodChanged || this.cancelTick === null) this.startTicks();
  }

  protected get policyName(): string {
    return WEIGHTED_ROUND_ROBIN;
  }

  protected override describeFacts(): Readonly<Record<string, PolicyFact>> {
    return {
      weightUpdatePeriodMs: this.config.weightUpdatePeriodMs,
      oobLoadReport: this.config.enableOobLoadReport,
      schedulerBuilt: this.scheduler !== null,
    };
  }

  /** A58: the endpoint's weight now (0 while unknown, blacked out or expired). */
  protected override describeEndpoint(child: EndpointChild): Readonly<Record<string, PolicyFact>> {
    const weight = this.weights.get(child);
    return { weight: weight === undefined ? 0 : weight.peek(this.helper.clock.now()) };
  }

  private weightOf(child: EndpointChild): EndpointWeight {
    let weight = this.weights.get(child);
    if (weight === undefined) {
      weight = new EndpointWeight(this.helper.clock, this.config);
      this.weights.set(child, weight);
    }
    return weight;
  }

  override wrapSubchannel(child: EndpointChild, subchannel: Subchannel): Subchannel {
    const weight = this.weightOf(child);
    const watched = new OobWatchedSubchannel(
      subchannel,
      (report) => weight.onReport(report),
      (released) => this.watched.delete(released),
    );
    this.watched.add(watched);
    watched.setOobPeriod(oobPeriod(this.config));
    return watched;
  }

  protected entryFor(child: EndpointChild, into: WeightedEndpoint[]): void {
    into[0] = new WeightedEndpoint(child.picker, this.weightOf(child));
  }

  protected override childBecameReady(child: EndpointChild): void {
    // A58 OnSubchannelBecomesReady: a fresh connection sits out a new blackout period.
    this.weights.get(child)?.onReady();
  }

  protected readyPickerOf(entries: SnapshotArray<WeightedEndpoint>): Picker {
    const ready = entries.snapshot();
    const perCall = !this.config.enableOobLoadReport;
    const start = Math.floor(this.random() * ready.length);
    if (ready !== this.built) {
      const now = this.helper.clock.now();
      const gap = this.config.weightUpdatePeriodMs / REBUILDS_PER_PERIOD_ON_CHANGE;
      if (now - this.builtAt < gap) {
        this.catchUpAt(this.builtAt + gap - now);
        const first = () => this.firstPickScheduler(ready);
        return new WeightedRoundRobinPicker(ready, first, perCall, start, this.pickCount);
      }
      this.rebuild(ready, now);
    }
    return new WeightedRoundRobinPicker(ready, this.scheduler, perCall, start, this.pickCount);
  }

  /**
   * The scheduler a picker started inside the rate limit uses, asked on its first pick: built now from the
   * known weights when that is cheap or paid for (see the class comment), else none (rotation until the
   * catch-up rebuild).
   */
  private firstPickScheduler(ready: ArraySnapshot<WeightedEndpoint>): StaticStrideScheduler | null {
    if (ready === this.built) return this.scheduler;
    if (ready.length > FREE_REBUILD_SIZE && this.pickCount.picks < ready.length) return null;
    this.rebuild(ready, this.helper.clock.now());
    return this.scheduler;
  }

  private rebuild(ready: ArraySnapshot<WeightedEndpoint>, now: number): void {
    const n = ready.length;
    const weights = new Float64Array(n);
    for (let i = 0; i < n; i++) weights[i] = ready.at(i).weight.current(now);
    this.scheduler = StaticStrideScheduler.build(weights, Math.floor(this.random() * 0x1_0000_0000));
    const recorder = this.helper.metricsRecorder;
    if (recorder !== undefined) this.recordSchedulerUpdate(recorder, ready, weights);
    this.built = ready;
    this.builtAt = now;
    this.pickCount.picks = 0;
    this.helper.trace(
      () => `weighted_round_robin: scheduler rebuilt over ${n} endpoints: ${this.describeWeights(weights)}`,
    );
  }

  /** A78: one scheduler update's counts and weights. */
  private recordSchedulerUpdate(
    recorder: MetricsRecorder,
    ready: ArraySnapshot<WeightedEndpoint>,
    weights: Float64Array,
  ): void {
    const labels = this.metricLabels;
    const histogram = recorder.isEnabled(WRR_ENDPOINT_WEIGHTS);
    if (
      !histogram &&
      !recorder.isEnabled(WRR_RR_FALLBACK) &&
      !recorder.isEnabled(WRR_ENDPOINT_WEIGHT_NOT_YET_USABLE) &&
      !recorder.isEnabled(WRR_ENDPOINT_WEIGHT_STALE)
    )
      return;
    let notYetUsable = 0;
    let stale = 0;
    for (let i = 0; i < weights.length; i++) {
      const unusable = ready.at(i).weight.unusable;
      if (unusable === 'not_yet_usable') notYetUsable++;
      else if (unusable === 'stale') stale++;
      if (histogram) recorder.recordHistogram(WRR_ENDPOINT_WEIGHTS, weights[i]!, labels);
    }
    // A58: with fewer than two usable weights the picks rotate as round_robin's do.
    if (weights.length - notYetUsable - stale < 2) recorder.addCounter(WRR_RR_FALLBACK, 1, labels);
    recorder.addCounter(WRR_ENDPOINT_WEIGHT_NOT_YET_USABLE, notYetUsable, labels);
    recorder.addCounter(WRR_ENDPOINT_WEIGHT_STALE, stale, labels);
  }

  private describeWeights(weights: Float64Array): string {
    const shown = Array.from(weights.subarray(0, 8), (w) => w.toFixed(2)).join(', ');
    return this.scheduler
      ? `weights [${shown}${weights.length > 8 ? ', …' : ''}]`
      : 'round robin (weights unknown)';
  }

  /** A58: the picker is rebuilt with fresh weights every weight_update_period. */
  private startTicks(): void {
    this.cancelTick?.();
    const tick = () => {
      this.cancelTick = this.helper.clock.setTimer(this.config.weightUpdatePeriodMs, tick);
      // The periodic rebuild always runs: the rate limit is for READY-set changes in between.
      this.built = null;
      this.builtAt = Number.NEGATIVE_INFINITY;
      this.refreshPicker();
    };
    this.cancelTick = this.helper.clock.setTimer(this.config.weightUpdatePeriodMs, tick);
  }

  private catchUpAt(delayMs: number): void {
    if (this.cancelCatchUp !== null) return;
    this.cancelCatchUp = this.helper.clock.setTimer(delayMs, () => {
      this.cancelCatchUp = null;
      this.refreshPicker();
    });
  }

  override destroy(): void {
    this.cancelTick?.();
    this.cancelCatchUp?.();
    this.cancelTick = null;
    this.cancelCatchUp = null;
    super.destroy();
  }
}

/**
 * A78's locality label: the endpoints' (under xds_wrr_locality they share one locality; A94's per-endpoint
 * attribute has A78's text form, which weighted_target's child names do not), "" without one; A89's backend
 * service from the resolver attribute cds sets.
 */
function wrrMetricLabels(endpoints: readonly Endpoint[], attributes: ChannelArgs): MetricLabels {
  const labels: Record<string, string> = {
    [LOCALITY_LABEL]: endpoints[0]?.attributes.get(METRIC_LOCALITY) ?? '',
  };
  const backendService = attributes[BACKEND_SERVICE_ARG];
  if (typeof backendService === 'string') labels[BACKEND_SERVICE_LABEL] = backendService;
  return labels;
}

/** The out-of-band reporting period the config asks for, or null when reports come per call. */
function oobPeriod(config: WeightedRoundRobinConfig): number | null {
  return config.enableOobLoadReport ? config.oobReportingPeriodMs : null;
}

export const weightedRoundRobinFactory: PolicyFactory<WeightedRoundRobinConfig> = {
  name: WEIGHTED_ROUND_ROBIN,
  parseConfig: (json, path) => parseWeightedRoundRobinConfig(json, path),
  create: (helper) => new WeightedRoundRobin(helper),
};
