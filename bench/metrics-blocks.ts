/**
 * The metrics cost verdict on a real channel (issue 24 §1: calls per second and CPU per call, the instruments §1
 * names on vs off and off vs none, within 2 %): one client process holds a channel of each mode (`on-but-a96` is
 * §1's instruments; `on` adds A96's experimental per-call retry metrics, judged beside) and runs them in
 * interleaved blocks (bench/metrics-blocks-child.ts); each cycle's blocks give one ratio per pair of channels, judged by the median of the ratios and its bootstrap 95 %
 * interval over the channels' generations and cycles (bench/paired-ratio.ts). Two self-tests run the same way and
 * say whether the method can see 2 %: two identical channels (none vs none) must come out met around 1.000,
 * and a channel given a known extra cost (a busy loop of BENCH_METRICS_SPIN_PERCENT, 3 %, of a call's CPU)
 * must come out missed. BENCH_METRICS_SELF_TEST=0 leaves them out, =only runs them alone; the child's knobs
 * (BENCH_METRICS_CYCLES, …) are listed in its comment.
 */
import { writeFileSync } from 'node:fs';
import { runJsonLineChild } from './json-line-child.js';
import type { Block, BlocksResult } from './metrics-blocks-child.js';
import {
  costVerdict,
  intervalText,
  medianInterval,
  type RatioInterval,
  rateVerdict,
} from './paired-ratio.js';
import { median } from './report.js';

/**
 * The child's young generation, MB per semi-space, fixed: larger than a block of calls allocates, so no
 * scavenge falls inside a block's calls and the one forced at its end collects exactly that block's garbage
 * (BENCH_METRICS_SEMI_SPACE_MB overrides; the bench prints the scavenges that still fell inside).
 */
const SEMI_SPACE_MB = 64;

/** The node flags of a blocks child: `--expose-gc` and the fixed young generation (see SEMI_SPACE_MB). */
export function childFlags(): string[] {
  const mb = Number(process.env.BENCH_METRICS_SEMI_SPACE_MB) || SEMI_SPACE_MB;
  // BENCH_METRICS_BLOCKS_NODE_FLAGS (space-separated) adds flags, e.g. --cpu-prof to profile the channels.
  const extra = (process.env.BENCH_METRICS_BLOCKS_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '');
  return ['--expose-gc', `--min-semi-space-size=${mb}`, `--max-semi-space-size=${mb}`, ...extra];
}

/**
 * The verdict run's size unless BENCH_METRICS_CYCLES / BENCH_METRICS_GENERATIONS say otherwise: what sets its
 * interval is how far the channels' generations sit apart, so more generations narrow it where more cycles of the
 * same 8 did not (stop 34: 24 generations of 50 cycles resolved both goal rows in about 3½ minutes, 400 × 8 did not).
 */
const VERDICT_SIZE = { BENCH_METRICS_CYCLES: '1200', BENCH_METRICS_GENERATIONS: '24' };

/** The verdict run's channels, and their places in its result. */
const VERDICT_CHANNELS = ['none', 'off', 'on', 'on-but-a96'];
const [NONE, OFF, ALL_ON, SECTION_1_ON] = [0, 1, 2, 3];

/** One run of the blocks child over `channels` (e.g. ['none', 'off', 'on']); `size`: the child's defaults if unset. */
export async function runBlocks(
  target: string,
  channels: readonly string[],
  size: Record<string, string> = {},
): Promise<BlocksResult> {
  const defaults = Object.fromEntries(
    Object.entries(size).filter(([name]) => process.env[name] === undefined),
  );
  const last = await runJsonLineChild(
    [...childFlags(), '--import', 'tsx', 'bench/metrics-blocks-child.ts'],
    { ...defaults, BENCH_METRICS_TARGET: target, BENCH_METRICS_CHANNELS: channels.join(',') },
    '{',
    `the metrics blocks child (${channels.join(',')})`,
  );
  if (process.env.BENCH_METRICS_BLOCKS_DUMP)
    writeFileSync(`${process.env.BENCH_METRICS_BLOCKS_DUMP}.${channels.join('_')}.json`, last);
  return JSON.parse(last) as BlocksResult;
}

