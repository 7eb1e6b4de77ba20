/**
 * The metrics cost on a real channel, each mode in a process of its own (as a user's process holds its own
 * channels): two blocks children (bench/metrics-blocks-child.ts, BENCH_METRICS_DRIVEN=1), one channel each, warm
 * up side by side, then take turns block by block, the first of each cycle alternating, so the load falls on
 * both alike. In the one-process verdict (bench/metrics-blocks.ts) the channels of every mode share V8's compiled
 * code: grpc-js's call sites see every mode's objects (a tracked pick beside a plain one), which a process with
 * one channel does not. What a process's own code and heap layout add is read from a placebo: two processes of
 * the same mode. BENCH_METRICS_PAIRS (3) pairs of processes per comparison, BENCH_METRICS_PAIR_CYCLES (160)
 * measured cycles each; each pair's generations are the bootstrap's groups.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { childFlags } from './metrics-blocks.js';
import type { Block, BlocksResult } from './metrics-blocks-child.js';
import {
  costVerdict,
  intervalText,
  medianInterval,
  type RatioInterval,
  rateVerdict,
} from './paired-ratio.js';
import { median } from './report.js';

const PAIRS = Number(process.env.BENCH_METRICS_PAIRS) || 3;
const CYCLES = Number(process.env.BENCH_METRICS_PAIR_CYCLES) || 160;
const GENERATIONS = 4;

/** One driven child: its lines in order, and a way to send it one. */
class DrivenChild {
  private readonly child: ChildProcessByStdio<Writable, Readable, null>;
  private readonly lines: AsyncIterator<string>;
  private readonly exited: Promise<number | null>;

  constructor(
    target: string,
    readonly mode: string,
  ) {
    this.child = spawn(
      process.execPath,
      [...childFlags(), '--import', 'tsx', 'bench/metrics-blocks-child.ts'],
      {
        env: {
          ...process.env,
          BENCH_METRICS_TARGET: target,
          BENCH_METRICS_CHANNELS: mode,
          BENCH_METRICS_CYCLES: String(CYCLES),
          BENCH_METRICS_GENERATIONS: String(GENERATIONS),
          BENCH_METRICS_DRIVEN: '1',
        },
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    this.lines = createInterface({ input: this.child.stdout })[Symbol.asyncIterator]();
    this.exited = new Promise((resolve) => this.child.once('exit', resolve));
  }

  send(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  /** Waits for the child's next line, which must be `expected`. */
  async expect(expected: string): Promise<void> {
    const next = await this.lines.next();
    if (next.done || next.value !== expected)
      throw new Error(
        `metrics process pair: the ${this.mode} child said ${next.value ?? 'nothing'}, not ${expected}`,
      );
  }

  /** Ends the child; its blocks (its last line). */
  async finish(): Promise<BlocksResult> {
    this.send('end');
    let last = '';
    for (;;) {
      const next = await this.lines.next();
      if (next.done) break;
      last = next.value;
    }
    const code = await this.exited;
    if (code !== 0 || !last.startsWith('{'))
      throw new Error(`metrics process pair: the ${this.mode} child ended with ${code}`);
    return JSON.parse(last) as BlocksResult;
  }
}

/** One pair: a and b in processes of their own, taking turns; a's blocks and b's. */
async function runPair(target: string, a: string, b: string): Promise<[BlocksResult, BlocksResult]> {
  const children = [new DrivenChild(target, a), new DrivenChild(target, b)] as const;
  await Promise.all(children.map((c) => c.expect('ready')));
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    for (const child of cycle % 2 === 0 ? children : [children[1], children[0]]) {
      child.send(String(cycle));
      await child.expect('done');
    }
  }
  const [ra, rb] = await Promise.all(children.map((c) => c.finish()));
  return [ra!, rb!];
}

type Figure = 'calls per second' | 'CPU per call';

function figureOf(block: Block, figure: Figure): number {
  return figure === 'calls per second' ? block.calls / block.wallUs : block.cpuUs / block.calls;
}

/** Per cycle, a's figure over b's; one group per pair and generation. */
function ratios(pairs: readonly [BlocksResult, BlocksResult][], figure: Figure): number[][] {
  const groups: number[][] = [];
  for (const [ra, rb] of pairs) {
    const bByCycle = new Map(rb.blocks.map((block) => [block.cycle, block]));
    const byGeneration = new Map<number, number[]>();
    for (const x of ra.blocks) {
      const y = bByCycle.get(x.cycle);
      if (y === undefined) continue;
      const group = byGeneration.get(x.generation) ?? [];
      group.push(figureOf(x, figure) / figureOf(y, figure));
      byGeneration.set(x.generation, group);
    }
    groups.push(...byGeneration.values());
  }
  return groups;
}

function cell(r: RatioInterval, verdict: (r: RatioInterval) => string): string {
  return `${intervalText(r)}, **${verdict(r)}**`;
}

/** Each pair's own median CPU ratio: how far one pair of processes sits from the next. */
function perPair(pairs: readonly [BlocksResult, BlocksResult][]): string {
  return pairs.map(([ra, rb]) => median(ratios([[ra, rb]], 'CPU per call').flat()).toFixed(3)).join(', ');
}

/** The comparisons, each mode in a process of its own, and the placebo. */
export async function runProcessPairs(target: string): Promise<void> {
  const comparisons: [string, string, string][] = [
    ['off (a second process) vs off: the placebo', 'off', 'off'],
    ["§1's instruments on (A78, A94, A91, A89's labels) vs off: the goal", 'on-but-a96', 'off'],
    ["A96's experimental retry metrics enabled too vs off", 'on', 'off'],
  ];
  console.log(
    `\n## metrics (A79): each mode in a process of its own, two processes taking turns block by block (${PAIRS} pairs of processes per comparison, ${CYCLES} cycles each, after the blocks child's warm-up; 200 calls, 16 in flight, per block)\n`,
  );
  console.log(
    '| a vs b | calls per second, a / b: median (95 % interval), goal ≥ 0.98 | CPU per call (process), a / b, goal ≤ 1.02 | CPU per call, each pair of processes |',
  );
  console.log('|---|---|---|---|');
  for (const [label, a, b] of comparisons) {
    const pairs: [BlocksResult, BlocksResult][] = [];
    // The first process of a pair alternates too: a process started first warms up alone for a moment.
    for (let p = 0; p < PAIRS; p++) {
      if (p % 2 === 0) pairs.push(await runPair(target, a, b));
      else {
        const [rb, ra] = await runPair(target, b, a);
        pairs.push([ra, rb]);
      }
    }
    const qps = medianInterval(ratios(pairs, 'calls per second'));
    const cpu = medianInterval(ratios(pairs, 'CPU per call'));
    console.log(`| ${label} | ${cell(qps, rateVerdict)} | ${cell(cpu, costVerdict)} | ${perPair(pairs)} |`);
  }
}
