import {
  type BackendMetricReport,
  type ChannelArgs,
  OK_STATUS,
  type PickArgs,
  type Registry,
  type Status,
  unavailable,
} from '../../core/index.js';
import { type PlainEndpoint, Simulation, type SubchannelHandle, seededRandom } from '../../sim/index.js';
import {
  type CallBehaviour,
  type Scenario,
  ScenarioError,
  type ScenarioEvent,
  type Selector,
} from './scenario.js';

/** What a timeline reports about one backend endpoint. */
export interface EndpointInfo {
  /** The first address: how the endpoint is named in reports. */
  readonly name: string;
  readonly addresses: readonly string[];
  readonly locality: string;
  /** `priority 0`, `priority 1`, …: the endpoint's place in the priority list, as reports show it. */
  readonly priority: string;
  /** The priority child the endpoint belongs to (the first element of its hierarchical path). */
  readonly priorityChild: string;
  /** The xDS cluster the endpoint belongs to (a replayed xDS recording's endpoints). */
  readonly cluster?: string;
}

export interface Step {
  readonly atMs: number;
  readonly state: string;
  /** Completed picks per endpoint name during the step. */
  readonly picks: ReadonlyMap<string, number>;
  readonly queued: number;
  readonly failed: number;
  /** Calls xds_cluster_impl dropped, per EDS drop category (A37 drop_overloads). */
  readonly dropped: ReadonlyMap<string, number>;
  /** Calls xds_cluster_impl refused by circuit breaking (max_requests in flight, A37). */
  readonly refused: number;
  /** Calls that reached a backend and failed there (the scenario's `errors` events). */
  readonly errors: number;
}

export interface SimulationReport {
  readonly endpoints: readonly EndpointInfo[];
  readonly steps: readonly Step[];
  readonly events: readonly (ScenarioEvent & { readonly addresses: readonly string[] })[];
}

/** `{region=us-east1,zone=us-east1-a,sub_zone=}` → `us-east1/us-east1-a`, for readable reports. */
function shortLocality(locality: string | undefined): string {
  if (locality === undefined) return '(none)';
  const m = /^\{region=(.*),zone=(.*),sub_zone=(.*)\}$/.exec(locality);
  return m ? m.slice(1).filter(Boolean).join('/') || '(default)' : locality;
}

/** The priority list of the first priority policy in an LB config (children in priority order), or []. */
export function priorityOrder(config: unknown): readonly string[] {
  if (Array.isArray(config)) {
    for (const c of config) {
      const found = priorityOrder(c);
      if (found.length > 0) return found;
    }
    return [];
  }
  if (typeof config !== 'object' || config === null) return [];
  const priority = (config as Record<string, { priorities?: unknown }>).priority_experimental;
  if (Array.isArray(priority?.priorities)) return priority.priorities.map(String);
  for (const value of Object.values(config)) {
    const found = priorityOrder(value);
    if (found.length > 0) return found;
  }
  return [];
}

export function describeEndpoints(
  endpoints: readonly PlainEndpoint[],
  priorities: readonly string[] = [],
): EndpointInfo[] {
  return endpoints.map((e) => {
    const child = e.attributes?.path?.[0] ?? '(none)';
    const index = priorities.indexOf(child);
    return {
      name: e.addresses[0]!,
      addresses: e.addresses,
      locality: shortLocality(e.attributes?.locality),
      priority: index >= 0 ? `priority ${index}` : child,
      priorityChild: child,
    };
  });
}

/** A locality is named by its full key or by any one of its parts (region, zone or sub-zone). */
function localityMatches(locality: string, name: string): boolean {
  return locality === name || locality.split(/[^A-Za-z0-9_.-]+/).includes(name);
}

function select(endpoints: readonly EndpointInfo[], target: Selector): EndpointInfo[] {
  return endpoints.filter(
    (e) =>
      (target.endpoint !== undefined && e.addresses.includes(target.endpoint)) ||
      (target.locality !== undefined && localityMatches(e.locality, target.locality)) ||
      (target.priority !== undefined &&
        [e.priorityChild, e.priority].some(
          (name) => name === target.priority || name === `priority ${target.priority}`,
        )),
  );
}

