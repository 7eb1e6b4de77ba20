import {
  type CallsEvent,
  type EndLine,
  RECORDING_FORMAT,
  RECORDING_VERSION,
  type RecordedEvent,
  type Recording,
  RecordingError,
  type RecordingHeader,
  type UpdateEvent,
} from './recording-format.js';

const STATES = new Set(['IDLE', 'CONNECTING', 'READY', 'TRANSIENT_FAILURE', 'SHUTDOWN']);

type Json = Record<string, unknown>;

/** Reads one line's fields, naming `line N: field` in every error. */
class LineReader {
  constructor(
    readonly line: number,
    readonly value: Json,
  ) {}

  fail(path: string, problem: string): never {
    throw new RecordingError(`line ${this.line}: ${path}: ${problem}`);
  }

  number(path: string, value: unknown = this.value[path]): number {
    if (typeof value !== 'number' || !Number.isFinite(value))
      this.fail(path, `expected a number, got ${show(value)}`);
    return value;
  }

  count(path: string, value: unknown = this.value[path]): number {
    const n = this.number(path, value);
    if (!Number.isInteger(n) || n < 0) this.fail(path, `expected a count (an integer >= 0), got ${n}`);
    return n;
  }

  string(path: string, value: unknown = this.value[path]): string {
    if (typeof value !== 'string') this.fail(path, `expected a string, got ${show(value)}`);
    return value;
  }

  object(path: string, value: unknown = this.value[path]): Json {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      this.fail(path, `expected an object, got ${show(value)}`);
    return value as Json;
  }

  array(path: string, value: unknown = this.value[path]): unknown[] {
    if (!Array.isArray(value)) this.fail(path, `expected an array, got ${show(value)}`);
    return value;
  }

  state(path: string, value: unknown = this.value[path]): void {
    if (typeof value !== 'string' || !STATES.has(value))
      this.fail(path, `expected a connectivity state (${[...STATES].join(', ')}), got ${show(value)}`);
  }

  boolean(path: string, value: unknown): boolean {
    if (typeof value !== 'boolean') this.fail(path, `expected true or false, got ${show(value)}`);
    return value;
  }

  /** One of `choices` (strings). */
  oneOf<T extends string>(path: string, value: unknown, choices: readonly T[]): T {
    if (typeof value !== 'string' || !(choices as readonly string[]).includes(value))
      this.fail(path, `expected ${choices.map((c) => `"${c}"`).join(', ')}, got ${show(value)}`);
    return value as T;
  }

  /** An integer written as a decimal string (int64 and uint64 values do not fit a JSON number). */
  integerText(path: string, value: unknown): void {
    if (typeof value !== 'string' || !/^-?\d+$/.test(value))
      this.fail(path, `expected an integer as a decimal string, got ${show(value)}`);
  }

  status(path: string, value: unknown): void {
    const s = this.object(path, value);
    this.count(`${path}.code`, s.code);
    this.string(`${path}.details`, s.details);
  }
}

