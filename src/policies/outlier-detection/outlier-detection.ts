import {
  addressKey,
  BACKEND_SERVICE_ARG,
  BACKEND_SERVICE_LABEL,
  type CancelTimer,
  CONNECTING,
  type ConnectivityState,
  childHelper,
  type Endpoint,
  endpointKey,
  type Helper,
  type LbUpdate,
  type LoadBalancer,
  type MetricLabels,
  OK_STATUS,
  type PolicyFactory,
  type PolicyLookup,
  type PolicyNode,
  type Status,
} from '../../core/index.js';
import { ChildPolicy } from '../shared/child-policy.js';
import { SingleChildPolicy } from '../shared/single-child-policy.js';
import {
  countsCalls,
  OUTLIER_DETECTION,
  type OutlierDetectionConfig,
  parseOutlierDetectionConfig,
} from './config.js';
import { EjectableSubchannel } from './ejectable-subchannel.js';
import {
  type EjectionContext,
  runFailurePercentageEjection,
  runSuccessRateEjection,
} from './ejection-algorithms.js';
import { EndpointOutlierState } from './endpoint-state.js';
import {
  DETECTION_METHOD_LABEL,
  type DetectionMethod,
  EJECTIONS_ENFORCED,
  EJECTIONS_UNENFORCED,
  UNENFORCED_REASON_LABEL,
  type UnenforcedReason,
} from './metrics.js';
import { OutlierDetectionPicker } from './picker.js';

/**
 * outlier_detection_experimental (A50, with A61's per-endpoint ejection): counts each endpoint's call results
 * through pick hooks, and every interval ejects the endpoints whose success rate is an outlier or whose failure
 * percentage is over the threshold, by making their subchannels' health TRANSIENT_FAILURE.
 */