type Figure = 'calls per second' | 'CPU per call' | 'main thread CPU per call';

/** Per cycle, channel a's figure over channel b's, grouped by the channels' generation. */
function pairedRatios(result: BlocksResult, a: number, b: number, figure: Figure): number[][] {
  const byCycle = new Map<number, Block[]>();
  for (const block of result.blocks) {
    const row = byCycle.get(block.cycle) ?? [];
    row[block.channel] = block;
    byCycle.set(block.cycle, row);
  }
  const groups: number[][] = Array.from({ length: result.generations }, () => []);
  for (const row of byCycle.values()) {
    const x = row[a];
    const y = row[b];
    if (x === undefined || y === undefined) continue;
    const group = groups[x.generation]!;
    if (figure === 'calls per second') group.push(x.calls / x.wallUs / (y.calls / y.wallUs));
    else if (figure === 'CPU per call') group.push(x.cpuUs / x.calls / (y.cpuUs / y.calls));
    else if (x.mainCpuUs >= 0 && y.mainCpuUs >= 0)
      group.push(x.mainCpuUs / x.calls / (y.mainCpuUs / y.calls));
  }
  return groups;
}

function judged(result: BlocksResult, a: number, b: number, figure: Figure): RatioInterval | null {
  const groups = pairedRatios(result, a, b, figure);
  return groups.flat().length >= 2 ? medianInterval(groups) : null;
}

function cell(r: RatioInterval | null, verdict: (r: RatioInterval) => string): string {
  return r === null ? '— (not measured here)' : `${intervalText(r)}, **${verdict(r)}**`;
}

/** One table row: channel a against channel b, each figure with its interval and verdict. */
function comparisonRow(result: BlocksResult, label: string, a: number, b: number): string {
  const qps = judged(result, a, b, 'calls per second');
  const cpu = judged(result, a, b, 'CPU per call');
  const main = judged(result, a, b, 'main thread CPU per call');
  return `| ${label} | ${cell(qps, rateVerdict)} | ${cell(cpu, costVerdict)} | ${cell(main, costVerdict)} |`;
}

/** Each channel's own figures (medians over its blocks) and the collections that fell inside its calls. */
function channelSummary(result: BlocksResult): string {
  return result.channels
    .map((name, i) => {
      const blocks = result.blocks.filter((b) => b.channel === i);
      const qps = median(blocks.map((b) => (b.calls / b.wallUs) * 1e6));
      const cpu = median(blocks.map((b) => b.cpuUs / b.calls));
      const scavenges = blocks.reduce((n, b) => n + b.scavenges, 0);
      const others = blocks.reduce((n, b) => n + b.otherGcs, 0);
      return `${name}: ${qps.toFixed(0)} calls/s, ${cpu.toFixed(1)} µs CPU per call, ${blocks.length} blocks, collections inside the calls ${scavenges} young / ${others} other`;
    })
    .join('; ');
}

function tableHeader(): void {
  console.log(
    '| a vs b | calls per second, a / b: median (95 % interval), goal ≥ 0.98 | CPU per call (process), a / b, goal ≤ 1.02 | main thread CPU per call, a / b (beside) |',
  );
  console.log('|---|---|---|---|');
}

function settings(result: BlocksResult): string {
  const cycles = new Set(result.blocks.map((b) => b.cycle)).size;
  return `${cycles} cycles × a block of ${result.blockCalls} calls (${result.inFlight} in flight) per channel, after ${result.warmupCycles} warm-up cycles; the channels made anew ${result.generations} times; node ${childFlags().join(' ')}`;
}

/**
 * The verdict run and the self-tests (BENCH_METRICS_SELF_TEST=0 leaves these out, =only runs them alone).
 * Returns the verdict run's calls per second (the median block), for the callgrind children's timer scaling.
 */
export async function runBlocksVerdict(target: string): Promise<number | undefined> {
  const onlySelfTest = process.env.BENCH_METRICS_SELF_TEST === 'only';
  const main = onlySelfTest ? null : await runBlocks(target, VERDICT_CHANNELS, VERDICT_SIZE);
  if (main !== null) printVerdict(main);
  if (process.env.BENCH_METRICS_SELF_TEST !== '0') await runSelfTest(target);
  return main === null ? undefined : median(main.blocks.map((b) => (b.calls / b.wallUs) * 1e6));
}

