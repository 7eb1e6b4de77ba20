// `lbtree simulate --replay FILE`: a flight recording (docs/recording-format.md) replayed in the simulator.
// The tree is rebuilt from the recorded updates (or under another config), the recorded inputs are played at
// their times in virtual time — updates, each connection's states scripted onto the fake subchannels, and the
// recorded picks of each interval spread evenly over it, each endpoint's calls failing at its recorded error
// rate — and what the channel did (recorded) is set beside what the simulated tree does. On an xDS channel
// each call carries the cluster the channel's config selector chose for it, as the recording counted them
// (replay-routes.ts), and the calls recorded by class (path and routed-on headers) are routed and hashed again
// by lbtree's config selector over the recorded routes (replay-selector.ts): a ring_hash tree places them by
// the hashes the channel computed.
//
// Decisions the tree makes from the calls themselves (outlier ejection, weighted_round_robin's weights) are
// not scripted: the simulated tree makes them again from the replayed call outcomes, on timers that run as
// late as the channel's did (a busy process runs a 1 s timer some milliseconds late, and the drift adds up).

import {
  Code,
  type ConnectivityState,
  completeBackendMetricReport,
  type PickArgs,
  status,
  unavailable,
} from '../../core/index.js';
import type { CallsEvent, RecordedEvent, Recording, RoutePicks } from '../../recorder/index.js';
import { type FakeSubchannel, Simulation, type SubchannelHandle, seededRandom } from '../../sim/index.js';
import { XDS_CLUSTER_CALL_ATTRIBUTE } from '../../xds/call-attributes.js';
import { clusterChildName } from '../../xds/resolver/config-selector.js';
import { clusterOfCall, isCallClass, routeSchedule } from './replay-routes.js';
import { ReplaySelector } from './replay-selector.js';
import { addressesOfCluster, ReplayError, ReplayTreeBuilder } from './replay-tree.js';
import {
  describeEndpoints,
  type EndpointInfo,
  priorityOrder,
  type SimulationReport,
  type Step,
} from './run-scenario.js';

export { ReplayError } from './replay-tree.js';

export interface ReplayOptions {
  /** Another LB config: the root's for a plain recording, every cluster's endpoint-picking policy for xDS. */
  readonly config?: unknown;
  /** The one xDS cluster to replay (its calls only); default: every cluster the channel's routes sent calls to. */
  readonly cluster?: string;
  readonly seed?: number;
}

/** The recorded and the simulated picture, step by step (one step per second, or per interval if longer). */
export interface ReplayReport {
  readonly stepMs: number;
  readonly endpoints: readonly EndpointInfo[];
  /** What the channel did: picks per endpoint, the root's state at each step's end. */
  readonly recorded: SimulationReport;
  /** What the simulated tree did with the same inputs. */
  readonly simulated: SimulationReport;
  /** The root's states in order, repeats left out. */
  readonly recordedStates: readonly string[];
  readonly simulatedStates: readonly string[];
  /** The xDS cluster replayed: the one chosen, or the only one the channel routed to (xDS recordings). */
  readonly cluster: string | undefined;
  /** The root LB config of the last tree the replay ran. */
  readonly config: unknown;
  /** xDS: each replayed cluster's endpoint-picking policy, in the last tree the replay ran. */
  readonly clusterPolicies: Readonly<Record<string, unknown>> | undefined;
  /** xDS recordings with routes: how the replayed calls were routed and hashed. */
  readonly routing: RoutingCounts | undefined;
}

/** How a replay of an xDS recording routed its calls. */
export interface RoutingCounts {
  /** Calls replayed with their recorded path and headers, routed and hashed by the config selector. */
  readonly classified: number;
  /** Of those, the calls the selector matched to the route the recording counted them under. */
  readonly sameRoute: number;
  /** Calls with a route but no class (beyond the recorder's bound, or an older file): a random hash. */
  readonly unclassified: number;
}

/** Long enough that a fake subchannel never leaves TRANSIENT_FAILURE by itself: the recording drives it. */
const NEVER_MS = 2 ** 40;
const NO_METADATA: PickArgs['metadata'] = { get: () => [] };
/** How much later than the simulated tree a recorded tree may have set a timer (see recordedTimers). */
const SET_LAG_MS = 250;
const REPLAYED_ERROR = status(Code.INTERNAL, 'the call failed (recorded error rate)');

interface Counts {
  picks: Map<string, number>;
  queued: number;
  failed: number;
  errors: number;
}

const newCounts = (): Counts => ({ picks: new Map(), queued: 0, failed: 0, errors: 0 });

