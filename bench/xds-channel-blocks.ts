/**
 * The cost of a call on an `xds:` channel (issue 25 §4), in ONE process: lbtree's `xds:///` channel and a plain
 * grpc-js round_robin channel over the same three loopback backends (lbtree's control plane and the backends
 * run here, outside the counted process) take turns in blocks of calls (bench/xds-channel-blocks-child.mjs):
 * sequential blocks and blocks with 50 in flight, the order swapped every cycle, each block's young garbage
 * collected inside its own window. Each cycle gives one ratio per figure (lbtree's block over plain's); the
 * verdict is the median of the ratios with its bootstrap 95 % interval (bench/paired-ratio.ts) against the
 * issue's 1.05.
 *
 * Beside bench/xds-channel-cost.ts, whose fresh processes (the issue's method) differ from each other by
 * several per cent whatever the channel (V8's warm-up and heap layout, the machine's other work): here both
 * channels share one process, its compiled code and its moment, so what differs is what each channel does per
 * call, after a warm-up of BENCH_BLOCKS_WARM_UP_CYCLES (30) cycles per mode. Sequential: BENCH_BLOCKS_SEQUENTIAL_CYCLES
 * (150) cycles of BENCH_BLOCKS_SEQUENTIAL_CALLS (300) calls a block; then 50 in flight: BENCH_BLOCKS_CONCURRENT_CYCLES
 * (300) of BENCH_BLOCKS_CONCURRENT_CALLS (500).
 */
import { loadavg } from 'node:os';
import { runJsonLineChild } from './json-line-child.js';
import { costVerdict, intervalText, medianInterval, type RatioInterval } from './paired-ratio.js';
import { median } from './report.js';
import { startXdsBenchService } from './xds-bench-service.js';

interface Block {
  readonly cycle: number;
  readonly mode: string;
  /** 0: plain grpc-js; 1: lbtree's xds: channel. */
  readonly channel: number;
  readonly calls: number;
  readonly wallUs: number;
  readonly cpuUs: number;
  /** -1 where /proc/thread-self/schedstat is missing. */
  readonly mainCpuUs: number;
}

type Figure = 'wallUs' | 'cpuUs' | 'mainCpuUs';

/** The goal: lbtree's per-call figures at most 1.05 × plain grpc-js's. */
const GOAL = 0.05;
/** The cycles are cut into this many runs of consecutive cycles, which the bootstrap resamples whole (drift). */
const GROUPS = 8;

async function runChild(bootstrap: unknown, addresses: readonly string[]): Promise<Block[]> {
  const line = await runJsonLineChild(
    [
      '--expose-gc',
      '--min-semi-space-size=64',
      '--max-semi-space-size=64',
      'bench/xds-channel-blocks-child.mjs',
    ],
    { BENCH_XDS_BOOTSTRAP: JSON.stringify(bootstrap), BENCH_PLAIN_ADDRESSES: addresses.join(',') },
    '[',
    'the xds-channel-blocks child',
  );
  return JSON.parse(line) as Block[];
}

/** Per cycle, lbtree's figure per call over plain's, in GROUPS runs of consecutive cycles. */
function ratios(blocks: readonly Block[], mode: string, figure: Figure): RatioInterval | null {
  const byCycle = new Map<number, Block[]>();
  for (const b of blocks) {
    if (b.mode !== mode) continue;
    const row = byCycle.get(b.cycle) ?? [];
    row[b.channel] = b;
    byCycle.set(b.cycle, row);
  }
  const cycles = [...byCycle.keys()].sort((a, b) => a - b);
  const groups: number[][] = Array.from({ length: GROUPS }, () => []);
  cycles.forEach((cycle, i) => {
    const [plain, ours] = byCycle.get(cycle)!;
    if (plain === undefined || ours === undefined || plain[figure] <= 0 || ours[figure] < 0) return;
    groups[Math.floor((i * GROUPS) / cycles.length)]!.push(
      ours[figure] / ours.calls / (plain[figure] / plain.calls),
    );
  });
  return groups.flat().length >= 2 ? medianInterval(groups) : null;
}

function perCall(blocks: readonly Block[], mode: string, channel: number, figure: Figure): number {
  return median(
    blocks.filter((b) => b.mode === mode && b.channel === channel).map((b) => b[figure] / b.calls),
  );
}

export async function runXdsChannelBlocksBench(): Promise<void> {
  const load = loadavg().map((x) => x.toFixed(2));
  const service = await startXdsBenchService();
  let blocks: Block[];
  try {
    blocks = await runChild(service.plane.bootstrap({ nodeId: 'cost-blocks' }), service.addresses);
  } finally {
    await service.stop();
  }
  const cycles = (mode: string) => new Set(blocks.filter((b) => b.mode === mode).map((b) => b.cycle)).size;
  console.log(
    `\n## the cost of a call on an xds:/// channel, one process: lbtree's xds: channel and plain grpc-js round_robin in interleaved blocks (${cycles('sequential')} sequential cycles, then ${cycles('50 in flight')} with 50 in flight; 3 loopback backends; load average at start ${load.join(' ')})\n`,
  );
  console.log(
    '| per call | lbtree xds: (median block) | plain grpc-js (median block) | lbtree / plain: median of the cycles (95 % interval) | goal ≤ 1.05 |',
  );
  console.log('|---|---|---|---|---|');
  const row = (label: string, mode: string, figure: Figure) => {
    const r = ratios(blocks, mode, figure);
    if (r === null) return;
    const us = (channel: number) => `${perCall(blocks, mode, channel, figure).toFixed(1)} µs`;
    const goal = figure === 'mainCpuUs' ? '—' : `**${costVerdict(r, GOAL)}**`;
    console.log(`| ${label} | ${us(1)} | ${us(0)} | ${intervalText(r)} | ${goal} |`);
  };
  row('wall, sequential', 'sequential', 'wallUs');
  row('CPU, sequential', 'sequential', 'cpuUs');
  row('  main thread CPU, sequential', 'sequential', 'mainCpuUs');
  row('CPU, 50 in flight', '50 in flight', 'cpuUs');
  row('  main thread CPU, 50 in flight', '50 in flight', 'mainCpuUs');
}
