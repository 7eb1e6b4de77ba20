/**
 * bench/metrics.ts's verdict on a real channel: ONE client process holding several grpc-js channels to the
 * same ORCA-reporting loopback servers (BENCH_METRICS_TARGET, served by the parent, whose CPU is not counted
 * here), each lbtree_weighted_round_robin with its own subchannels. BENCH_METRICS_CHANNELS names them, comma
 * separated: `none` (no metrics options: no recorder), `off` (a MeterProvider, nothing enabled), `on` (every
 * lbtree instrument and optional label enabled, @opentelemetry/sdk-metrics with a reader), `on-but-a96` (the
 * same without A96's four call retry metrics, the only ones that do work per call); a `+spin` suffix
 * adds a known cost to every call of that channel (a busy loop of BENCH_METRICS_SPIN_PERCENT, 3 %, of the first
 * channel's CPU per call, calibrated after the warm-up): the bench's self-test that the method can see 2 %.
 *
 * The channels take turns in blocks of BENCH_METRICS_BLOCK_CALLS (200) calls, BENCH_METRICS_IN_FLIGHT (16) at once, one cycle a block
 * of each, the order going through every permutation cycle after cycle, so that drift, load bursts and whatever
 * one block leaves to the next (garbage, caches, a timer) fall on every channel alike and each channel follows
 * each other one equally often. BENCH_METRICS_WARMUP_CYCLES (50: 10,000 calls a channel, where V8's optimizing
 * compiler was seen to settle) go first, unmeasured; BENCH_METRICS_CYCLES (400) are measured. A block's window
 * holds its calls, the events they leave queued (one setImmediate), and a young-generation collection forced at
 * its end: the node flags the parent gives (`--expose-gc` and a young generation larger than a block allocates)
 * keep scavenges out of the calls, so each block pays for collecting its own garbage and nobody else's. The
 * parent checks that by the collections this process saw inside the calls (`gc` performance entries).
 *
 * Sharing one process, the channels share V8's compiled code: a user process with metrics on has its recorder on
 * every channel anyway, and fresh processes per mode differed from each other by 12–49 % (JIT and heap layout,
 * docs/performance.md), far more than the 2 % to judge.
 *
 * With BENCH_METRICS_DRIVEN=1 the process holds one channel and its parent runs it against another process's
 * channel, block by block (bench/metrics-process-pairs.ts): each mode in a process of its own, as a user's.
 *
 * Prints one JSON line: each block's CPU time (the process's, every thread, and the main thread's alone from
 * /proc/thread-self/schedstat where there is one), its wall time, and the collections inside its calls.
 */

import { readFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import * as grpc from '@grpc/grpc-js';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { type MetricsOptions, registeredInstruments } from 'lbtree';
import { METRICS_CHANNEL_OPTION, metricsChannelOption, register } from 'lbtree/grpc-js';
import { type EchoClient, EchoClientClass } from './echo-service.js';

class PullReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export type BlockMode = 'none' | 'off' | 'on' | 'on-but-a96';

/** A96's call retry metrics: the only lbtree metrics that do work per call (a tracer per call). */
const A96_PREFIX = 'grpc.client.call.';

function enabledMetrics(mode: BlockMode): string[] {
  const all = registeredInstruments().map((i) => i.name);
  if (mode === 'on') return all;
  if (mode === 'on-but-a96') return all.filter((name) => !name.startsWith(A96_PREFIX));
  return [];
}

/** One block of calls on one channel, as this process measured it. */
export interface Block {
  readonly cycle: number;
  /** The channels' generation: every channel is made anew at each (see the file's comment). */
  readonly generation: number;
  /** Index into the run's channels. */
  readonly channel: number;
  readonly calls: number;
  readonly wallUs: number;
  /** CPU time of the whole process (every thread: V8's compiler and collector helpers too). */
  readonly cpuUs: number;
  /** CPU time of the main thread alone; -1 where /proc/thread-self/schedstat is missing. */
  readonly mainCpuUs: number;
  /** Collections V8 ran during the block's calls (not the forced one at its end): young, and the others. */
  readonly scavenges: number;
  readonly otherGcs: number;
}

export interface BlocksResult {
  readonly channels: readonly string[];
  readonly blockCalls: number;
  readonly inFlight: number;
  readonly warmupCycles: number;
  readonly generations: number;
  readonly blocks: readonly Block[];
  /** What the spin of a `+spin` channel costs per call, CPU µs, timed alone between the cycles (0: no spin). */
  readonly spinCpuUsPerCall: number;
  /** The median over the cycles of the spin's CPU over the first channel's CPU per call in the same cycle. */
  readonly spinShareOfCall: number;
}

const specs = (process.env.BENCH_METRICS_CHANNELS ?? 'none,off,on').split(',');
const target = process.env.BENCH_METRICS_TARGET!;
const inFlight = Number(process.env.BENCH_METRICS_IN_FLIGHT) || 16;
const blockCalls = Number(process.env.BENCH_METRICS_BLOCK_CALLS) || 200;
const warmupCycles = Number(process.env.BENCH_METRICS_WARMUP_CYCLES ?? 50);
const cycles = Number(process.env.BENCH_METRICS_CYCLES) || 400;
const generations = Math.min(cycles, Number(process.env.BENCH_METRICS_GENERATIONS) || 8);
/** Unmeasured cycles after a generation's channels are made: connections, WRR's first weights (1 s). */
const SETTLE_CYCLES = 10;
const spinPercent = Number(process.env.BENCH_METRICS_SPIN_PERCENT ?? 3);
/** BENCH_METRICS_DRIVEN=1: the parent says when to run each measured cycle (see the end of this file). */
const driven = process.env.BENCH_METRICS_DRIVEN === '1';
const gc = (globalThis as { gc?: (options?: { type: 'minor' | 'major' }) => void }).gc;
if (gc === undefined) throw new Error('bench/metrics-blocks-child.ts needs node --expose-gc');

function metricsOptions(mode: BlockMode): MetricsOptions | undefined {
  if (mode === 'none') return undefined;
  return metricsChannelOption({
    meterProvider: new MeterProvider({ readers: [new PullReader()] }),
    enableMetrics: enabledMetrics(mode),
    optionalLabels: [
      'grpc.lb.locality',
      'grpc.lb.backend_service',
      'grpc.disconnect_error',
      'grpc.security_level',
    ],
  });
}

function parseSpec(spec: string): { mode: BlockMode; spins: boolean } {
  const [mode, extra] = spec.split('+');
  const modes: readonly string[] = ['none', 'off', 'on', 'on-but-a96'];
  if (mode === undefined || !modes.includes(mode) || (extra !== undefined && extra !== 'spin'))
    throw new Error(
      `BENCH_METRICS_CHANNELS: "${spec}" is none, off, on or on-but-a96, with an optional +spin`,
    );
  return { mode: mode as BlockMode, spins: extra === 'spin' };
}

function channel(mode: BlockMode): EchoClient {
  const options = metricsOptions(mode);
  return new EchoClientClass(target, grpc.credentials.createInsecure(), {
    'grpc.service_config': JSON.stringify({
      loadBalancingConfig: [
        { lbtree_weighted_round_robin: { blackoutPeriod: '0s', weightUpdatePeriod: '1s' } },
      ],
    }),
    // Channels with the same options would share grpc-js's subchannels, and so their connections.
    'grpc.use_local_subchannel_pool': 1,
    ...(options && { [METRICS_CHANNEL_OPTION]: options }),
  }) as EchoClient;
}

let sink = 0;
/** A busy loop of `n` steps the compiler cannot drop: the known cost of the self-test. */
function spin(n: number): void {
  let x = sink;
  for (let i = 0; i < n; i++) x = (Math.imul(x, 1103515245) + 12345) | 0;
  sink = x;
}

const payload = Buffer.from('x');
function call(client: EchoClient): Promise<void> {
  return new Promise<void>((resolve, reject) => client.call(payload, (e) => (e ? reject(e) : resolve())));
}

/** `n` calls, `inFlight` at once, each after `spinSteps` of busy loop (0: none). */
async function callBlock(client: EchoClient, n: number, spinSteps: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next++ < n) {
      if (spinSteps > 0) spin(spinSteps);
      await call(client);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

const hasSchedstat = (() => {
  try {
    readFileSync('/proc/thread-self/schedstat');
    return true;
  } catch {
    return false;
  }
})();
/** The main thread's CPU time in µs (schedstat's first field is ns on a CPU). */
function mainThreadCpuUs(): number {
  if (!hasSchedstat) return -1;
  return Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ', 1)[0]) / 1000;
}

/** Start times (performance.now) of the collections V8 ran, by kind; forced ones are told apart by time. */
const collections: { start: number; minor: boolean }[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = (e as { detail?: { kind?: number } }).detail?.kind;
    collections.push({ start: e.startTime, minor: kind === 1 });
  }
}).observe({ entryTypes: ['gc'] });