function toStep(atMs: number, state: string, c: Counts): Step {
  return {
    atMs,
    state,
    picks: c.picks,
    queued: c.queued,
    failed: c.failed,
    dropped: new Map(),
    refused: 0,
    errors: c.errors,
  };
}

/** What each endpoint's calls did in one recorded interval. */
interface IntervalLoad {
  readonly index: number;
  readonly errorRate: ReadonlyMap<string, number>;
  readonly cpu: ReadonlyMap<string, number>;
  readonly qps: ReadonlyMap<string, number>;
}

/** A replayed call: its interval's load, its cluster, and what a ring_hash picker reads of it. */
interface ReplayedCall {
  readonly load: IntervalLoad;
  readonly cluster: string | undefined;
  readonly inputs: { readonly hash: bigint; readonly metadata: PickArgs['metadata'] };
}

type Action =
  | { readonly at: number; readonly order: number; readonly event: Exclude<RecordedEvent, CallsEvent> }
  | {
      readonly at: number;
      readonly order: number;
      readonly load: IntervalLoad;
      /** The xDS route and cluster of the call, when the recording counted them. */
      readonly route: RoutePicks | undefined;
    };

function intervalLoad(index: number, calls: CallsEvent, intervalMs: number): IntervalLoad {
  const errorRate = new Map<string, number>();
  const cpu = new Map<string, number>();
  const qps = new Map<string, number>();
  for (const e of calls.endpoints) {
    if (e.calls > 0) errorRate.set(e.address, e.errors / e.calls);
    if (e.orcaReports > 0) {
      cpu.set(e.address, e.cpuUtilization);
      qps.set(e.address, (1000 * e.calls) / intervalMs);
    }
  }
  return { index, errorRate, cpu, qps };
}

/**
 * Runs the simulated tree's timers when the channel's ran. A recorded timer is found by its delay and the time
 * it was set: the same moment, or up to {@link SET_LAG_MS} later (the channel's tree took that long to build on
 * a busy process, where the simulated one builds at once); each is used once, and the simulated timer then
 * runs when the recorded one did.
 */
function recordedTimers(events: readonly RecordedEvent[]): (delayMs: number, now: number) => number {
  const byDelay = new Map<number, { setAt: number; at: number; used: boolean }[]>();
  for (const e of events) {
    if (e.type !== 'timer') continue;
    let list = byDelay.get(e.delayMs);
    if (list === undefined) {
      list = [];
      byDelay.set(e.delayMs, list);
    }
    list.push({ setAt: e.setAt, at: e.at, used: false });
  }
  for (const list of byDelay.values()) list.sort((a, b) => a.setAt - b.setAt);
  const first = new Map<number, number>();
  return (delayMs, now) => {
    const list = byDelay.get(delayMs);
    if (list === undefined) return 0;
    let i = first.get(delayMs) ?? 0;
    while (i < list.length && (list[i]!.used || list[i]!.setAt < now - 1.5)) i++;
    first.set(delayMs, i);
    for (let j = i; j < list.length && list[j]!.setAt <= now + SET_LAG_MS; j++) {
      if (!list[j]!.used) {
        list[j]!.used = true;
        return Math.max(0, list[j]!.at - now - delayMs);
      }
    }
    return 0;
  };
}

/**
 * `--xds-cluster NAME`: the `n` calls of an interval to that one cluster, each with its class where the recording
 * has one for the cluster (the calls the channel's routes sent there), the others without.
 */
function scopedSchedule(event: CallsEvent, n: number, cluster: string): (RoutePicks | undefined)[] {
  const child = clusterChildName(cluster);
  const classes = (event.callClasses ?? []).filter((c) => c.child === child);
  if (classes.length === 0) return routeSchedule(undefined, n);
  const rest = n - classes.reduce((a, c) => a + c.picks, 0);
  return routeSchedule([...classes, ...(rest > 0 ? [{ route: -1, child, picks: rest }] : [])], n);
}

const dedupe = (states: readonly string[]) => states.filter((s, i) => i === 0 || s !== states[i - 1]);

