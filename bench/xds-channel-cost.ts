/**
 * The cost of a call on an `xds:` channel (issue 25 §4): lbtree's `xds:///` channel beside a plain grpc-js
 * round_robin channel over the same three loopback backends (no xDS at all: the floor) and beside
 * @grpc/grpc-js-xds's `xds:///` channel, against the same lbtree control plane, in the same run. Each channel is
 * a fresh process (bench/xds-channel-cost-client.mjs, plain JavaScript without tsx, so start-up loads modules
 * as a user's process does); each round starts one process per side, the order rotating between rounds so no
 * side always runs first. Per process:
 *   - process start → first OK call: performance.now() (ms since the process started) when the first call
 *     (wait-for-ready) succeeds; beside it, when the channel's modules had loaded;
 *   - after WARM_UP calls: wall and CPU time (user + system) per call over SEQUENTIAL calls one at a time, and
 *     CPU per call over CONCURRENT calls with 50 in flight, with the full (mark-compact) collections V8 ran
 *     during those;
 *   - at the end, the heap the process keeps (used after a full collection): at 50 in flight a process's CPU per
 *     call follows the size of its heap (docs/performance.md, stop 34).
 * Medians of ROUNDS rounds. Goals (issue 25 §4): per-call wall and CPU ≤ 1.05 × plain; first OK call ≤ ½ of
 * grpc-js-xds's. Each round also runs plain grpc-js a second time, in a process of its own (the placebo): its
 * ratio to the first plain process is what this bench reads between two identical processes, the resolution
 * against which lbtree's ratio is read (BENCH_COST_PLACEBO=0 leaves it out). Knobs: BENCH_COST_ROUNDS,
 * BENCH_COST_WARM_UP, BENCH_COST_SEQUENTIAL, BENCH_COST_CONCURRENT, BENCH_COST_NODE_FLAGS (e.g. `--cpu-prof
 * --cpu-prof-dir=/tmp/prof`), BENCH_COST_SIDES (raw figures of some).
 *
 * BENCH_COST_CALLGRIND=1 also runs each side once under valgrind's callgrind and counts the instructions (Ir)
 * its process executes per sequential call over BENCH_COST_CALLGRIND_CALLS calls (default 1,000) after the
 * warm-up (counters zeroed before and dumped after with callgrind_control), and from process start to its first OK
 * call (dumped then): figures the machine's load does
 * not move. It is given for the whole process and for its main thread alone: V8's optimizing compiler still
 * runs on background threads after the warm-up (about half of the process's instructions in those 1,000
 * calls), which moves the whole-process figure by a few per cent between runs. BENCH_COST_ROUNDS=0 with it prints only those figures; BENCH_COST_CALLGRIND_KEEP=<dir> keeps the dumps.
 * BENCH_COST_CALLGRIND_IN_FLIGHT=50 counts those calls with 50 in flight instead of one after the other.
 * BENCH_COST_CALLGRIND_CACHE=1 adds callgrind's cache simulation (about twice as slow; the last level set to
 * 1 MiB, 16-way, the size of a core's L2, since valgrind reads this machine's as 256 MB direct-mapped): the main
 * thread's first-level and last-level cache misses per call, what instruction counts leave out (more heap and
 * more code touch more memory per call).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { median } from './report.js';
import { startXdsBenchService } from './xds-bench-service.js';

type Side = 'lbtree' | 'grpc-js-plain' | 'grpc-js-xds';
const ALL_SIDES: readonly Side[] = ['lbtree', 'grpc-js-plain', 'grpc-js-xds'];
const ONLY = process.env.BENCH_COST_SIDES?.split(',');
const SIDES = ALL_SIDES.filter((s) => !ONLY || ONLY.includes(s));
/** Plain grpc-js again, in a process of its own: what two identical processes read apart. */
const PLACEBO = process.env.BENCH_COST_PLACEBO !== '0' && SIDES.length === ALL_SIDES.length;
/** A process of a round: one of the sides, or the placebo (a second plain process). */
type Slot = Side | 'placebo';
const ROUNDS = Number(process.env.BENCH_COST_ROUNDS ?? 3);
const NODE_FLAGS = process.env.BENCH_COST_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
const CALLGRIND = process.env.BENCH_COST_CALLGRIND === '1';
const CALLGRIND_CALLS = Number(process.env.BENCH_COST_CALLGRIND_CALLS ?? 1_000);
/** BENCH_COST_CALLGRIND_IN_FLIGHT=50 counts the calls with 50 in flight instead of one after the other. */
const CALLGRIND_IN_FLIGHT = Number(process.env.BENCH_COST_CALLGRIND_IN_FLIGHT ?? 1);
/** BENCH_COST_CALLGRIND_KEEP=<dir>: keep each side's dump there (callgrind_annotate it), not in a removed temp dir. */
const KEEP_DUMPS = process.env.BENCH_COST_CALLGRIND_KEEP;
const CACHE_SIM = process.env.BENCH_COST_CALLGRIND_CACHE === '1';
const CLIENT = fileURLToPath(new URL('./xds-channel-cost-client.mjs', import.meta.url));

