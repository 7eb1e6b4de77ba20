/**
 * The scenario file of `lbtree simulate` (YAML or JSON):
 *
 *   duration: 60s          # virtual time to run
 *   rps: 100               # requests per virtual second
 *   step: 1s               # timeline resolution
 *   connect: 20ms          # how long a healthy backend takes to connect
 *   call: 0ms              # how long each call stays in flight (circuit breaking counts calls in flight)
 *   seed: 1
 *   settings: { grpc.priority_failover_timeout_ms: 10000 }   # channel settings
 *   events:
 *     - { at: 10s, fail: { locality: zone-a } }       # fail | hang | recover | unhealthy | healthy
 *     - { at: 30s, recover: { locality: zone-a } }    # target: endpoint (an address), locality, or priority
 *     - { at: 5s, errors: { endpoint: "10.0.0.2:80", rate: 0.5 } }        # from now on half its calls fail
 *     - { at: 0s, report: { endpoint: "10.0.0.2:80", utilization: 0.4 } }  # ORCA per-call reports (A51)
 *   certificate_providers: [istio]   # instance names a cluster's UpstreamTlsContext may name (A29)
 *
 * The connection actions change how a backend's connections behave; `errors` and `report` change what its
 * calls return (each pick is a call that ends at once): a failure rate that outlier detection reacts to
 * (A50), and the load report — CPU utilization, optionally qps — that weighted_round_robin weighs (A58).
 * `certificate_providers` stands in for a bootstrap's `certificate_providers` keys: a Cluster whose
 * transport_socket names another instance is rejected as an xDS client NACKs it; the simulator makes no
 * connections, so the TLS config is shown, not used.
 */
import { closestName } from '../closest-name.js';

export type ConnectionAction = 'fail' | 'hang' | 'recover' | 'unhealthy' | 'healthy';
export type EventAction = ConnectionAction | 'errors' | 'report';
const ACTIONS: readonly EventAction[] = [
  'fail',
  'hang',
  'recover',
  'unhealthy',
  'healthy',
  'errors',
  'report',
];
const TARGET_KEYS = ['endpoint', 'locality', 'priority'];
/** The fields each action takes beside its target. */
const ACTION_FIELDS: Readonly<Record<EventAction, readonly string[]>> = {
  fail: [],
  hang: [],
  recover: [],
  unhealthy: [],
  healthy: [],
  errors: ['rate'],
  report: ['utilization', 'qps'],
};

/** What a backend's calls return from an `errors` / `report` event on. */
export interface CallBehaviour {
  /** errors: the fraction of calls that fail (0 to 1). */
  readonly errorRate?: number;
  /** report: the per-call ORCA report's CPU utilization, and its queries per second (default 100). */
  readonly utilization?: number;
  readonly qps?: number;
}

export interface Selector {
  readonly endpoint?: string;
  readonly locality?: string;
  readonly priority?: string;
}

export interface ScenarioEvent {
  /** Where the event is written in the scenario file, for messages: `scenario.events[2]`. */
  readonly path: string;
  readonly atMs: number;
  readonly action: EventAction;
  readonly target: Selector;
  /** For `errors` and `report`: what the target's calls return from now on. */
  readonly calls?: CallBehaviour;
}

export interface Scenario {
  readonly durationMs: number;
  readonly rps: number;
  readonly stepMs: number;
  readonly connectMs: number;
  /** How long each call stays in flight on its backend (0: it ends at once). */
  readonly callMs: number;
  readonly seed: number;
  readonly settings: Readonly<Record<string, unknown>>;
  readonly events: readonly ScenarioEvent[];
  /** A29 certificate provider instance names, as a bootstrap's `certificate_providers` would declare them. */
  readonly certificateProviders: ReadonlySet<string>;
}

export class ScenarioError extends Error {
  override readonly name = 'ScenarioError';
}

/** `250ms`, `10s`, `2m`, or a number of milliseconds. */
export function parseDuration(value: unknown, path: string): number {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
  const m = typeof value === 'string' ? /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(value.trim()) : null;
  if (!m)
    throw new ScenarioError(
      `${path}: expected a duration like 250ms, 10s or 2m, got ${JSON.stringify(value)}`,
    );
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 's' ? n * 1000 : n * 60_000;
}

const SCENARIO_FIELDS = [
  'duration',
  'rps',
  'step',
  'connect',
  'call',
  'seed',
  'settings',
  'events',
  'certificate_providers',
];

/** `certificate_providers`: a list of instance names (non-empty strings). */
function parseInstanceNames(value: unknown, path: string): ReadonlySet<string> {
  if (value === undefined) return new Set();
  if (!Array.isArray(value))
    throw new ScenarioError(`${path}: expected a list of certificate provider instance names`);
  return new Set(
    value.map((name, i) => {
      if (typeof name !== 'string' || name === '')
        throw new ScenarioError(`${path}[${i}]: expected an instance name, got ${JSON.stringify(name)}`);
      return name;
    }),
  );
}

/** A misspelled field would otherwise be ignored silently: name it, the field meant, and what the object accepts. */
function rejectUnknownFields(o: Record<string, unknown>, allowed: readonly string[], path: string): void {
  for (const key of Object.keys(o)) {
    if (allowed.includes(key)) continue;
    const meant = closestName(key, allowed);
    throw new ScenarioError(
      `${path}.${key}: unknown field${meant ? `; did you mean "${meant}"?` : ''} (expected one of ${allowed.join(', ')})`,
    );
  }
}