/** Replays a recording in the simulator; throws a {@link ReplayError} when it cannot be replayed. */
export function replayRecording(recording: Recording, options: ReplayOptions = {}): ReplayReport {
  const intervalMs = recording.header.intervalMs;
  const stepMs = 1000 * Math.max(1, Math.ceil(intervalMs / 1000));
  const endAt = Math.max(recording.endAt, 1);
  const stepCount = Math.ceil(endAt / stepMs);
  const builder = new ReplayTreeBuilder(options.config, options.cluster);
  const sim = new Simulation({ seed: options.seed ?? 1, backoffMs: NEVER_MS });
  sim.clock.lateness = recordedTimers(recording.events);
  const isXds = recording.events.some((e) => e.type === 'update' && e.xdsClusters !== undefined);
  if (isXds && options.config !== undefined) {
    // Every cluster runs it: refused once, with its path, rather than by each cluster's cds.
    try {
      sim.registry.parseLbConfigList(options.config, '$');
    } catch (e) {
      throw new ReplayError(`the tree rejected the given config: ${(e as Error).message}`);
    }
  }
  // One xDS cluster chosen: the calls to its endpoints are replayed, the other clusters' are not.
  const scope =
    isXds && options.cluster !== undefined
      ? addressesOfCluster(recording.events, options.cluster)
      : undefined;
  const inScope = (address: string) => scope === undefined || scope.has(address);

  // The recorded picture, straight from the file.
  const recordedCounts = Array.from({ length: stepCount }, newCounts);
  const actions: Action[] = [];
  let order = 0;
  let intervals = 0;
  for (const event of recording.events) {
    if (event.type !== 'calls') {
      actions.push({ at: event.at, order: order++, event });
      continue;
    }
    // An interval across a step boundary counts in each step for the part of it there.
    const span = Math.max(1, event.durationMs);
    for (let i = Math.floor(event.at / stepMs); i * stepMs < event.at + span && i < stepCount; i++) {
      const part = (Math.min(event.at + span, (i + 1) * stepMs) - Math.max(event.at, i * stepMs)) / span;
      const counts = recordedCounts[i]!;
      for (const e of event.endpoints) {
        if (!inScope(e.address)) continue;
        counts.picks.set(e.address, (counts.picks.get(e.address) ?? 0) + part * e.picks);
        counts.errors += part * e.errors;
      }
      if (scope === undefined) counts.failed += part * (event.failedPicks + event.droppedPicks);
    }
    // The interval's picks, spread evenly over it; on an xDS channel, each with its recorded route and cluster.
    const load = intervalLoad(intervals++, event, span);
    const n =
      event.endpoints.reduce((a, e) => a + (inScope(e.address) ? e.picks : 0), 0) +
      (scope === undefined ? event.failedPicks + event.droppedPicks : 0);
    const routes =
      scope === undefined
        ? routeSchedule(event.routes, n, event.callClasses)
        : scopedSchedule(event, n, options.cluster!);
    for (let i = 0; i < n; i++)
      actions.push({ at: event.at + ((i + 0.5) * span) / n, order: order++, load, route: routes[i] });
  }
  // Events before picks at the same moment (a state change recorded at t applies to the calls at t).
  actions.sort((a, b) => a.at - b.at || ('event' in b ? 1 : 0) - ('event' in a ? 1 : 0) || a.order - b.order);

  const endpoints = new Map<string, EndpointInfo>();
  const nameOf = new Map<string, string>();
  const recordedState = new Map<string, { state: ConnectivityState; details: string | undefined }>();
  const synced = new WeakSet<FakeSubchannel>();
  let created = -1;
  let treeConfig: unknown;
  let clusterPolicies: Readonly<Record<string, unknown>> | undefined;
  /** xDS trees replaying every routed cluster: the only cluster the channel routed to, if one. */
  let routing: { readonly onlyCluster?: string } | undefined;
  let routedCluster: string | undefined;
  let started = false;
  // A fake made after its address's recorded state changed starts where the recording says it is.
  const syncNewFakes = () => {
    if (sim.subchannelsCreated === created) return;
    created = sim.subchannelsCreated;
    for (const [address, fake] of sim.subchannels) {
      if (synced.has(fake) || fake.released) continue;
      synced.add(fake);
      const recorded = recordedState.get(address);
      if (recorded && recorded.state !== 'IDLE' && recorded.state !== fake.state) {
        setState(fake, recorded.state, recorded.details);
      }
    }
  };

  const simCounts = Array.from({ length: stepCount }, newCounts);
  const simStates: string[] = [];
  const recordedStepStates: string[] = [];
  let recordedRootState = '(none)';
  const recordedStates: string[] = [];
  let step = 0;
  const closeStepsBefore = (at: number) => {
    while (step < stepCount && (step + 1) * stepMs <= at) {
      sim.advance(Math.max(0, (step + 1) * stepMs - sim.now));
      syncNewFakes();
      simStates.push(started ? sim.state : '(none)');
      recordedStepStates.push(recordedRootState);
      step++;
    }
  };

  const random = seededRandom((options.seed ?? 1) ^ 0x5eed);
  // The cluster (xds_cluster_manager child) of the call being picked, as a config selector hands it down.
  let callCluster: string | undefined;
  const callAttributes = {
    get: (key: unknown) => (key === XDS_CLUSTER_CALL_ATTRIBUTE ? callCluster : undefined),
  };
  const hash = () => (BigInt(Math.floor(random() * 2 ** 32)) << 32n) | BigInt(Math.floor(random() * 2 ** 32));
  // The config selector's own draws (runtime_fraction, weighted_clusters, hashes of calls no policy hashed).
  const selectorRandom = seededRandom((options.seed ?? 1) ^ 0x5e1ec7);
  let selector: ReplaySelector | undefined;
  const routingCounts = { classified: 0, sameRoute: 0, unclassified: 0 };
  const lastRate = new Map<string, number>();
  const errorCredit = new Map<string, number>();
  let loadIndex = -1;

  /**
   * The cluster_manager child of a new call on an xDS tree (the one recorded for it), null when it has none
   * (the call fails, counted here); undefined on other trees.
   */
  const routeCall = (route: RoutePicks | undefined): string | undefined | null => {
    if (routing === undefined) return undefined;
    const child = clusterOfCall(route, routing.onlyCluster);
    if (child !== undefined) return child;
    simCounts[Math.min(stepCount - 1, step)]!.failed++;
    return null;
  };
  /** A new call's request hash and metadata: its class's, routed again; else a random hash. */
  const callInputs = (route: RoutePicks | undefined): ReplayedCall['inputs'] => {
    if (route === undefined) return { hash: hash(), metadata: NO_METADATA };
    if (isCallClass(route) && selector !== undefined) {
      const routed = selector.route(route);
      routingCounts.classified++;
      if (routed.sameRoute) routingCounts.sameRoute++;
      return routed;
    }
    routingCounts.unclassified++;
    return { hash: hash(), metadata: NO_METADATA };
  };
  /** The picker the last call was picked with (a pick that queues may publish the next one at once). */
  let pickedWith = sim.picker;
  /** Makes one call; false when the picker queued it. */
  const pick = (load: IntervalLoad, cluster: string | undefined, inputs: ReplayedCall['inputs']): boolean => {
    const counts = simCounts[Math.min(stepCount - 1, step)]!;
    callCluster = cluster;
    pickedWith = sim.picker;
    const result = sim.picker.pick({ metadata: inputs.metadata, hash: inputs.hash, callAttributes });
    sim.flush();
    syncNewFakes();
    if (result.type === 'queue') return false;
    if (result.type !== 'complete') {
      counts.failed++;
      return true;
    }
    const address = (result.subchannel as SubchannelHandle).key;
    counts.picks.set(address, (counts.picks.get(address) ?? 0) + 1);
    // Error diffusion: an endpoint's calls fail at its recorded rate, deterministically. The credit starts at
    // one half, so n calls at rate r fail round(r·n) times, not floor(r·n): 2 errors in 32 recorded calls are
    // 2 in 31 replayed ones, and an ejection decided by them falls in the same interval.
    const credit =
      (errorCredit.get(address) ?? 0.5) + (load.errorRate.get(address) ?? lastRate.get(address) ?? 0);
    const fails = credit >= 1 - 1e-9;
    errorCredit.set(address, fails ? credit - 1 : credit);
    if (fails) counts.errors++;
    const cpu = load.cpu.get(address);
    result.onCallStarted?.();
    result.onCallEnded?.(fails ? REPLAYED_ERROR : { code: Code.OK, details: '' }, {
      backendMetrics:
        cpu === undefined
          ? undefined
          : completeBackendMetricReport({ cpuUtilization: cpu, rpsFractional: load.qps.get(address) ?? 0 }),
    });
    sim.flush();
    return true;
  };
  // Queued calls are picked again with each new picker, as a channel does: they complete when it serves,
  // each in the cluster chosen for it, with the same hash (A42).
  let queued: ReplayedCall[] = [];
  let queuedFor = sim.picker;
  const retryQueued = () => {
    if (queued.length === 0 || sim.picker === queuedFor) return;
    queuedFor = sim.picker;
    queued = queued.filter((q) => {
      if (pick(q.load, q.cluster, q.inputs)) return false;
      queuedFor = pickedWith;
      return true;
    });
  };

  for (const action of actions) {
    closeStepsBefore(action.at);
    sim.advance(Math.max(0, action.at - sim.now));
    if ('event' in action) {
      const event = action.event;
      switch (event.type) {
        case 'update': {
          const tree = builder.build(event);
          if (event.error !== undefined && event.xdsClusters === undefined) {
            if (started) sim.updateError(unavailable(event.error.details));
            break;
          }
          for (const a of tree.addresses) sim.script(a, 'hang');
          // An xDS tree may report a cluster it cannot use yet (no endpoints): that is replayed, not refused.
          const accepted = sim.update(tree.endpoints, tree.config, tree.attributes);
          if (!accepted && !started && (tree.routing === undefined || sim.lastConfigError !== undefined)) {
            throw new ReplayError(
              `the tree rejected the ${options.config === undefined ? 'recorded' : 'given'} config: ${sim.lastConfigError?.message ?? sim.status.details}`,
            );
          }
          started = true;
          treeConfig = tree.config;
          clusterPolicies = tree.clusterPolicies;
          routing = tree.routing;
          if (event.xdsClusters !== undefined) selector = ReplaySelector.of(event, selectorRandom);
          routedCluster = tree.routing?.onlyCluster ?? routedCluster;
          for (const info of tree.endpointInfos ??
            describeEndpoints(tree.endpoints, priorityOrder(tree.config))) {
            endpoints.set(info.name, info);
            for (const a of info.addresses) nameOf.set(a, info.name);
          }
          break;
        }
        case 'subchannel': {
          recordedState.set(event.address, { state: event.state, details: event.details });
          const fake = sim.findSubchannel(event.address);
          if (fake && !fake.released && fake.state !== event.state)
            setState(fake, event.state, event.details);
          break;
        }
        case 'health': {
          const fake = sim.findSubchannel(event.address);
          if (fake && !fake.released) fake.setHealth(event.healthy ? 'READY' : 'TRANSIENT_FAILURE');
          break;
        }
        case 'picker':
          recordedRootState = event.state;
          recordedStates.push(event.state);
          break;
        case 'timer':
        case 'switch':
          break;
      }
      syncNewFakes();
      retryQueued();
      continue;
    }
    const load = action.load;
    if (load.index !== loadIndex) {
      loadIndex = load.index;
      for (const [a, rate] of load.errorRate) lastRate.set(a, rate);
    }
    retryQueued();
    if (!started) {
      simCounts[Math.min(stepCount - 1, step)]!.queued++;
      continue;
    }
    const cluster = routeCall(action.route);
    if (cluster === null) continue;
    const inputs = callInputs(action.route);
    if (!pick(load, cluster, inputs)) {
      simCounts[Math.min(stepCount - 1, step)]!.queued++;
      queued.push({ load, cluster, inputs });
      queuedFor = pickedWith;
    }
  }
  closeStepsBefore(stepCount * stepMs);
  const simulatedStates = dedupe(sim.history.map((h) => h.state));
  sim.destroy();

  const byName = (counts: Counts): Counts => {
    const picks = new Map<string, number>();
    for (const [a, n] of counts.picks) {
      const name = nameOf.get(a) ?? a;
      picks.set(name, (picks.get(name) ?? 0) + n);
    }
    return { ...counts, picks };
  };
  const infos = [...endpoints.values()];
  // Addresses the recording has calls for but no update named (a plain channel's own) are endpoints too.
  for (const c of recordedCounts)
    for (const a of c.picks.keys())
      if (!nameOf.has(a)) {
        nameOf.set(a, a);
        infos.push({
          name: a,
          addresses: [a],
          locality: '(none)',
          priority: '(none)',
          priorityChild: '(none)',
        });
      }
  const report = (counts: Counts[], states: string[]): SimulationReport => ({
    endpoints: infos,
    steps: counts.map((c, i) => toStep(i * stepMs, states[i] ?? '(none)', byName(c))),
    events: [],
  });
  return {
    stepMs,
    endpoints: infos,
    recorded: report(recordedCounts, recordedStepStates),
    simulated: report(simCounts, simStates),
    recordedStates: dedupe(recordedStates),
    simulatedStates,
    cluster: builder.cluster ?? (isXds ? routedCluster : undefined),
    config: treeConfig,
    clusterPolicies,
    routing: routingCounts.classified + routingCounts.unclassified > 0 ? routingCounts : undefined,
  };
}

function setState(fake: FakeSubchannel, state: ConnectivityState, details: string | undefined): void {
  fake.setState(
    state,
    state === 'TRANSIENT_FAILURE' ? unavailable(`${fake.key}: ${details ?? 'connection failed'}`) : undefined,
  );
}
