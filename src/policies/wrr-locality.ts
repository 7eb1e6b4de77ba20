import {
  type Attributes,
  addressKey,
  CONNECTING,
  ConfigError,
  ConfigReader,
  type ConnectivityState,
  childHelper,
  type Endpoint,
  FailPicker,
  type Helper,
  type LbUpdate,
  LOCALITY,
  LOCALITY_WEIGHT,
  type LoadBalancer,
  MAX_UINT32,
  OK_STATUS,
  type ParsedLbConfig,
  type Picker,
  type PolicyFactory,
  type PolicyLookup,
  type PolicyNode,
  type Status,
  TRANSIENT_FAILURE,
  type Trace,
  unavailable,
  workMeter,
} from '../core/index.js';
import { ChildPolicy } from './shared/child-policy.js';
import { LastUpdate } from './shared/last-update.js';
import { SingleChildPolicy } from './shared/single-child-policy.js';
import {
  WEIGHTED_TARGET,
  type WeightedTargetChildConfig,
  type WeightedTargetConfig,
} from './weighted-target/index.js';

export const WRR_LOCALITY = 'xds_wrr_locality_experimental';

/** A52 `XdsWrrLocalityLoadBalancingPolicyConfig`: the endpoint picking policy every locality runs. */
export interface WrrLocalityConfig {
  readonly childPolicy: ParsedLbConfig;
}

/** Parses `{ childPolicy: [...] }` (or `child_policy`), validating the child policy list now. */
export function parseWrrLocalityConfig(
  json: unknown,
  path: string,
  registry: PolicyLookup,
): WrrLocalityConfig {
  const reader = new ConfigReader(json, path);
  const childPolicy = reader.required('childPolicy');
  const parsed = registry.parseLbConfigList(childPolicy.value, childPolicy.path);
  if (registry.get(WEIGHTED_TARGET) === undefined) {
    throw new ConfigError(path, `${WRR_LOCALITY} delegates to ${WEIGHTED_TARGET}, which is not registered`);
  }
  return { childPolicy: parsed };
}

/** A locality weight weighted_target can use: a uint32 of at least 1 (0 means "no weight", as in C-core). */
function usableWeight(weight: number | undefined): weight is number {
  return weight !== undefined && Number.isInteger(weight) && weight >= 1 && weight <= MAX_UINT32;
}

/**
 * The locality whose target an endpoint goes to (A52), or undefined when it has no locality or no usable
 * locality weight (then it is dropped). weighted_target deals the endpoints by it, each as it is: no path is
 * prepended per endpoint only for weighted_target to peel it off again, so each locality's policy sees the
 * endpoint's own attributes.
 */
export function localityOf(e: Endpoint): string | undefined {
  const locality = e.attributes.get(LOCALITY);
  return locality !== undefined && usableWeight(e.attributes.get(LOCALITY_WEIGHT)) ? locality : undefined;
}

/** What {@link groupByLocality} makes of an endpoint list. */
export interface LocalityGroups {
  /** Each locality's weight (the first one seen), in first-seen order. */
  readonly weights: ReadonlyMap<string, number>;
  /** How many endpoints had no locality or no usable locality weight (see {@link localityOf}): left out. */
  readonly dropped: number;
}

// How many dropped endpoints a trace line names before it only counts them.
const TRACE_EXAMPLES = 3;

/**
 * A52 "xDS WRR Locality Load Balancer": reads each endpoint's locality and locality weight. A locality seen
 * with several weights keeps the first ("just use the weight in the first attribute we encounter") and the
 * others are traced as a warning; endpoints without a locality or a usable weight are dropped, with a trace.
 * Linear: endpoints sharing one Attributes object (a resolver builds one per locality) are read once.
 */
export function groupByLocality(endpoints: readonly Endpoint[], trace: Trace): LocalityGroups {
  const weights = new Map<string, number>();
  let dropped = 0;
  const droppedExamples: string[] = [];
  let conflicts: Map<string, Set<number>> | undefined;
  let lastIn: Attributes | undefined;
  let kept = false;
  workMeter.visits += endpoints.length;
  for (let i = 0; i < endpoints.length; i++) {
    const e = endpoints[i]!;
    const attributes = e.attributes;
    if (attributes !== lastIn) {
      lastIn = attributes;
      // localityOf, with the weight read once.
      const locality = attributes.get(LOCALITY);
      const weight = attributes.get(LOCALITY_WEIGHT);
      kept = locality !== undefined && usableWeight(weight);
      if (kept) {
        const first = weights.get(locality!);
        if (first === undefined) {
          weights.set(locality!, weight!);
        } else if (first !== weight) {
          conflicts ??= new Map();
          let discarded = conflicts.get(locality!);
          if (discarded === undefined) {
            discarded = new Set();
            conflicts.set(locality!, discarded);
          }
          discarded.add(weight!);
        }
      }
    }
    if (!kept) {
      dropped++;
      if (dropped <= TRACE_EXAMPLES) droppedExamples.push(describe(e));
    }
  }
  if (conflicts !== undefined) traceConflicts(trace, weights, conflicts);
  if (dropped > 0) traceDropped(trace, dropped, droppedExamples);
  return { weights, dropped };
}

