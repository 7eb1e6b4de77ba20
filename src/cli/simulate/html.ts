import { type Dimension, groups, shares } from './report.js';
import type { SimulationReport } from './run-scenario.js';

const QUEUED_COLOR = '#d0d0d0';
const FAILED_COLOR = '#333333';
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
const WIDTH = 900;
const HEIGHT = 220;
const PAD = 40;

const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

function colorOf(name: string, index: number): string {
  if (name === '(queued)') return QUEUED_COLOR;
  if (name === '(failed)') return FAILED_COLOR;
  return COLORS[index % COLORS.length]!;
}

/** A stacked-area chart (inline SVG) of each group's share of picks per step, with event markers. */
function chart(report: SimulationReport, dimension: Dimension): string {
  // Requests that were queued or failed get their own bands, so a priority failover gap shows as such.
  const names = [...groups(report, dimension), '(queued)', '(failed)'];
  const steps = report.steps;
  const n = steps.length;
  const x = (i: number) => PAD + (n <= 1 ? 0 : (i * (WIDTH - 2 * PAD)) / (n - 1));
  const y = (share: number) => HEIGHT - PAD + -share * (HEIGHT - 2 * PAD);
  const fractions = steps.map((step) => {
    const s = shares(step, report.endpoints, dimension);
    s.set('(queued)', step.queued);
    s.set('(failed)', step.failed);
    const total = [...s.values()].reduce((a, b) => a + b, 0);
    return names.map((g) => (total === 0 ? 0 : (s.get(g) ?? 0) / total));
  });
  const layers: string[] = [];
  const base = new Array(n).fill(0) as number[];
  names.forEach((name, gi) => {
    const lower = base.slice();
    for (let i = 0; i < n; i++) base[i]! += fractions[i]![gi]!;
    const top = base.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`);
    const bottom = lower.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).reverse();
    layers.push(
      `<polygon points="${[...top, ...bottom].join(' ')}" fill="${colorOf(name, gi)}" opacity="0.85"><title>${escapeHtml(name)}</title></polygon>`,
    );
  });
  const durationMs = steps.length > 0 ? steps[steps.length - 1]!.atMs : 0;
  const seenAt = new Map<number, number>();
  const markers = report.events.map((ev) => {
    const px = PAD + (durationMs === 0 ? 0 : (ev.atMs / durationMs) * (WIDTH - 2 * PAD));
    // Events at the same moment stack their labels instead of overprinting them.
    const row = seenAt.get(ev.atMs) ?? 0;
    seenAt.set(ev.atMs, row + 1);
    const label = escapeHtml(`${ev.action} ${Object.values(ev.target)[0]}`);
    return `<line x1="${px}" x2="${px}" y1="${PAD / 2}" y2="${HEIGHT - PAD}" stroke="#333" stroke-dasharray="4 3"/><text x="${px + 3}" y="${PAD / 2 + 10 + 12 * row}" font-size="11">${label}</text>`;
  });
  const axis = [0, 0.5, 1].map(
    (v) =>
      `<text x="4" y="${y(v) + 4}" font-size="11">${v * 100}%</text><line x1="${PAD}" x2="${WIDTH - PAD}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
  );
  const ticks = steps
    .filter((_, i) => n <= 12 || i % Math.ceil(n / 12) === 0)
    .map(
      (s) =>
        `<text x="${x(steps.indexOf(s))}" y="${HEIGHT - PAD + 16}" font-size="11" text-anchor="middle">${s.atMs / 1000}s</text>`,
    );
  const legend = names
    .map((g, gi) => `<span class="key"><i style="background:${colorOf(g, gi)}"></i>${escapeHtml(g)}</span>`)
    .join(' ');
  return `<h2>Share by ${dimension}</h2><div>${legend}</div>
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img" aria-label="share by ${dimension}">
${axis.join('\n')}${layers.join('\n')}${markers.join('\n')}${ticks.join('')}</svg>`;
}

/** A self-contained page (no scripts, no external assets) with the share charts and the text timeline. */
export function htmlReport(report: SimulationReport, title: string, timeline: string): string {
  const dims: Dimension[] = ['priority', 'locality'];
  if (report.endpoints.length <= COLORS.length) dims.push('endpoint');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;margin:24px;color:#222}h2{font-size:16px;margin:24px 0 6px}
.key{display:inline-block;margin-right:14px;font-size:13px}.key i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
pre{background:#f6f6f6;padding:12px;font-size:12px;overflow:auto}</style></head>
<body><h1>${escapeHtml(title)}</h1>
${dims.map((d) => chart(report, d)).join('\n')}
<h2>Timeline</h2><pre>${escapeHtml(timeline)}</pre>
</body></html>
`;
}