/** Every event must select at least one endpoint: a misspelled locality would otherwise do nothing. */
function checkTargets(endpoints: readonly EndpointInfo[], events: readonly ScenarioEvent[]): void {
  for (const event of events) {
    if (select(endpoints, event.target).length > 0) continue;
    const [kind, name] = Object.entries(event.target)[0]!;
    const known =
      kind === 'endpoint'
        ? endpoints.flatMap((e) => e.addresses)
        : kind === 'locality'
          ? endpoints.map((e) => e.locality)
          : endpoints.map((e) => e.priority.replace('priority ', ''));
    throw new ScenarioError(
      `${event.path}.${event.action}.${kind}: no ${kind} ${JSON.stringify(name)} in the endpoints (have: ${[...new Set(known)].join(', ')})`,
    );
  }
}

/** What one backend's calls return now: the status and the per-call load report. */
interface Backend {
  errorRate: number;
  report: BackendMetricReport | undefined;
  readonly failure: Status;
}

function loadReport(utilization: number, qps: number, errorRate: number): BackendMetricReport {
  return {
    cpuUtilization: utilization,
    memUtilization: 0,
    applicationUtilization: 0,
    rpsFractional: qps,
    // An erroring backend reports its errors per second too (A58's error_utilization_penalty reads them).
    eps: qps * errorRate,
    utilization: {},
    requestCost: {},
    namedMetrics: {},
  };
}

function changeCalls(backend: Backend, calls: CallBehaviour): void {
  if (calls.errorRate !== undefined) backend.errorRate = calls.errorRate;
  if (calls.utilization !== undefined)
    backend.report = loadReport(calls.utilization, calls.qps ?? 100, backend.errorRate);
  else if (backend.report)
    backend.report = loadReport(
      backend.report.cpuUtilization,
      backend.report.rpsFractional,
      backend.errorRate,
    );
}

const NO_METADATA: PickArgs['metadata'] = { get: () => [] };

/**
 * Runs a policy tree in the simulator under a steady request rate and the scenario's events, recording
 * where picks go in each step. Every request carries a random 64-bit hash, so ring_hash trees spread too.
 */
