import { count } from '../count.js';
import { LABEL_FONT_SIZE, LABEL_ROW_HEIGHT, layoutEventLabels } from './event-labels.js';
import { type Dimension, describeAction, groups, shares } from './report.js';
import type { SimulationReport } from './run-scenario.js';
import type { Scenario } from './scenario.js';

const QUEUED_COLOR = '#d0d0d0';
const FAILED_COLOR = '#333333';
/** xds_cluster_impl's drops (A37 drop_overloads) and circuit-breaking refusals. */
const DROPPED_COLOR = '#b07aa1';
const REFUSED_COLOR = '#9c755f';
const COLORS = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
  '#bab0ac',
];
// The drawing's own units; the SVG scales to the page width (width 100%, height following).
const WIDTH = 1200;
const HEIGHT = 240;
const PAD = 40;
const BAND_HEIGHT = 60;
/** The top of the first row of event labels. */
const LABEL_TOP = 4;
const STATE_COLORS: Readonly<Record<string, string>> = {
  READY: '#59a14f',
  CONNECTING: '#edc948',
  IDLE: '#bab0ac',
  TRANSIENT_FAILURE: '#e15759',
  SHUTDOWN: '#333333',
};

/** What the drawings need of a run: its length and its step. */
type Timing = Pick<Scenario, 'durationMs' | 'stepMs'>;

const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

function colorOf(name: string, index: number): string {
  if (name === '(queued)') return QUEUED_COLOR;
  if (name === '(failed)') return FAILED_COLOR;
  if (name === '(dropped)') return DROPPED_COLOR;
  if (name === '(refused)') return REFUSED_COLOR;
  return COLORS[index % COLORS.length]!;
}

/** Horizontal position of a moment of the run. */
function timeScale(durationMs: number): (ms: number) => number {
  return (ms) => PAD + (durationMs === 0 ? 0 : (ms / durationMs) * (WIDTH - 2 * PAD));
}

/**
 * A stacked chart (inline SVG) of each group's share of picks per step, with event markers. Each step is
 * drawn flat over its whole interval (a step chart): a change shows where the step it happened in begins,
 * not as a slope from the sample before.
 */