export class OutlierDetection
  extends SingleChildPolicy
  implements LoadBalancer<OutlierDetectionConfig>, EjectionContext
{
  private config: OutlierDetectionConfig | null = null;
  protected readonly child: ChildPolicy;
  /** A61: ejection state by endpoint (unordered address set)… */
  private readonly byEndpoint = new Map<string, EndpointOutlierState>();
  /** …and by address, for the subchannels' call results and ejection. */
  private readonly byAddress = new Map<string, EndpointOutlierState>();
  /** Every subchannel handed to the child, by address (a subchannel's address may join the map later). */
  private readonly subchannels = new Map<string, Set<EjectableSubchannel>>();
  ejectedCount = 0;
  /** A50: the timer start timestamp (null when unset) and the running timer. */
  private timerStartedAt: number | null = null;
  private cancelTimer: CancelTimer | null = null;
  /** A89: the cluster cds names in the update's attributes, for A91's optional label. */
  private backendService: string | undefined;
  /** What the child last reported (the live view). */
  private childState: ConnectivityState = CONNECTING;
  private childStatus: Status = OK_STATUS;

  constructor(
    private readonly helper: Helper,
    registry: PolicyLookup,
  ) {
    super();
    const recorder = {
      recordCall: (key: string, status: Status) => this.byAddress.get(key)?.recordCall(status.code === 0),
      released: (s: EjectableSubchannel) => {
        const set = this.subchannels.get(s.key);
        if (set?.delete(s) && set.size === 0) this.subchannels.delete(s.key);
      },
    };
    this.child = new ChildPolicy(
      childHelper(helper, {
        // One child: whether its exitIdle() would wake anything is ours to say too.
        updateWakeable: (wakeable) => helper.updateWakeable?.(wakeable),
        createSubchannel: (address, attributes) => {
          const s = new EjectableSubchannel(helper.createSubchannel(address, attributes), recorder);
          let set = this.subchannels.get(s.key);
          if (!set) {
            set = new Set();
            this.subchannels.set(s.key, set);
          }
          set.add(s);
          if (this.byAddress.get(s.key)?.ejected) s.setEjected(true);
          return s;
        },
        updateState: (state, status, picker) => {
          this.childState = state;
          this.childStatus = status;
          const counting = this.config !== null && countsCalls(this.config);
          helper.updateState(state, status, new OutlierDetectionPicker(picker, counting));
        },
      }),
      registry,
    );
  }

  /** The live view (A50): which endpoints are ejected now, and the child below. */
  describe(): PolicyNode {
    const ejected: string[] = [];
    for (const [key, state] of this.byEndpoint) if (state.ejected) ejected.push(key);
    const child = this.child.describe(this.childState, this.childStatus);
    return {
      policy: OUTLIER_DETECTION,
      state: child.state,
      ...(child.status !== undefined && { status: child.status }),
      facts: {
        endpoints: this.byEndpoint.size,
        ejectedCount: this.ejectedCount,
        ejected,
        ...(this.config !== null && { maxEjectionPercent: this.config.maxEjectionPercent }),
      },
      children: [{ name: 'child', node: child }],
    };
  }

  get endpoints(): Iterable<EndpointOutlierState> {
    return this.byEndpoint.values();
  }
  get endpointCount(): number {
    return this.byEndpoint.size;
  }
  get maxEjectionPercent(): number {
    return this.config!.maxEjectionPercent;
  }
  random(): number {
    return this.helper.random();
  }

  update(update: LbUpdate<OutlierDetectionConfig>): boolean {
    const config = update.config;
    this.config = config;
    this.backendService = update.attributes[BACKEND_SERVICE_ARG] as string | undefined;
    if (update.endpoints.ok) this.setEndpoints(update.endpoints.value);
    this.applyTimerRules(config);
    return this.child.update(config.childPolicy, update.endpoints, update.attributes, update.resolutionNote);
  }

  /** A50 "When the outlier_detection LB policy receives an address update" (A61: keyed by endpoint). */
  private setEndpoints(endpoints: readonly Endpoint[]): void {
    const kept = new Map<string, EndpointOutlierState>();
    this.byAddress.clear();
    for (const e of endpoints) {
      const key = endpointKey(e);
      let state = kept.get(key);
      if (!state) {
        state = this.byEndpoint.get(key) ?? new EndpointOutlierState([]);
        kept.set(key, state);
      }
      state.addressKeys = e.addresses.map(addressKey);
      for (const a of state.addressKeys) this.byAddress.set(a, state);
    }
    this.byEndpoint.clear();
    let ejected = 0;
    for (const [key, state] of kept) {
      this.byEndpoint.set(key, state);
      if (state.ejected) ejected++;
    }
    this.ejectedCount = ejected;
    // A subchannel whose address now belongs to another endpoint (or none) takes that endpoint's state.
    for (const [key, set] of this.subchannels) {
      const ejectedNow = this.byAddress.get(key)?.ejected ?? false;
      for (const s of set) s.setEjected(ejectedNow);
    }
  }

  /** A50: the timer rules on a new config. */
  private applyTimerRules(config: OutlierDetectionConfig): void {
    if (!countsCalls(config)) {
      this.cancelTimer?.();
      this.cancelTimer = null;
      this.timerStartedAt = null;
      for (const state of this.byEndpoint.values()) {
        if (state.ejected) this.uneject(state);
        state.multiplier = 0;
      }
      return;
    }
    const now = this.helper.clock.now();
    let delay = config.intervalMs;
    if (this.timerStartedAt === null) {
      this.timerStartedAt = now;
      for (const state of this.byEndpoint.values()) state.resetCounters();
    } else {
      delay = Math.max(0, config.intervalMs - (now - this.timerStartedAt));
    }
    this.cancelTimer?.();
    this.cancelTimer = this.helper.clock.setTimer(delay, () => this.onInterval());
  }

  /** A50 "The outlier_detection LB policy will have a timer…": steps 1–5, then the next interval. */
  private onInterval(): void {
    if (this.destroyed || this.config === null) return;
    const config = this.config;
    const now = this.helper.clock.now();
    this.timerStartedAt = now;
    for (const state of this.byEndpoint.values()) state.swapBuckets();
    if (config.successRateEjection) runSuccessRateEjection(this, config.successRateEjection);
    if (config.failurePercentageEjection)
      runFailurePercentageEjection(this, config.failurePercentageEjection);
    const maxMs = Math.max(config.baseEjectionTimeMs, config.maxEjectionTimeMs);
    for (const state of this.byEndpoint.values()) {
      if (!state.ejected) {
        if (state.multiplier > 0) state.multiplier--;
      } else if (now >= state.ejectedAt! + Math.min(config.baseEjectionTimeMs * state.multiplier, maxMs)) {
        this.uneject(state);
      }
    }
    this.cancelTimer = this.helper.clock.setTimer(config.intervalMs, () => this.onInterval());
  }

  /** A50 "Ejection and Un-ejection". */
  eject(state: EndpointOutlierState, method: DetectionMethod): void {
    this.helper.metricsRecorder?.addCounter(EJECTIONS_ENFORCED, 1, this.metricLabels(method));
    if (!state.ejected) this.ejectedCount++;
    state.ejectedAt = this.timerStartedAt ?? this.helper.clock.now();
    state.multiplier++;
    this.helper.trace(() => `outlier_detection: ejecting endpoint [${state.addressKeys.join(', ')}]`);
    this.setEjected(state, true);
  }

  /** A91: an outlier left in place. */
  notEjected(method: DetectionMethod, reason: UnenforcedReason): void {
    const recorder = this.helper.metricsRecorder;
    if (recorder === undefined) return;
    recorder.addCounter(EJECTIONS_UNENFORCED, 1, {
      ...this.metricLabels(method),
      [UNENFORCED_REASON_LABEL]: reason,
    });
  }

  private metricLabels(method: DetectionMethod): MetricLabels {
    const labels: Record<string, string> = { [DETECTION_METHOD_LABEL]: method };
    if (this.backendService !== undefined) labels[BACKEND_SERVICE_LABEL] = this.backendService;
    return labels;
  }

  private uneject(state: EndpointOutlierState): void {
    if (state.ejected) this.ejectedCount--;
    state.ejectedAt = null;
    this.helper.trace(() => `outlier_detection: un-ejecting endpoint [${state.addressKeys.join(', ')}]`);
    this.setEjected(state, false);
  }

  private setEjected(state: EndpointOutlierState, ejected: boolean): void {
    for (const key of state.addressKeys) {
      const set = this.subchannels.get(key);
      if (set) for (const s of set) s.setEjected(ejected);
    }
  }

  protected override beforeChildDestroyed(): void {
    this.cancelTimer?.();
    this.cancelTimer = null;
  }
}

export const outlierDetectionFactory: PolicyFactory<OutlierDetectionConfig> = {
  name: OUTLIER_DETECTION,
  parseConfig: parseOutlierDetectionConfig,
  create: (helper, registry) => new OutlierDetection(helper, registry),
};