export function runScenario(
  tree: {
    readonly config: unknown;
    readonly endpoints: readonly PlainEndpoint[];
    readonly attributes?: ChannelArgs;
  },
  scenario: Scenario,
  registry?: Registry,
): SimulationReport {
  const sim = new Simulation({ seed: scenario.seed, ...(registry ? { registry } : {}) });
  const endpoints = describeEndpoints(tree.endpoints, priorityOrder(tree.config));
  checkTargets(endpoints, scenario.events);
  const byAddress = new Map<string, EndpointInfo>();
  for (const e of endpoints) for (const a of e.addresses) byAddress.set(a, e);
  for (const a of byAddress.keys()) sim.script(a, { connectAfterMs: scenario.connectMs });
  if (!sim.update(tree.endpoints, tree.config, { ...scenario.settings, ...tree.attributes })) {
    throw new Error(
      `the policy tree rejected the cluster: ${sim.lastConfigError?.message ?? sim.status.details}`,
    );
  }
  const random = seededRandom(scenario.seed ^ 0x5eed);
  // A stream of its own, so that failing calls leave the request hashes as they were.
  const callRandom = seededRandom(scenario.seed ^ 0xca11);
  const backends = new Map<string, Backend>();
  for (const a of byAddress.keys())
    backends.set(a, {
      errorRate: 0,
      report: undefined,
      failure: unavailable(`${a}: the call failed (scenario errors)`),
    });
  const hash = () => (BigInt(Math.floor(random() * 2 ** 32)) << 32n) | BigInt(Math.floor(random() * 2 ** 32));
  const intervalMs = 1000 / scenario.rps;
  const steps: Step[] = [];
  const applied: SimulationReport['events'][number][] = [];
  let nextEvent = 0;
  let nextPickAt = 0;
  for (let stepStart = 0; stepStart < scenario.durationMs; stepStart += scenario.stepMs) {
    const stepEnd = Math.min(stepStart + scenario.stepMs, scenario.durationMs);
    const picks = new Map<string, number>();
    let queued = 0;
    let failed = 0;
    let refused = 0;
    const dropped = new Map<string, number>();
    let errors = 0;
    while (nextPickAt < stepEnd) {
      while (nextEvent < scenario.events.length && scenario.events[nextEvent]!.atMs <= nextPickAt) {
        const event = scenario.events[nextEvent++]!;
        sim.advance(Math.max(0, event.atMs - sim.now));
        const addresses = select(endpoints, event.target).flatMap((e) => e.addresses);
        if (event.calls) for (const a of addresses) changeCalls(backends.get(a)!, event.calls);
        else apply(sim, event, addresses, scenario.connectMs);
        applied.push({ ...event, addresses });
      }
      sim.advance(Math.max(0, nextPickAt - sim.now));
      const result = sim.picker.pick({ metadata: NO_METADATA, hash: hash() });
      sim.flush();
      if (result.type === 'complete') {
        const address = (result.subchannel as SubchannelHandle).key;
        const name = byAddress.get(address)?.name ?? address;
        picks.set(name, (picks.get(name) ?? 0) + 1);
        // The call ends at once, with the status and load report its backend gives now.
        const backend = backends.get(address);
        const fails = backend !== undefined && backend.errorRate > 0 && callRandom() < backend.errorRate;
        if (fails) errors++;
        result.onCallStarted?.();
        const end = () =>
          result.onCallEnded?.(fails ? backend.failure : OK_STATUS, { backendMetrics: backend?.report });
        // A call that takes time stays in flight (circuit breaking counts it) until its end on the clock.
        if (scenario.callMs > 0) sim.clock.setTimer(scenario.callMs, end);
        else end();
        sim.flush();
      } else if (result.type === 'queue') queued++;
      else if (result.type === 'drop' && result.dropReason !== undefined) {
        if ('category' in result.dropReason) {
          const category = result.dropReason.category;
          dropped.set(category, (dropped.get(category) ?? 0) + 1);
        } else refused++;
      } else failed++;
      nextPickAt += intervalMs;
    }
    sim.advance(Math.max(0, stepEnd - sim.now));
    steps.push({ atMs: stepStart, state: sim.state, picks, queued, failed, dropped, refused, errors });
  }
  sim.destroy();
  return { endpoints, steps, events: applied };
}

/** Makes the backends behind `addresses` fail, hang, recover or change health from now on. */
function apply(sim: Simulation, event: ScenarioEvent, addresses: readonly string[], connectMs: number): void {
  for (const address of addresses) {
    const fake = sim.findSubchannel(address);
    const live = fake && !fake.released ? fake : undefined;
    switch (event.action) {
      case 'fail':
      case 'hang':
        sim.script(
          address,
          event.action === 'fail' ? { failAfterMs: 5, details: `${address}: connection refused` } : 'hang',
        );
        // An established connection drops; one being set up fails.
        if (live?.state === 'READY') live.setState('IDLE');
        else if (live?.state === 'CONNECTING') live.setState('TRANSIENT_FAILURE');
        break;
      case 'recover':
        sim.script(address, { connectAfterMs: connectMs });
        // A hanging attempt gives up, and backoff is cut short so the backend is retried now.
        if (live?.state === 'CONNECTING') live.setState('TRANSIENT_FAILURE');
        live?.resetBackoff();
        break;
      case 'unhealthy':
        live?.setHealth('TRANSIENT_FAILURE');
        break;
      case 'healthy':
        live?.setHealth('READY');
        break;
    }
  }
  sim.flush();
}