interface PerCall {
  readonly wallUs: number;
  readonly cpuUs: number;
  /** The main thread's share of cpuUs (Linux only, in 10 ms ticks; null elsewhere). */
  readonly mainCpuUs: number | null;
}

interface ConcurrentPerCall extends PerCall {
  /** Full (mark-compact) collections during the calls. */
  readonly markCompacts: number;
}

export interface CostFigures {
  readonly mainMs: number;
  readonly loadedMs: number;
  readonly firstOkMs: number;
  readonly sequential: PerCall;
  readonly concurrent: ConcurrentPerCall;
  /** Used heap after a full collection at the end of the run, MB: what the process keeps. */
  readonly heapMb: number;
}

function clientEnv(bootstrap: unknown, addresses: readonly string[]): NodeJS.ProcessEnv {
  return {
    ...process.env,
    BENCH_XDS_BOOTSTRAP: JSON.stringify(bootstrap),
    BENCH_PLAIN_ADDRESSES: addresses.join(','),
  };
}

function runClient(side: Side, bootstrap: unknown, addresses: readonly string[]): Promise<CostFigures> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...NODE_FLAGS, CLIENT, side], {
      env: clientEnv(bootstrap, addresses),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
    });
    child.once('exit', (code, signal) => {
      if (code !== 0) reject(new Error(`xds-channel-cost: the ${side} process ended (${signal ?? code})`));
      else {
        // The figures are the last line; anything before it (e.g. --trace-gc's output) is passed on.
        const lines = out.trimEnd().split('\n');
        if (lines.length > 1) console.error(lines.slice(0, -1).join('\n'));
        resolve(JSON.parse(lines.at(-1)!) as CostFigures);
      }
    });
  });
}

/**
 * One side's channel process under callgrind (see the header): instructions per sequential call, and from process
 * start to the first OK call; each for the whole process and its main thread alone (without V8's compiler and GC
 * threads).
 */
interface IrPerCall {
  readonly all: number;
  readonly main: number;
  readonly startAll: number;
  readonly startMain: number;
  /** With BENCH_COST_CALLGRIND_CACHE=1: the main thread's cache misses per call (instruction + data). */
  readonly mainMisses?: CacheMisses;
}

interface CacheMisses {
  readonly firstLevel: number;
  readonly lastLevel: number;
}

/** The first- and last-level cache misses in one thread's dump (callgrind's --cache-sim events). */
function cacheMisses(dump: string): CacheMisses {
  const events = /^events: (.*)$/m.exec(dump)?.[1]?.trim().split(/\s+/);
  const totals = /^(?:summary|totals): (.*)$/m.exec(dump)?.[1]?.trim().split(/\s+/).map(Number);
  if (events === undefined || totals === undefined)
    throw new Error('xds-channel-cost: no cache events in a dump');
  const sum = (names: readonly string[]) =>
    names.reduce((total, name) => {
      const i = events.indexOf(name);
      if (i < 0) throw new Error(`xds-channel-cost: no ${name} in the dump's events (${events.join(' ')})`);
      return total + (totals[i] ?? 0);
    }, 0);
  return { firstLevel: sum(['I1mr', 'D1mr', 'D1mw']), lastLevel: sum(['ILmr', 'DLmr', 'DLmw']) };
}