// The traces are functions of their own: a closure in groupByLocality capturing its locals would make V8 keep
// them in a heap context, so its per-endpoint loop would read and write them there instead of in registers.

function traceConflicts(
  trace: Trace,
  weights: ReadonlyMap<string, number>,
  conflicts: ReadonlyMap<string, ReadonlySet<number>>,
): void {
  for (const [locality, discarded] of conflicts) {
    trace(
      () =>
        `${WRR_LOCALITY}: warning: locality ${locality} has weight ${weights.get(locality)} and also ` +
        `${[...discarded].join(', ')}; using the first, ${weights.get(locality)}`,
    );
  }
}

function traceDropped(trace: Trace, dropped: number, examples: readonly string[]): void {
  trace(
    () =>
      `${WRR_LOCALITY}: dropped ${dropped} endpoint(s) without a locality and locality weight: ` +
      `${examples.join(', ')}${dropped > TRACE_EXAMPLES ? ', ...' : ''}`,
  );
}

function describe(e: Endpoint): string {
  const first = e.addresses[0];
  return `${first === undefined ? '(no address)' : addressKey(first)} ${e.attributes.toString()}`;
}

/**
 * The weighted_target_experimental config A52 asks for: one target per locality, each running `child`, and each
 * endpoint going to its locality's target ({@link localityOf}). The targets are a view over the locality
 * weights, made in O(1): no second map of every locality is built (and kept live through weighted_target's
 * whole update) on the way down; each target's config is made when weighted_target reads it.
 */
export function weightedTargetConfigFor(
  weights: ReadonlyMap<string, number>,
  child: ParsedLbConfig,
): WeightedTargetConfig {
  return { targets: new LocalityTargets(weights, child), childOf: localityOf };
}

/**
 * The targets of {@link weightedTargetConfigFor}: a read-only map from locality name to target config. Targets of
 * equal weight share one config object (every locality runs the same child policy): a locality per endpoint
 * makes a handful of them, not one per locality per update.
 */
class LocalityTargets implements ReadonlyMap<string, WeightedTargetChildConfig> {
  private readonly byWeight = new Map<number, WeightedTargetChildConfig>();

  constructor(
    private readonly weights: ReadonlyMap<string, number>,
    private readonly child: ParsedLbConfig,
  ) {}

  /** The last config made or found: localities of one weight often come in a row. */
  private last: WeightedTargetChildConfig | null = null;

  private configFor(weight: number): WeightedTargetChildConfig {
    if (this.last !== null && this.last.weight === weight) return this.last;
    let config = this.byWeight.get(weight);
    if (config === undefined) {
      config = Object.freeze({ weight, childPolicy: this.child });
      this.byWeight.set(weight, config);
    }
    this.last = config;
    return config;
  }

  get size(): number {
    return this.weights.size;
  }

  has(locality: string): boolean {
    return this.weights.has(locality);
  }

  get(locality: string): WeightedTargetChildConfig | undefined {
    const weight = this.weights.get(locality);
    return weight === undefined ? undefined : this.configFor(weight);
  }

  forEach(
    visit: (
      target: WeightedTargetChildConfig,
      locality: string,
      map: ReadonlyMap<string, WeightedTargetChildConfig>,
    ) => void,
    thisArg?: unknown,
  ): void {
    workMeter.visits += this.weights.size;
    this.weights.forEach((weight, locality) => {
      visit.call(thisArg, this.configFor(weight), locality, this);
    });
  }

  *entries(): MapIterator<[string, WeightedTargetChildConfig]> {
    for (const [locality, weight] of this.weights) yield [locality, this.configFor(weight)];
  }

  keys(): MapIterator<string> {
    return this.weights.keys();
  }

  *values(): MapIterator<WeightedTargetChildConfig> {
    for (const weight of this.weights.values()) yield this.configFor(weight);
  }

  [Symbol.iterator](): MapIterator<[string, WeightedTargetChildConfig]> {
    return this.entries();
  }
}

/**
 * xds_wrr_locality_experimental (gRFC A52): on each update, builds a weighted_target_experimental config from
 * the endpoints' locality weights, with the configured endpoint picking policy under every locality, and
 * delegates to one weighted_target child. Each endpoint reaches its locality's target as it is: the config
 * tells weighted_target to deal endpoints by locality (where a path element naming it would be prepended to
 * each endpoint's hierarchical path, A56, and peeled off again one level down).
 */
export class WrrLocality extends SingleChildPolicy implements LoadBalancer<WrrLocalityConfig> {
  protected readonly child: ChildPolicy;
  /** Locality weights of the last list that had any: a resolver error keeps them (and the child its list). */
  private weights: ReadonlyMap<string, number> | null = null;
  /** Set while the latest list gave no locality: our own failure is reported and the child's is not. */
  private noLocalities: Status | null = null;
  /** The child's latest report, passed up again when it comes out from under `noLocalities`. */
  private childState: ConnectivityState | null = null;
  private childStatus: Status | null = null;
  private childPicker: Picker | null = null;
  private childReports = 0;
  /** The last accepted update, so a re-delivery of it changes nothing. */
  private readonly lastUpdate = new LastUpdate<WrrLocalityConfig>();

