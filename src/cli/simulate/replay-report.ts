import type { ReplayReport } from './replay.js';
import { type Dimension, groups, shares } from './report.js';
import type { SimulationReport, Step } from './run-scenario.js';

export const DIMENSIONS: readonly Dimension[] = ['priority', 'locality', 'endpoint'];

/** The dimensions a replay is compared in: also by cluster when it replayed several xDS clusters. */
export function dimensionsOf(report: ReplayReport): readonly Dimension[] {
  return new Set(report.endpoints.map((e) => e.cluster)).size > 1 ? ['cluster', ...DIMENSIONS] : DIMENSIONS;
}

/** How far the simulated share of one group was from the recorded one in one step, in percentage points. */
export interface ShareGap {
  readonly atMs: number;
  readonly dimension: Dimension;
  readonly group: string;
  readonly recorded: number;
  readonly simulated: number;
  readonly points: number;
  /** Completed calls in the step: recorded (fractional where an interval spans two steps), simulated. */
  readonly calls: readonly [number, number];
}

function percentages(step: Step, report: SimulationReport, dimension: Dimension): Map<string, number> {
  const s = shares(step, report.endpoints, dimension);
  const total = [...s.values()].reduce((a, b) => a + b, 0);
  const out = new Map<string, number>();
  for (const [g, n] of s) out.set(g, total === 0 ? 0 : (100 * n) / total);
  return out;
}

const completed = (step: Step) => [...step.picks.values()].reduce((a, b) => a + b, 0);

/**
 * The largest gap of each step and dimension, over the steps where both sides completed calls (a share of
 * nothing is not a share).
 */
export function shareGaps(report: ReplayReport): ShareGap[] {
  const gaps: ShareGap[] = [];
  report.recorded.steps.forEach((rec, i) => {
    const sim = report.simulated.steps[i]!;
    const calls: [number, number] = [completed(rec), completed(sim)];
    if (calls[0] === 0 || calls[1] === 0) return;
    for (const dimension of dimensionsOf(report)) {
      const r = percentages(rec, report.recorded, dimension);
      const s = percentages(sim, report.simulated, dimension);
      let worst: ShareGap | undefined;
      for (const group of new Set([...r.keys(), ...s.keys()])) {
        const recorded = r.get(group) ?? 0;
        const simulated = s.get(group) ?? 0;
        const points = Math.abs(recorded - simulated);
        if (worst === undefined || points > worst.points)
          worst = { atMs: rec.atMs, dimension, group, recorded, simulated, points, calls };
      }
      if (worst) gaps.push(worst);
    }
  });
  return gaps;
}

const pct = (n: number) => `${Math.round(n)}%`;
const secs = (ms: number) => `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)}s`;

function describe(step: Step, report: SimulationReport, dimension: Dimension): string {
  const p = percentages(step, report, dimension);
  return groups(report, dimension)
    .map((g) => `${g}=${pct(p.get(g) ?? 0)}`)
    .join(' ');
}

function line(
  label: string,
  step: Step,
  report: SimulationReport,
  showEndpoints: boolean,
  showClusters: boolean,
): string {
  const calls = completed(step);
  return (
    `${label} ${step.state.padEnd(17)} calls=${String(Math.round(calls)).padEnd(5)}` +
    (calls === 0
      ? ''
      : (showClusters ? ` cluster: ${describe(step, report, 'cluster')}  ` : '') +
        ` priority: ${describe(step, report, 'priority')}   locality: ${describe(step, report, 'locality')}` +
        (showEndpoints ? `   endpoint: ${describe(step, report, 'endpoint')}` : '')) +
    (Math.round(step.failed) ? `   failed=${Math.round(step.failed)}` : '') +
    (step.queued ? `   queued=${step.queued}` : '') +
    (Math.round(step.errors) ? `   call errors=${Math.round(step.errors)}` : '')
  );
}

/** The text of `lbtree simulate --replay`: each step recorded beside simulated, then the largest gaps. */
export function replayTextReport(report: ReplayReport): string {
  const lines: string[] = [];
  const showEndpoints = report.endpoints.length <= 6;
  const showClusters = new Set(report.endpoints.map((e) => e.cluster)).size > 1;
  report.recorded.steps.forEach((rec, i) => {
    const sim = report.simulated.steps[i]!;
    lines.push(
      `  ${secs(rec.atMs).padStart(6)}  ${line('recorded ', rec, report.recorded, showEndpoints, showClusters)}`,
    );
    lines.push(
      `  ${''.padStart(6)}  ${line('simulated', sim, report.simulated, showEndpoints, showClusters)}`,
    );
  });
  lines.push('', 'Root states in order:');
  lines.push(`  recorded:  ${report.recordedStates.join(' → ') || '(none)'}`);
  lines.push(`  simulated: ${report.simulatedStates.join(' → ') || '(none)'}`);
  const same = report.recordedStates.join() === report.simulatedStates.join();
  lines.push(`  ${same ? 'the same order' : 'the orders differ'}`);
  const routing = report.routing;
  if (routing !== undefined) {
    lines.push('', 'Calls routed again by the config selector over the recorded routes (A28, A42):');
    if (routing.classified > 0)
      lines.push(
        `  ${routing.classified} with their recorded path and headers: ${routing.sameRoute} matched their recorded route` +
          (routing.classified > routing.sameRoute
            ? `, ${routing.classified - routing.sameRoute} another (a runtime_fraction draw): they kept the recorded one`
            : ''),
      );
    if (routing.unclassified > 0)
      lines.push(
        `  ${routing.unclassified} recorded by route only (beyond the recorder's call classes): a random request hash`,
      );
  }
  lines.push(
    '',
    'Largest share gap per dimension (simulated vs recorded, steps where both completed calls):',
  );
  const gaps = shareGaps(report);
  for (const dimension of dimensionsOf(report)) {
    const worst = gaps.filter((g) => g.dimension === dimension).sort((a, b) => b.points - a.points)[0];
    lines.push(
      worst === undefined
        ? `  by ${dimension}: no step to compare`
        : `  by ${dimension}: ${worst.points.toFixed(1)} points at ${secs(worst.atMs)} (${worst.group}: recorded ${pct(worst.recorded)}, simulated ${pct(worst.simulated)})`,
    );
  }
  return lines.join('\n');
}