function show(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

function readHeader(r: LineReader): RecordingHeader {
  const v = r.value;
  if (v.format !== RECORDING_FORMAT)
    r.fail('format', `expected "${RECORDING_FORMAT}", got ${show(v.format)}: not an lbtree recording`);
  const version = r.count('version');
  if (version > RECORDING_VERSION) {
    r.fail(
      'version',
      `the file is format version ${version}; this lbtree reads version ${RECORDING_VERSION} and older: upgrade lbtree to replay it`,
    );
  }
  if (version < 1) r.fail('version', `expected a version >= 1, got ${version}`);
  const intervalMs = r.count('intervalMs');
  if (intervalMs === 0) r.fail('intervalMs', 'expected a positive number of milliseconds');
  return {
    format: RECORDING_FORMAT,
    version,
    startedAt: r.string('startedAt'),
    intervalMs,
    maxEvents: r.count('maxEvents'),
    droppedEvents: r.count('droppedEvents'),
    label: r.string('label'),
    ...(v.maxCallClasses !== undefined ? { maxCallClasses: r.count('maxCallClasses') } : {}),
  };
}

function checkEndpoints(r: LineReader, path: string, value: unknown): void {
  r.array(path, value).forEach((e, i) => {
    const endpoint = r.object(`${path}[${i}]`, e);
    const addresses = r.array(`${path}[${i}].addresses`, endpoint.addresses);
    if (addresses.length === 0) r.fail(`${path}[${i}].addresses`, 'expected at least one address');
    for (const [j, a] of addresses.entries()) r.string(`${path}[${i}].addresses[${j}]`, a);
    if (endpoint.attributes !== undefined) r.object(`${path}[${i}].attributes`, endpoint.attributes);
  });
}

function checkCluster(r: LineReader, path: string, value: unknown): void {
  const c = r.object(path, value);
  r.string(`${path}.name`, c.name);
  if (c.error !== undefined) {
    r.status(`${path}.error`, c.error);
    return;
  }
  if (c.kind !== 'eds' && c.kind !== 'logical_dns' && c.kind !== 'aggregate')
    r.fail(`${path}.kind`, `expected "eds", "logical_dns" or "aggregate", got ${show(c.kind)}`);
  r.array(`${path}.lbPolicy`, c.lbPolicy);
  r.count(`${path}.maxRequests`, c.maxRequests);
  r.array(`${path}.overrideHostStatus`, c.overrideHostStatus);
  if (c.outlierDetection !== undefined) r.object(`${path}.outlierDetection`, c.outlierDetection);
  if (c.leafClusters !== undefined) {
    const leaves = r.array(`${path}.leafClusters`, c.leafClusters);
    for (const [i, n] of leaves.entries()) r.string(`${path}.leafClusters[${i}]`, n);
  }
  if (c.dns !== undefined) {
    const dns = r.object(`${path}.dns`, c.dns);
    r.string(`${path}.dns.hostname`, dns.hostname);
    r.count(`${path}.dns.port`, dns.port);
  }
  if (c.assignment === undefined) return;
  const a = r.object(`${path}.assignment`, c.assignment);
  r.array(`${path}.assignment.priorities`, a.priorities).forEach((p, i) => {
    r.array(`${path}.assignment.priorities[${i}]`, p).forEach((l, j) => {
      const at = `${path}.assignment.priorities[${i}][${j}]`;
      const locality = r.object(at, l);
      const name = r.object(`${at}.locality`, locality.locality);
      for (const k of ['region', 'zone', 'subZone']) r.string(`${at}.locality.${k}`, name[k]);
      r.count(`${at}.weight`, locality.weight);
      checkEndpoints(r, `${at}.endpoints`, locality.endpoints);
      (locality.endpoints as Json[]).forEach((e, k) => {
        r.count(`${at}.endpoints[${k}].weight`, e.weight);
        r.string(`${at}.endpoints[${k}].healthStatus`, e.healthStatus);
      });
    });
  });
  r.array(`${path}.assignment.drops`, a.drops).forEach((d, i) => {
    const drop = r.object(`${path}.assignment.drops[${i}]`, d);
    r.string(`${path}.assignment.drops[${i}].category`, drop.category);
    r.count(`${path}.assignment.drops[${i}].perMillion`, drop.perMillion);
  });
}

const STRING_MATCHES = ['exact', 'prefix', 'suffix', 'contains'] as const;

function checkRouteMatch(r: LineReader, path: string, value: unknown): void {
  const m = r.object(path, value);
  const p = r.object(`${path}.path`, m.path);
  const kind = r.oneOf(`${path}.path.kind`, p.kind, ['prefix', 'path', 'safe_regex']);
  if (kind === 'safe_regex') r.string(`${path}.path.regex`, p.regex);
  else {
    r.string(`${path}.path.value`, p.value);
    r.boolean(`${path}.path.caseSensitive`, p.caseSensitive);
  }
  r.array(`${path}.headers`, m.headers).forEach((h, i) => {
    const at = `${path}.headers[${i}]`;
    const header = r.object(at, h);
    r.string(`${at}.name`, header.name);
    r.boolean(`${at}.invert`, header.invert);
    const test = r.oneOf(`${at}.kind`, header.kind, [...STRING_MATCHES, 'safe_regex', 'range', 'present']);
    if (test === 'safe_regex') r.string(`${at}.regex`, header.regex);
    else if (test === 'range') {
      r.integerText(`${at}.start`, header.start);
      r.integerText(`${at}.end`, header.end);
    } else if (test === 'present') r.boolean(`${at}.present`, header.present);
    else {
      r.string(`${at}.value`, header.value);
      r.boolean(`${at}.ignoreCase`, header.ignoreCase);
    }
  });
  if (m.runtimeFractionPerMillion !== undefined) {
    const ppm = r.count(`${path}.runtimeFractionPerMillion`, m.runtimeFractionPerMillion);
    if (ppm > 1_000_000) r.fail(`${path}.runtimeFractionPerMillion`, `expected at most 1000000, got ${ppm}`);
  }
}

function checkHashPolicy(r: LineReader, path: string, value: unknown): void {
  const p = r.object(path, value);
  const type = r.oneOf(`${path}.type`, p.type, [
    'header',
    'filter_state',
    'cookie',
    'connection_properties',
    'query_parameter',
    'unknown',
  ]);
  if (p.terminal !== undefined) r.boolean(`${path}.terminal`, p.terminal);
  if (type === 'filter_state') r.string(`${path}.key`, p.key);
  if (type !== 'header') return;
  r.string(`${path}.headerName`, p.headerName);
  if (p.regexRewrite === undefined) return;
  const rewrite = r.object(`${path}.regexRewrite`, p.regexRewrite);
  r.string(`${path}.regexRewrite.pattern`, rewrite.pattern);
  r.string(`${path}.regexRewrite.substitution`, rewrite.substitution);
}

function checkRoute(r: LineReader, path: string, value: unknown): void {
  const route = r.object(path, value);
  r.string(`${path}.match`, route.match);
  if (route.matcher !== undefined) checkRouteMatch(r, `${path}.matcher`, route.matcher);
  if (route.hashPolicies !== undefined)
    for (const [i, p] of r.array(`${path}.hashPolicies`, route.hashPolicies).entries())
      checkHashPolicy(r, `${path}.hashPolicies[${i}]`, p);
  const actions = ['cluster', 'weightedClusters', 'nonForwarding'].filter((k) => route[k] !== undefined);
  if (actions.length !== 1)
    r.fail(path, `expected one of cluster, weightedClusters or nonForwarding, got ${actions.length}`);
  if (route.cluster !== undefined) r.string(`${path}.cluster`, route.cluster);
  if (route.nonForwarding !== undefined) r.string(`${path}.nonForwarding`, route.nonForwarding);
  if (route.weightedClusters === undefined) return;
  const clusters = r.array(`${path}.weightedClusters`, route.weightedClusters);
  if (clusters.length === 0) r.fail(`${path}.weightedClusters`, 'expected at least one cluster');
  clusters.forEach((c, i) => {
    const at = `${path}.weightedClusters[${i}]`;
    const entry = r.object(at, c);
    r.string(`${at}.name`, entry.name);
    if (r.count(`${at}.weight`, entry.weight) === 0) r.fail(`${at}.weight`, 'expected a weight > 0');
  });
}

function readEvent(r: LineReader): RecordedEvent {
  const v = r.value;
  r.number('at');
  switch (v.type) {
    case 'update': {
      if (v.config === undefined) r.fail('config', 'missing (the root LB config)');
      if (v.settings !== undefined) r.object('settings');
      if (v.error !== undefined) r.status('error', v.error);
      else checkEndpoints(r, 'endpoints', v.endpoints);
      if (v.xdsClusters !== undefined)
        for (const [i, c] of r.array('xdsClusters').entries()) checkCluster(r, `xdsClusters[${i}]`, c);
      if (v.xdsRoutes !== undefined)
        for (const [i, route] of r.array('xdsRoutes').entries()) checkRoute(r, `xdsRoutes[${i}]`, route);
      if (v.xdsChannelId !== undefined) r.integerText('xdsChannelId', v.xdsChannelId);
      return v as unknown as UpdateEvent;
    }
    case 'subchannel':
      r.string('address');
      r.state('state');
      return v as unknown as RecordedEvent;
    case 'health':
      r.string('address');
      r.boolean('healthy', v.healthy);
      return v as unknown as RecordedEvent;
    case 'switch':
      r.string('from');
      r.string('to');
      if (v.phase !== 'started' && v.phase !== 'done')
        r.fail('phase', `expected "started" or "done", got ${show(v.phase)}`);
      return v as unknown as RecordedEvent;
    case 'timer':
      r.number('setAt');
      r.number('delayMs');
      return v as unknown as RecordedEvent;
    case 'picker':
      r.state('state');
      r.status('status', v.status);
      return v as unknown as RecordedEvent;
    case 'calls': {
      r.number('durationMs');
      r.array('endpoints').forEach((e, i) => {
        const c = r.object(`endpoints[${i}]`, e);
        r.string(`endpoints[${i}].address`, c.address);
        for (const k of ['picks', 'calls', 'errors', 'orcaReports']) r.count(`endpoints[${i}].${k}`, c[k]);
        r.number(`endpoints[${i}].cpuUtilization`, c.cpuUtilization);
      });
      r.count('failedPicks');
      r.count('droppedPicks');
      if (v.routes !== undefined)
        r.array('routes').forEach((e, i) => {
          const route = r.object(`routes[${i}]`, e);
          r.count(`routes[${i}].route`, route.route);
          r.string(`routes[${i}].child`, route.child);
          r.count(`routes[${i}].picks`, route.picks);
        });
      if (v.callClasses !== undefined)
        r.array('callClasses').forEach((e, i) => {
          const at = `callClasses[${i}]`;
          const c = r.object(at, e);
          r.count(`${at}.route`, c.route);
          r.string(`${at}.child`, c.child);
          r.string(`${at}.path`, c.path);
          for (const [name, h] of Object.entries(r.object(`${at}.headers`, c.headers)))
            r.string(`${at}.headers.${name}`, h);
          r.count(`${at}.picks`, c.picks);
        });
      return v as unknown as CallsEvent;
    }
    default:
      return r.fail(
        'type',
        `expected update, switch, subchannel, health, picker, calls, timer or end, got ${show(v.type)}`,
      );
  }
}

/**
 * Reads a recording file's text (JSON lines, docs/recording-format.md). Throws a {@link RecordingError}
 * naming the line and field of the first problem: not a recording, a newer format version, a line that is
 * not JSON (a file cut mid-line), a missing `end` line (a truncated file), a field of the wrong type.
 */
export function readRecording(text: string, source = 'recording'): Recording {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const parsed = (i: number): LineReader => {
    let value: unknown;
    try {
      value = JSON.parse(lines[i]!);
    } catch (e) {
      const cut = i === lines.length - 1 ? ' (the file ends mid-line: truncated?)' : '';
      throw new RecordingError(`${source}: line ${i + 1}: not JSON${cut}: ${(e as Error).message}`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new RecordingError(`${source}: line ${i + 1}: expected a JSON object, got ${show(value)}`);
    return new LineReader(i + 1, value as Json);
  };
  try {
    if (lines.length === 0) throw new RecordingError('line 1: the file is empty');
    const header = readHeader(parsed(0));
    const events: RecordedEvent[] = [];
    let end: EndLine | undefined;
    for (let i = 1; i < lines.length; i++) {
      const r = parsed(i);
      if (end !== undefined) r.fail('type', `a line after the end line (line ${i})`);
      if (r.value.type === 'end') {
        const at = r.number('at');
        const count = r.count('events');
        if (count !== events.length)
          r.fail(
            'events',
            `the end line counts ${count} events, the file has ${events.length}: lines are missing`,
          );
        end = { type: 'end', at, events: count };
        continue;
      }
      events.push(readEvent(r));
    }
    if (end === undefined) {
      throw new RecordingError(
        `line ${lines.length + 1}: the file has no end line after its ${events.length} events: it is truncated`,
      );
    }
    return { header, events, endAt: end.at };
  } catch (e) {
    if (e instanceof RecordingError && !e.message.startsWith(`${source}:`))
      throw new RecordingError(`${source}: ${e.message}`);
    throw e;
  }
}