/** The i-th permutation of 0 … k−1 (in lexicographic order, wrapping). */
function permutation(k: number, i: number): number[] {
  const rest = Array.from({ length: k }, (_, j) => j);
  const out: number[] = [];
  let index = i;
  let count = 1;
  for (let j = 2; j <= k; j++) count *= j;
  index %= count;
  for (let left = k; left > 0; left--) {
    count /= left;
    out.push(rest.splice(Math.floor(index / count), 1)[0]!);
    index %= count;
  }
  return out;
}

register();
const parsed = specs.map(parseSpec);
/** The channels of the current generation, by index into `specs`. */
let clients: EchoClient[] = [];
/** New channels for every spec, made in an order rotated by `generation` (so none is always made first). */
function newGeneration(generation: number): void {
  for (const client of clients) client.close();
  clients = new Array<EchoClient>(parsed.length);
  for (let j = 0; j < parsed.length; j++) {
    const index = (j + generation) % parsed.length;
    clients[index] = channel(parsed[index]!.mode);
  }
}
let spinSteps = 0;
let spinCpuUsPerCall = 0;
const blocks: Block[] = [];
/** Calls windows, to find which collections fell inside a block's calls. */
const callWindows: { block: number; start: number; end: number }[] = [];

/** Runs one block; keeps it when `generation` is given (a measured cycle). Returns its CPU µs per call. */
async function runBlock(cycle: number, index: number, generation: number | null): Promise<number> {
  const steps = parsed[index]!.spins ? spinSteps : 0;
  const wall = performance.now();
  const main = mainThreadCpuUs();
  const cpu = process.cpuUsage();
  await callBlock(clients[index]!, blockCalls, steps);
  const callsEnd = performance.now();
  await new Promise(setImmediate);
  gc!({ type: 'minor' });
  const used = process.cpuUsage(cpu);
  const mainUs = hasSchedstat ? mainThreadCpuUs() - main : -1;
  const wallUs = (performance.now() - wall) * 1000;
  const cpuUs = used.user + used.system;
  if (generation !== null) {
    callWindows.push({ block: blocks.length, start: wall, end: callsEnd });
    blocks.push({
      cycle,
      generation,
      channel: index,
      calls: blockCalls,
      wallUs,
      cpuUs,
      mainCpuUs: mainUs,
      scavenges: 0,
      otherGcs: 0,
    });
  }
  return cpuUs / blockCalls;
}

/** Steps of the spin timed in the warm-up's first half, to size it. */
const PROBE_STEPS = 1000;
const spins = parsed.some((p) => p.spins);
/** The first channel's CPU µs per call, and the spin's CPU µs per step, per warm-up cycle. */
const warmupCallUs: number[] = [];
const warmupStepUs: number[] = [];
/** The spin's CPU µs per call, timed alone once a measured cycle between the blocks (so under the same load). */
const spinTimings: number[] = [];
/** Per measured cycle, the spin timed alone over the first channel's CPU per call in that cycle. */
const spinShares: number[] = [];

