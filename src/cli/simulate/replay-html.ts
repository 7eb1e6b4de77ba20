import { escapeHtml, pageHead, runCharts } from './html.js';
import type { ReplayReport } from './replay.js';

/** A self-contained page: the recorded run's charts above the simulated run's, then the text report. */
export function replayHtml(report: ReplayReport, title: string, text: string): string {
  const timing = { durationMs: report.recorded.steps.length * report.stepMs, stepMs: report.stepMs };
  return `${pageHead(title)}
<p class="what">${escapeHtml(
    `What the channel did (recorded) and what the simulated tree did with the same inputs, per ${report.stepMs / 1000} s.`,
  )}</p>
<h1>Recorded</h1>
${runCharts(report.recorded, timing)}
<h1>Simulated</h1>
${runCharts(report.simulated, timing)}
<h2>Timeline</h2><pre>${escapeHtml(text)}</pre>
</body></html>
`;
}