  constructor(
    private readonly helper: Helper,
    private readonly registry: PolicyLookup,
  ) {
    super();
    this.child = new ChildPolicy(
      childHelper(helper, {
        // One child: whether its exitIdle() would wake anything is ours to say too.
        updateWakeable: (wakeable) => helper.updateWakeable?.(wakeable),
        updateState: (state, status, picker) => this.onChildReport(state, status, picker),
      }),
      registry,
    );
  }

  update(update: LbUpdate<WrrLocalityConfig>): boolean {
    if (this.destroyed) return false;
    const note = update.resolutionNote ? ` (${update.resolutionNote})` : '';
    if (!update.endpoints.ok) {
      this.lastUpdate.forget();
      if (this.weights === null) {
        // Nothing to serve from: say why.
        this.fail(unavailable(`name resolution failed: ${update.endpoints.status.details}${note}`));
        return false;
      }
      // The localities and endpoints already in hand keep serving; the error (and any new child policy
      // config) still goes down, as weighted_target passes errors on to its targets.
      return this.delegate(this.weights, update, update.endpoints);
    }
    const endpoints = update.endpoints.value;
    // The same list, config and settings again: weighted_target has every locality's share already. Nothing
    // to group, deal or pass on (a locality per endpoint made this 10,000 updates below us).
    if (this.lastUpdate.repeats(endpoints, update.config, update.attributes, update.resolutionNote)) {
      workMeter.visits += endpoints.length;
      return true;
    }
    const groups = groupByLocality(endpoints, this.helper.trace);
    if (groups.weights.size === 0) {
      const why =
        update.endpoints.value.length === 0
          ? 'empty endpoint list'
          : `none of ${update.endpoints.value.length} endpoint(s) has a locality and a locality weight`;
      // weighted_target still hears of it, so the localities go into its retention and come back with their
      // connections if the next list names them again; the status we report is ours.
      this.noLocalities = unavailable(`${WRR_LOCALITY}: ${why}${note}`);
      this.weights = groups.weights;
      this.delegate(groups.weights, update, update.endpoints);
      this.fail(this.noLocalities);
      this.lastUpdate.forget();
      return false;
    }
    this.weights = groups.weights;
    const accepted = this.delegate(groups.weights, update, update.endpoints);
    return this.lastUpdate.keep(accepted, endpoints, update.config, update.attributes, update.resolutionNote);
  }

  private delegate(
    weights: ReadonlyMap<string, number>,
    update: LbUpdate<WrrLocalityConfig>,
    endpoints: LbUpdate['endpoints'],
  ): boolean {
    const factory = this.registry.get(WEIGHTED_TARGET);
    if (factory === undefined) {
      // parseConfig checked; only a registry changed since could get here.
      this.fail(unavailable(`${WRR_LOCALITY}: ${WEIGHTED_TARGET} is not registered`));
      return false;
    }
    const parsed: ParsedLbConfig = {
      factory,
      config: weightedTargetConfigFor(weights, update.config.childPolicy),
    };
    const wasSuppressed = this.noLocalities !== null && weights.size > 0;
    if (weights.size > 0) this.noLocalities = null;
    const reportsBefore = this.childReports;
    const accepted = this.child.update(parsed, endpoints, update.attributes, update.resolutionNote);
    // Coming back from our own failure: if the child had nothing new to say, its last report stands again.
    if (wasSuppressed && this.childReports === reportsBefore && this.childState !== null) {
      this.helper.updateState(this.childState, this.childStatus!, this.childPicker!);
    }
    return accepted;
  }

  private onChildReport(state: ConnectivityState, status: Status, picker: Picker): void {
    if (this.destroyed) return;
    this.childState = state;
    this.childStatus = status;
    this.childPicker = picker;
    this.childReports++;
    if (this.noLocalities === null) this.helper.updateState(state, status, picker);
  }

  /** The live view: weighted_target below, with a target (and its weight) per locality. */
  describe(): PolicyNode {
    const child = this.child.describe(this.childState ?? CONNECTING, this.childStatus ?? OK_STATUS);
    const own = this.noLocalities;
    return {
      policy: WRR_LOCALITY,
      state: own !== null ? TRANSIENT_FAILURE : child.state,
      ...(own !== null
        ? { status: { code: own.code, details: own.details } }
        : child.status !== undefined && { status: child.status }),
      children: [{ name: WEIGHTED_TARGET, node: child }],
    };
  }

  private fail(status: Status): void {
    this.helper.requestReresolution();
    this.helper.updateState(TRANSIENT_FAILURE, status, new FailPicker(status));
  }
}

export const wrrLocalityFactory: PolicyFactory<WrrLocalityConfig> = {
  name: WRR_LOCALITY,
  parseConfig: (json, path, registry) => parseWrrLocalityConfig(json, path, registry),
  create: (helper, registry) => new WrrLocality(helper, registry),
};
