import { count } from '../count.js';
import type { EndpointInfo, SimulationReport, Step } from './run-scenario.js';
import type { ScenarioEvent } from './scenario.js';

export type Dimension = 'priority' | 'locality' | 'endpoint' | 'cluster';

/** The group an endpoint counts in, in a dimension (`cluster`: its xDS cluster, in replays of xDS recordings). */
export function groupOfEndpoint(e: EndpointInfo, dimension: Dimension): string {
  switch (dimension) {
    case 'priority':
      return e.priority;
    case 'locality':
      return e.locality;
    case 'endpoint':
      return e.name;
    case 'cluster':
      return e.cluster ?? '(none)';
  }
}

/** Completed picks per group (priority, locality, endpoint name or cluster) in one step. */
export function shares(
  step: Step,
  endpoints: readonly EndpointInfo[],
  dimension: Dimension,
): Map<string, number> {
  const groupOf = new Map<string, string>();
  for (const e of endpoints) {
    groupOf.set(e.name, groupOfEndpoint(e, dimension));
  }
  const out = new Map<string, number>();
  for (const [name, n] of step.picks) {
    const g = groupOf.get(name) ?? name;
    out.set(g, (out.get(g) ?? 0) + n);
  }
  return out;
}

export function groups(report: SimulationReport, dimension: Dimension): string[] {
  const names = report.endpoints.map((e) => groupOfEndpoint(e, dimension));
  return [...new Set(names)];
}

/** `errors 50%`, `report utilization 0.8 qps 100`, or the action alone: an event without its target. */
export function describeAction(ev: ScenarioEvent): string {
  if (ev.calls?.errorRate !== undefined) return `${ev.action} ${Math.round(100 * ev.calls.errorRate)}%`;
  if (ev.calls?.utilization !== undefined)
    return `${ev.action} utilization ${ev.calls.utilization} qps ${ev.calls.qps ?? 100}`;
  return ev.action;
}

const pct = (n: number, total: number) => (total === 0 ? '0%' : `${Math.round((100 * n) / total)}%`);
const secs = (ms: number) => `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)}s`;

function describeShares(step: Step, report: SimulationReport, dimension: Dimension): string {
  const s = shares(step, report.endpoints, dimension);
  const total = [...s.values()].reduce((a, b) => a + b, 0);
  return groups(report, dimension)
    .map((g) => `${g}=${pct(s.get(g) ?? 0, total)}`)
    .join(' ');
}

/** `dropped throttle=12 lb=3 refused=4`: what xds_cluster_impl did in a step, or '' when nothing. */
function describeDrops(dropped: ReadonlyMap<string, number>, refused: number, lead: string): string {
  const parts = [...dropped].map(([category, n]) => `${category}=${n}`);
  return (
    (parts.length > 0 ? `${lead}dropped ${parts.join(' ')}` : '') +
    (refused > 0 ? `${lead}refused=${refused}` : '')
  );
}

/** The text timeline: one line per step, events where they happen, then the overall shares. */
export function textReport(report: SimulationReport): string {
  const lines: string[] = [];
  // A few endpoints fit on each line (an ejected or down-weighted backend shows there).
  const showEndpoints = report.endpoints.length <= 4;
  let e = 0;
  for (const step of report.steps) {
    while (e < report.events.length && report.events[e]!.atMs < step.atMs + 1) {
      const ev = report.events[e++]!;
      lines.push(
        `  ${secs(ev.atMs).padStart(6)}  ── ${describeAction(ev)} ${JSON.stringify(ev.target)} (${count(ev.addresses.length, 'address', 'addresses')})`,
      );
    }
    lines.push(
      `  ${secs(step.atMs).padStart(6)}  ${step.state.padEnd(17)} priority: ${describeShares(step, report, 'priority')}` +
        `   locality: ${describeShares(step, report, 'locality')}` +
        (showEndpoints ? `   endpoint: ${describeShares(step, report, 'endpoint')}` : '') +
        (step.queued || step.failed ? `   queued=${step.queued} failed=${step.failed}` : '') +
        describeDrops(step.dropped, step.refused, '   ') +
        (step.errors ? `   call errors=${step.errors}` : ''),
    );
  }
  lines.push('', 'Traffic share over the whole run:');
  for (const dimension of ['priority', 'locality', 'endpoint'] as const) {
    const totals = new Map<string, number>();
    let all = 0;
    for (const step of report.steps) {
      for (const [g, n] of shares(step, report.endpoints, dimension)) {
        totals.set(g, (totals.get(g) ?? 0) + n);
        all += n;
      }
    }
    lines.push(
      `  by ${dimension}: ${groups(report, dimension)
        .map((g) => `${g}=${pct(totals.get(g) ?? 0, all)}`)
        .join(' ')}`,
    );
  }
  const queued = report.steps.reduce((a, s) => a + s.queued, 0);
  const failed = report.steps.reduce((a, s) => a + s.failed, 0);
  const errors = report.steps.reduce((a, s) => a + s.errors, 0);
  lines.push(`  requests queued: ${queued}, failed: ${failed}; calls that failed on a backend: ${errors}`);
  const dropped = new Map<string, number>();
  for (const step of report.steps)
    for (const [category, n] of step.dropped) dropped.set(category, (dropped.get(category) ?? 0) + n);
  const refused = report.steps.reduce((a, s) => a + s.refused, 0);
  if (dropped.size > 0 || refused > 0) {
    const byCategory = [...dropped].map(([category, n]) => `${category} ${n}`).join(', ');
    lines.push(
      `  xds_cluster_impl: dropped ${dropped.size > 0 ? `by category: ${byCategory}` : 'none'}; ` +
        `refused by circuit breaking: ${refused}`,
    );
  }
  return lines.join('\n');
}