function chart(report: SimulationReport, dimension: Dimension, scenario: Timing): string {
  // Requests that were queued or failed get their own bands, so a priority failover gap shows as such.
  // xds_cluster_impl's drops and circuit-breaking refusals too, when the run had any.
  const cut = report.steps.some((s) => s.dropped.size > 0 || s.refused > 0);
  const names = [
    ...groups(report, dimension),
    '(queued)',
    ...(cut ? ['(dropped)', '(refused)'] : []),
    '(failed)',
  ];
  const steps = report.steps;
  const n = steps.length;
  const x = timeScale(scenario.durationMs);
  const stepEnd = (i: number) => Math.min(steps[i]!.atMs + scenario.stepMs, scenario.durationMs);
  const y = (share: number) => HEIGHT - PAD + -share * (HEIGHT - 2 * PAD);
  const fractions = steps.map((step) => {
    const s = shares(step, report.endpoints, dimension);
    s.set('(queued)', step.queued);
    s.set('(failed)', step.failed);
    if (cut) {
      s.set(
        '(dropped)',
        [...step.dropped.values()].reduce((a, b) => a + b, 0),
      );
      s.set('(refused)', step.refused);
    }
    const total = [...s.values()].reduce((a, b) => a + b, 0);
    return names.map((g) => (total === 0 ? 0 : (s.get(g) ?? 0) / total));
  });
  // Two points per step, at its start and its end, at the same height.
  const outline = (levels: readonly number[]) =>
    levels.flatMap((v, i) => [
      `${x(steps[i]!.atMs).toFixed(1)},${y(v).toFixed(1)}`,
      `${x(stepEnd(i)).toFixed(1)},${y(v).toFixed(1)}`,
    ]);
  const layers: string[] = [];
  const base = new Array(n).fill(0) as number[];
  names.forEach((name, gi) => {
    const lower = base.slice();
    for (let i = 0; i < n; i++) base[i]! += fractions[i]![gi]!;
    const points = [...outline(base), ...outline(lower).reverse()];
    layers.push(
      `<polygon points="${points.join(' ')}" fill="${colorOf(name, gi)}" opacity="0.85"><title>${escapeHtml(name)}</title></polygon>`,
    );
  });
  // Event labels sit in rows above the plot, so that labels of events close in time never overlap.
  const labels = layoutEventLabels(
    report.events.map((ev) => ({
      x: x(ev.atMs),
      text: `${describeAction(ev)} ${Object.values(ev.target)[0]}`,
    })),
    WIDTH,
  );
  const rows = labels.reduce((n, l) => Math.max(n, l.row + 1), 0);
  // The plot moves down by what the rows need beyond the top padding's upper half, where one row fits.
  const shift = Math.max(0, LABEL_TOP + rows * LABEL_ROW_HEIGHT - PAD / 2);
  const rowTop = (row: number) => LABEL_TOP + row * LABEL_ROW_HEIGHT;
  const markers = labels.map(
    (l) =>
      `<line x1="${l.x}" x2="${l.x}" y1="${rowTop(l.row)}" y2="${shift + HEIGHT - PAD}" stroke="#333" stroke-dasharray="4 3"/>`,
  );
  // A white halo keeps a label readable where another event's marker line crosses its row.
  const texts = labels.map(
    (l) =>
      `<text x="${l.textX.toFixed(1)}" y="${rowTop(l.row) + LABEL_FONT_SIZE}" font-size="${LABEL_FONT_SIZE}"${l.anchor === 'end' ? ' text-anchor="end"' : ''} stroke="#fff" stroke-width="3" paint-order="stroke">${escapeHtml(l.text)}</text>`,
  );
  const axis = [0, 0.5, 1].map(
    (v) =>
      `<text x="4" y="${y(v) + 4}" font-size="11">${v * 100}%</text><line x1="${PAD}" x2="${WIDTH - PAD}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
  );
  const legend = names
    .map((g, gi) => `<span class="key"><i style="background:${colorOf(g, gi)}"></i>${escapeHtml(g)}</span>`)
    .join(' ');
  return `<h2>Share by ${dimension}</h2><div>${legend}</div>
<svg viewBox="0 0 ${WIDTH} ${HEIGHT + shift}" role="img" aria-label="share by ${dimension}">
<g transform="translate(0 ${shift})">${axis.join('\n')}${layers.join('\n')}${timeTicks(report, x, HEIGHT - PAD + 16)}</g>
${markers.join('\n')}${texts.join('\n')}</svg>`;
}

function timeTicks(report: SimulationReport, x: (ms: number) => number, at: number): string {
  const steps = report.steps;
  const every = Math.max(1, Math.ceil(steps.length / 12));
  return steps
    .filter((_, i) => i % every === 0)
    .map(
      (s) => `<text x="${x(s.atMs)}" y="${at}" font-size="11" text-anchor="middle">${s.atMs / 1000}s</text>`,
    )
    .join('');
}

/** The channel's connectivity state over the run, one colored stretch per step. */
function stateBand(report: SimulationReport, scenario: Timing): string {
  const x = timeScale(scenario.durationMs);
  const rects = report.steps.map((step) => {
    const end = Math.min(step.atMs + scenario.stepMs, scenario.durationMs);
    const color = STATE_COLORS[step.state] ?? '#999';
    return `<rect x="${x(step.atMs).toFixed(1)}" y="10" width="${(x(end) - x(step.atMs)).toFixed(1)}" height="24" fill="${color}"><title>${step.atMs / 1000}s: ${step.state}</title></rect>`;
  });
  const seen = [...new Set(report.steps.map((s) => s.state))];
  const legend = seen
    .map((st) => `<span class="key"><i style="background:${STATE_COLORS[st] ?? '#999'}"></i>${st}</span>`)
    .join(' ');
  return `<h2>Channel state</h2><div>${legend}</div>
<svg viewBox="0 0 ${WIDTH} ${BAND_HEIGHT}" role="img" aria-label="channel state">
${rects.join('\n')}${timeTicks(report, x, 50)}</svg>`;
}

/** Calls that failed on a backend, as a share of each step's calls; only drawn when some did. */
function errorBand(report: SimulationReport, scenario: Timing): string {
  if (!report.steps.some((s) => s.errors > 0)) return '';
  const x = timeScale(scenario.durationMs);
  const bars = report.steps.map((step) => {
    const calls = [...step.picks.values()].reduce((a, b) => a + b, 0);
    const share = calls === 0 ? 0 : step.errors / calls;
    const end = Math.min(step.atMs + scenario.stepMs, scenario.durationMs);
    const h = share * 30;
    return `<rect x="${x(step.atMs).toFixed(1)}" y="${(40 - h).toFixed(1)}" width="${(x(end) - x(step.atMs)).toFixed(1)}" height="${h.toFixed(1)}" fill="${FAILED_COLOR}"><title>${step.atMs / 1000}s: ${step.errors} of ${count(calls, 'call')} failed</title></rect>`;
  });
  return `<h2>Calls that failed on a backend (share of each step's calls)</h2>
<svg viewBox="0 0 ${WIDTH} ${BAND_HEIGHT}" role="img" aria-label="call errors">
<line x1="${PAD}" x2="${WIDTH - PAD}" y1="40" y2="40" stroke="#ddd"/>${bars.join('\n')}${timeTicks(report, x, 54)}</svg>`;
}

const secondsText = (ms: number) => `${ms / 1000} s`;

/** One line saying what was simulated: rate, step, duration, connect time, seed and the channel settings. */
function whatWasSimulated(scenario: Scenario): string {
  const settings = Object.entries(scenario.settings);
  return (
    `Simulated ${secondsText(scenario.durationMs)} of virtual time at ${count(scenario.rps, 'request')}/s, ` +
    `sampled every ${secondsText(scenario.stepMs)}; healthy backends connect in ${scenario.connectMs} ms; ` +
    `seed ${scenario.seed}; timers and channel settings: ` +
    (settings.length === 0
      ? 'gRPC defaults (e.g. priority failover timeout 10 s)'
      : settings.map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(', ')) +
    '.'
  );
}

/** The drawings of one run: its state band, a share chart per dimension, and its call errors. */
export function runCharts(report: SimulationReport, timing: Timing): string {
  const dims: Dimension[] = ['priority', 'locality'];
  if (new Set(report.endpoints.map((e) => e.cluster)).size > 1) dims.unshift('cluster');
  if (report.endpoints.length <= COLORS.length) dims.push('endpoint');
  return `${stateBand(report, timing)}
${dims.map((d) => chart(report, d, timing)).join('\n')}
${errorBand(report, timing)}`;
}

/** The page's head: its title and styles. */
export function pageHead(title: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;margin:24px;color:#222}h2{font-size:16px;margin:24px 0 6px}
.key{display:inline-block;margin-right:14px;font-size:13px}.key i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
pre{background:#f6f6f6;padding:12px;font-size:12px;overflow:auto}svg{display:block;width:100%;height:auto}</style></head>
<body><h1>${escapeHtml(title)}</h1>`;
}

export { escapeHtml };

/** A self-contained page (no scripts, no external assets) with the share charts and the text timeline. */
export function htmlReport(
  report: SimulationReport,
  title: string,
  timeline: string,
  scenario: Scenario,
): string {
  return `${pageHead(title)}
<p class="what">${escapeHtml(whatWasSimulated(scenario))}</p>
${runCharts(report, scenario)}
<h2>Timeline</h2><pre>${escapeHtml(timeline)}</pre>
</body></html>
`;
}
