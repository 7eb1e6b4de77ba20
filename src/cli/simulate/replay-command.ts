import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { readRecording } from '../../recorder/index.js';
import { readResource } from './command.js';
import { replayRecording } from './replay.js';
import { replayHtml } from './replay-html.js';
import { replayTextReport } from './replay-report.js';

export interface ReplayCommandOptions {
  /** The recording file (`FlightRecorder.export()`, docs/recording-format.md). */
  readonly replay: string;
  /** Another LB config (YAML or JSON): the root's, or for an xDS recording the cluster's endpoint-picking policy. */
  readonly config?: string;
  /** The one xDS cluster to replay (its calls only); default: every cluster the channel routed calls to. */
  readonly xdsCluster?: string;
  /** Also write a self-contained page with the recorded and the simulated charts. */
  readonly html?: string;
}

/** `lbtree simulate --replay FILE [--config FILE] [--xds-cluster NAME]`: prints the recorded beside the simulated. */
export function simulateReplay(options: ReplayCommandOptions, out: (text: string) => void): void {
  if (options.html) {
    try {
      closeSync(openSync(options.html, 'w'));
    } catch (e) {
      throw new Error(`--html ${options.html}: cannot write the page (${(e as Error).message})`);
    }
  }
  let fileText: string;
  try {
    fileText = readFileSync(options.replay, 'utf8');
  } catch (e) {
    throw new Error(`--replay ${options.replay}: ${(e as Error).message}`);
  }
  const recording = readRecording(fileText, options.replay);
  const config = options.config === undefined ? undefined : readResource(options.config);
  const report = replayRecording(recording, {
    ...(config !== undefined ? { config } : {}),
    ...(options.xdsCluster !== undefined ? { cluster: options.xdsCluster } : {}),
  });
  const h = recording.header;
  const title = `lbtree simulate --replay ${options.replay}${options.config ? ` under ${options.config}` : ''}`;
  out(
    `${title}\n` +
      `recorded ${h.startedAt}${h.label ? ` (${h.label})` : ''}: ${recording.events.length} events over ` +
      `${(recording.endAt / 1000).toFixed(1)} s, calls per ${h.intervalMs} ms` +
      (h.droppedEvents > 0 ? `, ${h.droppedEvents} older events dropped by the ring` : '') +
      '\n' +
      (report.cluster !== undefined ? `xDS cluster: ${report.cluster}\n` : '') +
      `root LB config replayed: ${JSON.stringify(report.config)}\n` +
      Object.entries(report.clusterPolicies ?? {})
        .map(([name, policy]) => `cluster ${name}: endpoint-picking policy ${JSON.stringify(policy)}\n`)
        .join('') +
      '\n',
  );
  const timeline = replayTextReport(report);
  out(`${timeline}\n`);
  if (options.html) {
    writeFileSync(options.html, replayHtml(report, title, timeline));
    out(`\nwrote ${options.html}\n`);
  }
}