/** An event's keys are `at` and its action: a misspelled action is named, with the action it is nearest. */
function rejectUnknownEventKeys(event: Record<string, unknown>, path: string): void {
  const allowed: readonly string[] = ['at', ...ACTIONS];
  for (const key of Object.keys(event)) {
    if (allowed.includes(key)) continue;
    const meant = closestName(key, allowed);
    const what = meant === 'at' ? 'field' : 'action';
    throw new ScenarioError(
      `${path}.${key}: unknown ${meant ? `${what}; did you mean "${meant}"?` : 'field'} (an event has "at" and one action of ${ACTIONS.join(', ')})`,
    );
  }
}

function positive(value: unknown, path: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > 0))
    throw new ScenarioError(`${path}: expected a positive number`);
  return value;
}

function parseSelector(value: unknown, path: string, extra: readonly string[] = []): Selector {
  if (typeof value !== 'object' || value === null)
    throw new ScenarioError(
      `${path}: expected { endpoint | locality | priority${extra.map((f) => `, ${f}`).join('')} }`,
    );
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o).filter((k) => TARGET_KEYS.includes(k));
  rejectUnknownFields(o, [...TARGET_KEYS, ...extra], path);
  if (keys.length !== 1) throw new ScenarioError(`${path}: name exactly one of endpoint, locality, priority`);
  const key = keys[0]!;
  const v = o[key];
  if (typeof v !== 'string' && typeof v !== 'number')
    throw new ScenarioError(`${path}.${key}: expected a string`);
  return { [key]: String(v) };
}

/** A number in [min, max] (max optional), or the fallback when absent and one is given. */
function numberIn(value: unknown, path: string, min: number, max?: number): number {
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < min ||
    (max !== undefined && value > max)
  )
    throw new ScenarioError(
      `${path}: expected a number ${max === undefined ? `of at least ${min}` : `from ${min} to ${max}`}, got ${JSON.stringify(value)}`,
    );
  return value;
}

function parseCalls(
  action: EventAction,
  o: Record<string, unknown>,
  path: string,
): CallBehaviour | undefined {
  if (action === 'errors') {
    if (o.rate === undefined)
      throw new ScenarioError(`${path}.rate: missing (the fraction of calls that fail, 0 to 1)`);
    return { errorRate: numberIn(o.rate, `${path}.rate`, 0, 1) };
  }
  if (action === 'report') {
    if (o.utilization === undefined)
      throw new ScenarioError(
        `${path}.utilization: missing (the CPU utilization the backend reports, e.g. 0.4)`,
      );
    const utilization = numberIn(o.utilization, `${path}.utilization`, 0);
    const qps = o.qps === undefined ? 100 : numberIn(o.qps, `${path}.qps`, 0);
    return { utilization, qps };
  }
  return undefined;
}

export function parseScenario(raw: unknown): Scenario {
  if (typeof raw !== 'object' || raw === null) throw new ScenarioError('scenario: expected an object');
  const o = raw as Record<string, unknown>;
  rejectUnknownFields(o, SCENARIO_FIELDS, 'scenario');
  const events = o.events ?? [];
  if (!Array.isArray(events)) throw new ScenarioError('scenario.events: expected a list');
  const durationMs = parseDuration(o.duration ?? '60s', 'scenario.duration');
  const settings = o.settings ?? {};
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw new ScenarioError('scenario.settings: expected an object of channel settings');
  }
  return {
    durationMs,
    rps: positive(o.rps, 'scenario.rps', 100),
    stepMs: parseDuration(o.step ?? '1s', 'scenario.step') || 1000,
    connectMs: parseDuration(o.connect ?? '20ms', 'scenario.connect'),
    callMs: parseDuration(o.call ?? '0ms', 'scenario.call'),
    seed: typeof o.seed === 'number' ? o.seed : 1,
    settings: settings as Record<string, unknown>,
    certificateProviders: parseInstanceNames(o.certificate_providers, 'scenario.certificate_providers'),
    events: events
      .map((e, i): ScenarioEvent => {
        const path = `scenario.events[${i}]`;
        if (typeof e !== 'object' || e === null) throw new ScenarioError(`${path}: expected an object`);
        const ev = e as Record<string, unknown>;
        rejectUnknownEventKeys(ev, path);
        const actions = ACTIONS.filter((a) => a in ev);
        if (actions.length !== 1)
          throw new ScenarioError(`${path}: name exactly one action of ${ACTIONS.join(', ')}`);
        const action = actions[0]!;
        const atMs = parseDuration(ev.at, `${path}.at`);
        if (atMs >= durationMs)
          throw new ScenarioError(
            `${path}.at: ${JSON.stringify(ev.at)} is not before the end of the scenario (duration ${durationMs / 1000}s)`,
          );
        const target = parseSelector(ev[action], `${path}.${action}`, ACTION_FIELDS[action]);
        const calls = parseCalls(action, ev[action] as Record<string, unknown>, `${path}.${action}`);
        return { path, atMs, action, target, ...(calls ? { calls } : {}) };
      })
      .sort((a, b) => a.atMs - b.atMs),
  };
}