/**
 * The instruction totals of callgrind's dump part `part` in `dir`: every thread's, and the main thread's (with
 * its cache misses under the cache simulation).
 */
function dumpTotals(
  dir: string,
  part: number,
  side: Side,
): { all: number; main: number; mainMisses: CacheMisses | undefined } {
  // One file per thread: out.<pid>.<part>-01 is the main thread (the event loop, JavaScript); the others are
  // V8's background threads (optimizing compiler, concurrent marking) and libuv's pool.
  const dumps = readdirSync(dir).filter((f) => new RegExp(`\\.${part}-\\d+$`).test(f));
  if (dumps.length === 0)
    throw new Error(`xds-channel-cost: no callgrind dump ${part} for ${side} in ${dir}`);
  let all = 0;
  let main = 0;
  let mainMisses: CacheMisses | undefined;
  for (const dump of dumps) {
    const text = readFileSync(join(dir, dump), 'utf8');
    const summary = /^(?:summary|totals): (\d+)/m.exec(text);
    if (!summary) throw new Error(`xds-channel-cost: no instruction total in ${dump}`);
    all += Number(summary[1]);
    if (!dump.endsWith(`.${part}-01`)) continue;
    main = Number(summary[1]);
    if (CACHE_SIM) mainMisses = cacheMisses(text);
  }
  return { all, main, mainMisses };
}

