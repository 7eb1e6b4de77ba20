/**
 * Connect storms, lbtree beside grpc-js / @grpc/grpc-js-xds's same policies in the same run (each measurement in
 * a process of its own): what every real channel does at start-up and after an outage. For each policy:
 *   - first update + connect storm: the first update of N endpoints, then each endpoint CONNECTING -> READY
 *     one at a time, each delivered (and reported up to the channel) before the next;
 *   - disconnect storm: then each READY endpoint loses its connection and fails to reconnect, one at a time
 *     (READY -> IDLE -> CONNECTING -> TRANSIENT_FAILURE), until none is left.
 * A policy that rebuilds its picker over every READY child on each report is quadratic here (the issue-10
 * figures: 1.1 s for 10,000 round_robin endpoints, 76 s for a 50,000-endpoint xDS locality in the simulator).
 * Subchannels are the same synchronous fakes the other sections use; lbtree's timers are held by a manual
 * clock (only ring_hash's zero-delay connection hops run), so nothing fires inside a timed region.
 *
 * The issue's own comparison sits beside round_robin and the xDS tree too: grpc-js given the whole first update
 * with fakes that connect inside it (each fake is READY from its creation), so every endpoint is READY when the
 * update returns and grpc-js aggregates once (linear) — lbtree's one-by-one figure is printed beside it (rows
 * marked DIFFERENT WORK: not a like-for-like ratio), and lbtree's own figure for the same connect-inside update
 * beside that (like for like).
 *
 * Beside each first update + connect storm: the same runs' process CPU time and the host's steal (cpu-time.ts),
 * so a wall-time outlier on a virtual machine can be told from the code's own cost.
 *
 * Comparisons: round_robin from @grpc/grpc-js; priority, weighted_target, xds_wrr_locality and ring_hash from
 * @grpc/grpc-js-xds (registered through its setup functions, as its register() does). grpc-js 1.14 and
 * grpc-js-xds 1.14 have no least_request policy: lbtree's least_request is shown beside grpc-js's
 * round_robin, the nearest policy they have. A comparison whose previous size took long enough that this one
 * would take minutes (both are quadratic there) is skipped and says so, unless STORM_FULL=1: then it runs
 * once, without a warm-up (about two minutes for grpc-js round_robin at 10,000 endpoints).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { printRow, printTableHeader } from './report.js';
import {
  repeatsFor,
  runStormJob,
  type StormFigures,
  type StormJob,
  type StormJobResult,
} from './storm-measure.js';
import type { Shape } from './storm-shapes.js';

const SIZES = (process.env.STORM_SIZES ?? '1000,10000,50000').split(',').map(Number);
/** A comparison expected to take longer than this (quadratic growth from the previous size) is skipped. */
const SKIP_ABOVE_MS = Number(process.env.STORM_SKIP_ABOVE_MS ?? 60_000);
/** STORM_FULL=1 runs every comparison, however long it is projected to take (once, no warm-up). */
const FULL = process.env.STORM_FULL === '1';
/**
 * Each measurement (a library, a case, a size) runs in a fresh process of its own, unless STORM_ISOLATE=0. In
 * one process, a library's runs pay for the collection of whatever ran before them: `--trace-gc` showed a
 * mark-compact of grpc-js-xds's 1,000-endpoint trees landing in lbtree's 10,000-endpoint runs, and grpc-js's
 * runs after lbtree's pay for lbtree's the same way. A channel does not share its heap with a benchmark's other
 * trees. A fresh process costs each measurement its warm-up (storm-measure.ts) and about a second to start.
 */
const ISOLATE = process.env.STORM_ISOLATE !== '0';