/**
 * Issue 24 §1's goal is about the instruments §1 names (A78, A94, A91, with A89's labels): `on-but-a96`, every
 * lbtree instrument but A96's four. A96's retry metrics are experimental (off unless enabled by name, A79) and the
 * only ones that do work per call: the channel with them too (`on`) is judged beside, as its own figure.
 */
const GOAL_ROWS: readonly [label: string, a: number, b: number][] = [
  ["§1's instruments on (A78, A94, A91, A89's labels) vs off: **the goal**", SECTION_1_ON, OFF],
  ['metrics off vs no recorder (none): **the goal**', OFF, NONE],
];

function printVerdict(main: BlocksResult): void {
  console.log(
    `\n## metrics (A79): the verdict, one client process, four channels in interleaved blocks (WRR, 3 loopback servers with ORCA in the bench's process; ${settings(main)})\n`,
  );
  tableHeader();
  for (const [label, a, b] of GOAL_ROWS) console.log(comparisonRow(main, label, a, b));
  console.log(comparisonRow(main, "§1's instruments on vs no recorder (none)", SECTION_1_ON, NONE));
  console.log(comparisonRow(main, "A96's experimental retry metrics enabled too vs off", ALL_ON, OFF));
  console.log(
    comparisonRow(main, "A96's retry metrics enabled too vs §1's instruments only", ALL_ON, SECTION_1_ON),
  );
  console.log(`\nIssue 24 §1's goal (both figures of both goal rows): **${goalVerdict(main)}**.`);
  console.log(`\nPer channel: ${channelSummary(main)}.`);
}

/** Met when both goal rows meet both figures, missed when any misses, otherwise not resolved. */
function goalVerdict(main: BlocksResult): string {
  const verdicts: string[] = [];
  for (const [, a, b] of GOAL_ROWS) {
    const qps = judged(main, a, b, 'calls per second');
    const cpu = judged(main, a, b, 'CPU per call');
    if (qps === null || cpu === null) return 'not measured';
    verdicts.push(rateVerdict(qps), costVerdict(cpu));
  }
  if (verdicts.includes('missed')) return 'missed';
  return verdicts.every((v) => v === 'met') ? 'met' : 'not resolved';
}

async function runSelfTest(target: string): Promise<void> {
  const same = await runBlocks(target, ['none', 'none']);
  const spun = await runBlocks(target, ['none', 'none+spin']);
  console.log(
    `\nSelf-test (two more runs, the same way, two channels each; ${settings(same)}): identical channels must come out met around 1.000; a known extra cost must come out missed: a busy loop before each call of the second channel, sized to ${Number(process.env.BENCH_METRICS_SPIN_PERCENT ?? 3)} % of a call after the warm-up and again at each generation, timed alone between the blocks at a median ${spun.spinCpuUsPerCall.toFixed(2)} µs per call, a median ${(100 * spun.spinShareOfCall).toFixed(1)} % of the first channel's CPU per call in the same cycle.\n`,
  );
  tableHeader();
  console.log(comparisonRow(same, 'none (second channel) vs none', 1, 0));
  console.log(comparisonRow(spun, 'none + busy loop vs none', 1, 0));
  const nullCpu = judged(same, 1, 0, 'CPU per call');
  const knownCpu = judged(spun, 1, 0, 'CPU per call');
  const sound =
    nullCpu !== null &&
    knownCpu !== null &&
    costVerdict(nullCpu) === 'met' &&
    costVerdict(knownCpu) === 'missed';
  console.log(
    `\nThe method ${sound ? 'resolves' : '**did not resolve**'} 2 % of CPU per call in this run (identical channels ${nullCpu ? costVerdict(nullCpu) : '—'}, the known cost ${knownCpu ? costVerdict(knownCpu) : '—'}). Per channel: ${channelSummary(same)}; ${channelSummary(spun)}.`,
  );
}