/** One cycle: a block of each channel; with a spinning channel, the spin timed alone after them. */
async function runCycle(cycle: number, generation: number | null): Promise<void> {
  let cycleCallUs = 0;
  for (const index of permutation(clients.length, cycle)) {
    const perCall = await runBlock(cycle, index, generation);
    if (index === 0) cycleCallUs = perCall;
    if (index === 0 && generation === null) warmupCallUs.push(perCall);
  }
  if (!spins) return;
  const steps = spinSteps || PROBE_STEPS;
  const cpu = process.cpuUsage();
  for (let i = 0; i < blockCalls; i++) spin(steps);
  const used = process.cpuUsage(cpu);
  if (generation !== null) {
    const alone = (used.user + used.system) / blockCalls;
    spinTimings.push(alone);
    spinShares.push(alone / cycleCallUs);
  } else warmupStepUs.push((used.user + used.system) / blockCalls / steps);
}

const middle = (xs: number[]): number => xs.sort((a, b) => a - b)[xs.length >> 1]!;

/**
 * The spin's steps for `spinPercent` of a call, by the recent warm-up cycles: the call and the spin timed in
 * turns, the spin as it runs before the calls (its cost per step there was seen to differ from a first probe's).
 */
function sizeSpin(fromCycle: number): void {
  const callUs = middle(warmupCallUs.slice(fromCycle));
  const stepUs = middle(warmupStepUs.slice(fromCycle));
  spinSteps = Math.max(1, Math.round(((spinPercent / 100) * callUs) / stepUs));
}

/** Sizes the spin again by generation `g`'s blocks of the first channel and its spin timed alone. */
function resizeSpin(g: number): void {
  const callUs = middle(
    blocks.filter((b) => b.generation === g && b.channel === 0).map((b) => b.cpuUs / b.calls),
  );
  const stepUs = middle(spinTimings.slice(-Math.max(1, Math.floor(cycles / generations)))) / spinSteps;
  spinSteps = Math.max(1, Math.round(((spinPercent / 100) * callUs) / stepUs));
}

newGeneration(0);
const half = Math.floor(warmupCycles / 2);
for (let c = 0; c < warmupCycles; c++) {
  await runCycle(c, null);
  // Sized twice: by a probe in the first half, then by the spin itself running before the calls.
  if (spins && (c === half - 1 || c === warmupCycles - 1)) sizeSpin(c === half - 1 ? 0 : half);
}
/** Measured cycle `c`, with new channels (and their settling) first when it starts a generation. */
async function measuredCycle(c: number): Promise<void> {
  const generation = Math.floor((c * generations) / cycles);
  if (c > 0 && generation !== Math.floor(((c - 1) * generations) / cycles)) {
    // The spin's cost per step was seen to drift several-fold over a run (a busy loop and a call do not slow
    // alike under load): sized again by the last generation's figures.
    if (spins) resizeSpin(generation - 1);
    newGeneration(generation);
    for (let s = 0; s < SETTLE_CYCLES; s++) await runCycle(c, null);
  }
  await runCycle(c, generation);
}
if (driven) {
  // Driven by the parent (bench/metrics-process-pairs.ts): `ready` after the warm-up, then a measured cycle for
  // each line naming one, `done` after each, until `end`.
  process.stdout.write('ready\n');
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === 'end') break;
    await measuredCycle(Number(line));
    process.stdout.write('done\n');
  }
} else for (let c = 0; c < cycles; c++) await measuredCycle(c);
if (spins) spinCpuUsPerCall = middle(spinTimings);
const spinShareOfCall = spins ? middle(spinShares) : 0;
// Let the observer's last entries arrive, then count the collections inside each block's calls.
await new Promise((resolve) => setTimeout(resolve, 50));
const counted = blocks.map((b, i) => {
  const w = callWindows[i]!;
  const inside = collections.filter((g) => g.start >= w.start && g.start < w.end);
  return {
    ...b,
    scavenges: inside.filter((g) => g.minor).length,
    otherGcs: inside.filter((g) => !g.minor).length,
  };
});
for (const client of clients) client.close();
const result: BlocksResult = {
  channels: specs,
  blockCalls,
  inFlight,
  warmupCycles,
  generations,
  blocks: counted,
  spinCpuUsPerCall,
  spinShareOfCall,
};
// Exit only once the line is written: stdout to a pipe is asynchronous, and a long run's line is megabytes.
process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