function runJob(job: StormJob): Promise<StormJobResult> {
  if (!ISOLATE) return runStormJob(job);
  return new Promise((resolve, reject) => {
    // The same node and flags (`--import tsx`) as this process.
    const child = fork(fileURLToPath(new URL('./storm-child.ts', import.meta.url)), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let answered = false;
    child.once('message', (message: { result: StormJobResult } | { error: string }) => {
      answered = true;
      if ('error' in message) reject(new Error(message.error));
      else resolve(message.result);
    });
    child.once('exit', (code, signal) => {
      if (!answered)
        reject(new Error(`${job.label}: its measuring process ended (${signal ?? code}) with no figures`));
    });
    child.send(job);
  });
}

const storm = (job: Omit<StormJob, 'kind'>) => runJob({ ...job, kind: 'storm' }) as Promise<StormFigures>;
const atOnce = (job: Omit<StormJob, 'kind' | 'once'>) =>
  runJob({ ...job, kind: 'at-once', once: false }) as Promise<{ ms: number; cpuMs: number }>;

interface StormCase {
  readonly policy: string;
  readonly shape: Shape;
  readonly title: string;
  readonly comparison: string;
  /** Also print the comparison: grpc-js's first update with fakes that connect inside it. */
  readonly connectAtOnce?: boolean;
}

const CASES: readonly StormCase[] = [
  {
    policy: 'round_robin',
    shape: 'plain',
    title: 'round_robin',
    comparison: '@grpc/grpc-js round_robin',
    connectAtOnce: true,
  },
  {
    policy: 'least_request',
    shape: 'plain',
    title: 'least_request',
    comparison: '@grpc/grpc-js round_robin (no least_request in grpc-js 1.14)',
  },
  { policy: 'ring_hash', shape: 'plain', title: 'ring_hash', comparison: '@grpc/grpc-js-xds ring_hash' },
  {
    policy: 'weighted_target',
    shape: 'target-per-endpoint',
    title: 'weighted_target, one target (round_robin) per endpoint',
    comparison: '@grpc/grpc-js-xds weighted_target',
  },
  {
    policy: 'xds_wrr_locality',
    shape: 'locality-per-endpoint',
    title: 'xds_wrr_locality, one locality per endpoint',
    comparison: '@grpc/grpc-js-xds xds_wrr_locality',
  },
  {
    policy: 'priority',
    shape: 'one-priority',
    title: 'priority -> round_robin',
    comparison: '@grpc/grpc-js-xds priority',
  },
  {
    policy: 'priority',
    shape: 'xds-one-locality',
    title: 'xDS tree: priority -> xds_wrr_locality -> weighted_target -> round_robin, one locality',
    comparison: '@grpc/grpc-js-xds',
    connectAtOnce: true,
  },
];

/**
 * Beside the wall times: the same runs' process CPU time, and the host's steal meanwhile. A wall time well over
 * its CPU time with steal beside it was the host's doing, not the code's.
 */
function printCpuRows(n: number, ours: StormFigures, theirs: StormFigures | null): void {
  const metric = `${n} endpoints: first update + connect storm, process CPU time (median of the same runs)`;
  if (theirs === null) console.log(`| ${metric} | ${ours.upCpuMs.toFixed(2)} ms | not run | |`);
  else printRow(metric, ours.upCpuMs, theirs.upCpuMs, 'ms');
  const steal = (f: StormFigures | null): string =>
    f === null ? 'not run' : f.upStealPercent === null ? 'unknown' : `${f.upStealPercent.toFixed(0)} %`;
  console.log(
    `| ${n} endpoints: the host's steal of the machine's CPU time during those runs | ${steal(ours)} | ${steal(theirs)} | |`,
  );
}

export async function runStormBench(): Promise<void> {
  // STORM_CASES: the cases whose title starts with one of these (comma-separated), e.g. `round_robin,xDS`.
  const only = process.env.STORM_CASES?.split(',');
  for (const c of CASES) {
    if (only && !only.some((o) => c.title.startsWith(o))) continue;
    printTableHeader(`connect storm: ${c.title}`, c.comparison);
    let theirsPrevious: { n: number; ms: number } | null = null;
    for (const n of SIZES) {
      const job = { policy: c.policy, shape: c.shape, n };
      const ours = await storm({ ...job, library: 'lbtree', once: false, label: `lbtree ${c.title}` });
      const projected =
        theirsPrevious === null ? 0 : theirsPrevious.ms * (n / theirsPrevious.n) ** 2 * repeatsFor(n);
      const long = projected > SKIP_ABOVE_MS;
      if (long && !FULL) {
        console.log(
          `| ${n} endpoints: first update + connect storm | ${ours.upMs.toFixed(2)} ms | not run (~${(projected / 1000).toFixed(0)} s projected from ${theirsPrevious!.n}; STORM_FULL=1 runs it) | |`,
        );
        console.log(`| ${n} endpoints: disconnect storm | ${ours.downMs.toFixed(2)} ms | not run | |`);
        printCpuRows(n, ours, null);
      } else {
        const theirs = await storm({ ...job, library: 'grpc-js', once: long, label: `grpc-js ${c.title}` });
        const note = long ? ' (comparison: one run)' : '';
        printRow(`${n} endpoints: first update + connect storm${note}`, ours.upMs, theirs.upMs, 'ms');
        printRow(`${n} endpoints: disconnect storm${note}`, ours.downMs, theirs.downMs, 'ms');
        printCpuRows(n, ours, theirs);
        theirsPrevious = { n, ms: theirs.upMs + theirs.downMs };
      }
      if (c.connectAtOnce) {
        const theirsAtOnce = await atOnce({
          ...job,
          library: 'grpc-js',
          label: `grpc-js ${c.title}, connecting inside the first update`,
        });
        const oursAtOnce = await atOnce({
          ...job,
          library: 'lbtree',
          label: `lbtree ${c.title}, connecting inside the first update`,
        });
        // The comparison puts different work side by side (n connections reported one by one against
        // one update that finds them all READY): its rows say so, and their ratio is not like for like.
        printRow(
          `${n} endpoints, DIFFERENT WORK (the issue's comparison): lbtree first update + connect storm (one by one) / grpc-js first update with every fake connecting inside it`,
          ours.upMs,
          theirsAtOnce.ms,
          'ms',
        );
        printRow(
          `${n} endpoints, DIFFERENT WORK: the same two, process CPU time (medians)`,
          ours.upCpuMs,
          theirsAtOnce.cpuMs,
          'ms',
        );
        printRow(
          `${n} endpoints: first update with every subchannel connecting inside it (both)`,
          oursAtOnce.ms,
          theirsAtOnce.ms,
          'ms',
        );
      }
    }
  }
}