async function callgrindIrPerCall(
  side: Side,
  bootstrap: unknown,
  addresses: readonly string[],
): Promise<IrPerCall> {
  const dir = mkdtempSync(join(KEEP_DUMPS ?? tmpdir(), `lbtree-callcost-${side}-`));
  try {
    const child = spawn(
      'valgrind',
      [
        '--tool=callgrind',
        '--separate-threads=yes',
        ...(CACHE_SIM ? ['--cache-sim=yes', '--LL=1048576,16,64'] : []),
        `--callgrind-out-file=${join(dir, 'out.%p')}`,
        `--log-file=${join(dir, 'valgrind.log')}`,
        process.execPath,
        CLIENT,
        side,
      ],
      {
        env: {
          ...clientEnv(bootstrap, addresses),
          BENCH_COST_CALLGRIND_CALLS: String(CALLGRIND_CALLS),
          BENCH_COST_CALL_DEADLINE_MS: String(30 * 60_000),
        },
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const expect = async (line: string) => {
      const next = await Promise.race([lines.next(), exited.then(() => null)]);
      if (next === null || next.done || next.value !== line) {
        throw new Error(`xds-channel-cost: the ${side} process under callgrind did not say '${line}'`);
      }
    };
    const pid = String(child.pid);
    await expect('started');
    execFileSync('callgrind_control', ['-d', 'start', pid], { stdio: 'ignore' });
    child.stdin.write('go\n');
    await expect('counting');
    execFileSync('callgrind_control', ['-z', pid], { stdio: 'ignore' });
    child.stdin.write('go\n');
    await expect('counted');
    execFileSync('callgrind_control', ['-d', 'calls', pid], { stdio: 'ignore' });
    child.stdin.end('exit\n');
    if ((await exited) !== 0) throw new Error(`xds-channel-cost: the ${side} process under callgrind failed`);
    const start = dumpTotals(dir, 1, side);
    const calls = dumpTotals(dir, 2, side);
    return {
      all: calls.all / CALLGRIND_CALLS,
      main: calls.main / CALLGRIND_CALLS,
      startAll: start.all,
      startMain: start.main,
      ...(calls.mainMisses
        ? {
            mainMisses: {
              firstLevel: calls.mainMisses.firstLevel / CALLGRIND_CALLS,
              lastLevel: calls.mainMisses.lastLevel / CALLGRIND_CALLS,
            },
          }
        : {}),
    };
  } finally {
    if (KEEP_DUMPS === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

export async function runXdsChannelCostBench(): Promise<void> {
  const load = loadavg().map((x) => x.toFixed(2));
  const service = await startXdsBenchService();
  const { addresses, plane } = service;
  const runs: Record<Slot, CostFigures[]> = {
    lbtree: [],
    'grpc-js-plain': [],
    'grpc-js-xds': [],
    placebo: [],
  };
  const ir = new Map<Side, IrPerCall>();
  try {
    const slots: readonly Slot[] = PLACEBO ? [...SIDES, 'placebo'] : SIDES;
    for (let round = 0; round < ROUNDS; round++) {
      // The order rotates: each process goes first, second, third (and fourth) in turn.
      const order = slots.map((_, i) => slots[(i + round) % slots.length]!);
      for (const slot of order) {
        const side = slot === 'placebo' ? 'grpc-js-plain' : slot;
        runs[slot].push(
          await runClient(side, plane.bootstrap({ nodeId: `cost-${slot}-${round}` }), addresses),
        );
      }
    }
    for (const side of CALLGRIND ? SIDES : []) {
      ir.set(
        side,
        await callgrindIrPerCall(side, plane.bootstrap({ nodeId: `cost-${side}-callgrind` }), addresses),
      );
    }
  } finally {
    await service.stop();
  }
  if (SIDES.length < ALL_SIDES.length || ROUNDS === 0) {
    if (ROUNDS > 0) console.log(JSON.stringify(runs, null, 1));
    printIrPerCall(ir);
    return;
  }
  const m = (slot: Slot, f: (x: CostFigures) => number) => median(runs[slot].map(f));
  console.log(
    `\n## the cost of a call on an xds:/// channel: fresh processes, 3 loopback backends, round_robin (median of ${ROUNDS} rounds; load average at start ${load.join(' ')})\n`,
  );
  console.log(
    `| metric | lbtree xds: | grpc-js round_robin (plain, no xDS) | @grpc/grpc-js-xds | lbtree / plain | lbtree / grpc-js-xds | goal |${PLACEBO ? ' plain again / plain (placebo) |' : ''}`,
  );
  console.log(`|---|---|---|---|---|---|---|${PLACEBO ? '---|' : ''}`);
  const row = (metric: string, f: (x: CostFigures) => number, unit: string, goal: string) => {
    const [ours, plain, xds] = [m('lbtree', f), m('grpc-js-plain', f), m('grpc-js-xds', f)];
    const cell = (x: number) => (unit === '' ? x.toFixed(1) : `${x.toFixed(unit === 'ms' ? 1 : 2)} ${unit}`);
    // A count can be 0 on a side (no mark-compact in a short run): no ratio then.
    const ratio = (a: number, b: number) => (b === 0 ? '—' : (a / b).toFixed(3));
    const placebo = PLACEBO ? ` ${ratio(m('placebo', f), plain)} |` : '';
    console.log(
      `| ${metric} | ${cell(ours)} | ${cell(plain)} | ${cell(xds)} | ${ratio(ours, plain)} | ${ratio(ours, xds)} | ${goal} |${placebo}`,
    );
  };
  row('process start → first OK call', (x) => x.firstOkMs, 'ms', '≤ 0.5 × grpc-js-xds');
  // The first OK call's stretches (issue 25 §4): Node's own start (the same code on every side), then the
  // channel's modules (import and register), then the first call (the xDS client, its resources, the tree,
  // the first connection).
  row('process start → client module runs', (x) => x.mainMs, 'ms', '');
  row('client module runs → channel modules loaded', (x) => x.loadedMs - x.mainMs, 'ms', '');
  row('process start → channel modules loaded', (x) => x.loadedMs, 'ms', '');
  row('channel modules loaded → first OK call', (x) => x.firstOkMs - x.loadedMs, 'ms', '');
  row('wall per call, sequential', (x) => x.sequential.wallUs, 'µs', '≤ 1.05 × plain');
  row('CPU per call, sequential', (x) => x.sequential.cpuUs, 'µs', '≤ 1.05 × plain');
  // Where a difference is: the event loop's thread, or V8's helper threads (optimizing compiler, GC marking and
  // parallel scavenges), which still work after the warm-up.
  if (SIDES.every((side) => runs[side].every((x) => x.sequential.mainCpuUs !== null))) {
    row('  of which the main thread', (x) => x.sequential.mainCpuUs!, 'µs', '');
    row('  of which other threads', (x) => x.sequential.cpuUs - x.sequential.mainCpuUs!, 'µs', '');
  }
  row('CPU per call, 50 in flight', (x) => x.concurrent.cpuUs, 'µs', '≤ 1.05 × plain');
  // Why a fresh process's figure at 50 in flight follows its heap (docs/performance.md, stop 34): a bigger old
  // generation is collected less often, at a higher cost each time.
  row('  mark-compacts during those calls', (x) => x.concurrent.markCompacts, '', '');
  row('heap kept (used after a full collection, at the end)', (x) => x.heapMb, 'MB', '');
  const rounds = (slot: Slot) =>
    runs[slot]
      .map(
        (x) =>
          `${x.firstOkMs.toFixed(0)} ms / ${x.sequential.wallUs.toFixed(0)} / ${x.sequential.cpuUs.toFixed(0)} / ${x.concurrent.cpuUs.toFixed(0)} µs`,
      )
      .join(', ');
  console.log(
    `\nRounds in order (first OK call / sequential wall / sequential CPU / CPU at 50 in flight, per call): lbtree ${rounds('lbtree')}; plain ${rounds('grpc-js-plain')}; grpc-js-xds ${rounds('grpc-js-xds')}${PLACEBO ? `; plain again ${rounds('placebo')}` : ''}.`,
  );
  printIrPerCall(ir);
}

function printIrPerCall(ir: ReadonlyMap<Side, IrPerCall>): void {
  if (ir.size === 0) return;
  const plain = ir.get('grpc-js-plain');
  const xds = ir.get('grpc-js-xds');
  const ratio = (a: number, b: number | undefined, name: string) =>
    b === undefined ? '' : ` (${(a / b).toFixed(3)} × ${name})`;
  const perCall = (side: Side) => {
    const x = ir.get(side);
    if (x === undefined) return 'not counted';
    const misses = x.mainMisses;
    const cache =
      misses === undefined
        ? ''
        : `; main thread's cache misses ${misses.firstLevel.toFixed(0)} first-level${ratio(misses.firstLevel, plain?.mainMisses?.firstLevel, 'plain')}, ${misses.lastLevel.toFixed(0)} last-level${ratio(misses.lastLevel, plain?.mainMisses?.lastLevel, 'plain')}`;
    return `${x.all.toFixed(0)} Ir${ratio(x.all, plain?.all, 'plain')}, main thread ${x.main.toFixed(0)} Ir${ratio(x.main, plain?.main, 'plain')}${cache}`;
  };
  const start = (side: Side) => {
    const x = ir.get(side);
    if (x === undefined) return 'not counted';
    const g = (n: number) => `${(n / 1e9).toFixed(3)} G`;
    return `${g(x.startAll)}${ratio(x.startAll, xds?.startAll, 'grpc-js-xds')}, main thread ${g(x.startMain)}${ratio(x.startMain, xds?.startMain, 'grpc-js-xds')}`;
  };
  console.log(
    `\ninstructions per ${CALLGRIND_IN_FLIGHT > 1 ? `call at ${CALLGRIND_IN_FLIGHT} in flight` : 'sequential call'} (callgrind Ir, ${CALLGRIND_CALLS.toLocaleString('en')} calls after the warm-up; all threads, and the main thread alone): lbtree xds: ${perCall('lbtree')}; grpc-js round_robin (plain) ${perCall('grpc-js-plain')}; @grpc/grpc-js-xds ${perCall('grpc-js-xds')}.`,
  );
  console.log(
    `instructions from process start to the first OK call (callgrind Ir; all threads, and the main thread alone): lbtree xds: ${start('lbtree')}; grpc-js round_robin (plain) ${start('grpc-js-plain')}; @grpc/grpc-js-xds ${start('grpc-js-xds')}.`,
  );
}
