/**
 * bench/metrics.ts's instruction counts (BENCH_METRICS_CALLGRIND=1), one fresh process per count: a
 * lbtree_weighted_round_robin grpc-js channel over ORCA-reporting loopback servers
 * (bench/metrics-channel-child.ts) with metrics on (every instrument), off (a MeterProvider, nothing enabled) or
 * none (no recorder), under callgrind: instructions per RPC over a window after a warm-up. The servers run in
 * the parent, outside the count. The counters are zeroed after the warm-up and dumped after the window
 * (callgrind_control) while the child's main thread waits in a blocking read, one file per thread
 * (`--separate-threads=yes`), and the heap is collected before the window ({@link CALLGRIND_NODE_FLAGS}). The
 * main thread's count and every thread's are both judged: V8's helper threads (its optimizing compiler and its
 * collector's marking) do more than half of a window's instructions, at times of their own (see
 * docs/performance.md). The child scales the WRR weight_update_period (a wall-clock timer) to its own rate
 * under valgrind, so its window sees about as many scheduler updates per call as a native one (see the child).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export type Mode = 'none' | 'off' | 'on';

/**
 * The node flags of a counted child, for the count only (the native children run without them): `--expose-gc`,
 * so the child collects its heap before the window. V8's own behaviour is left as a user's channel has it:
 * `--single-threaded --predictable-gc-schedule` (BENCH_METRICS_CALLGRIND_NODE_FLAGS) did not make the counts
 * agree (docs/performance.md, "Metrics"), and the smaller young generation of the second adds GC work of its own.
 */
export const CALLGRIND_NODE_FLAGS: readonly string[] = ['--expose-gc'];

interface WindowFigure {
  readonly rpcs: number;
  /** The weight_update_period the measured channel ran with, in seconds. */
  readonly periodS: number;
  /** Scheduler updates the SDK saw during the window (metrics on only; -1 otherwise). */
  readonly updates: number;
}

export interface CallgrindFigure extends WindowFigure {
  /** Instructions of the main thread per RPC. */
  readonly mainIrPerRpc: number;
  /** Instructions of every thread per RPC. */
  readonly allIrPerRpc: number;
}

/**
 * One channel process under callgrind: instructions per RPC over `rpcs` calls after the warm-up, with the
 * scheduler period scaled to `nativeQps` (the calls per second a native channel makes).
 */
export async function callgrindWindow(
  mode: Mode,
  target: string,
  rpcs: number,
  nativeQps: number,
): Promise<CallgrindFigure> {
  const dir = mkdtempSync(join(tmpdir(), 'lbtree-metrics-callgrind-'));
  try {
    const { window, pid } = await runChild(mode, target, rpcs, { dir, nativeQps });
    // Dump parts are numbered; the window's is the last (a part before it would be someone's stray dump).
    const parts = readdirSync(dir)
      .map((f) => /\.out\.(\d+)-(\d+)$/.exec(f))
      .filter((m) => m !== null);
    const last = Math.max(...parts.map((m) => Number(m[1])));
    const threads = parts
      .filter((m) => Number(m[1]) === last)
      .map((m) => ({ thread: Number(m[2]), ir: totalIr(join(dir, m.input)) }));
    const main = threads.find((t) => t.thread === 1);
    if (main === undefined)
      throw new Error(`no callgrind dump of the ${mode} channel's main thread (pid ${pid})`);
    const all = threads.reduce((sum, t) => sum + t.ir, 0);
    return { ...window, mainIrPerRpc: main.ir / rpcs, allIrPerRpc: all / rpcs };
  } finally {
    // BENCH_METRICS_CALLGRIND_KEEP=1 keeps the dumps (for callgrind_annotate), and says where.
    if (process.env.BENCH_METRICS_CALLGRIND_KEEP === '1')
      console.error(`callgrind dumps of a ${mode} channel: ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

function totalIr(file: string): number {
  const summary = /^(?:summary|totals): (\d+)/m.exec(readFileSync(file, 'utf8'));
  if (!summary) throw new Error(`no instruction total in ${file}`);
  return Number(summary[1]);
}

async function runChild(
  mode: Mode,
  target: string,
  rpcs: number,
  callgrind: { dir: string; nativeQps: number },
): Promise<{ window: WindowFigure; pid: string }> {
  // BENCH_METRICS_CALLGRIND_NODE_FLAGS (space-separated) replaces the counted children's flags, to compare.
  const given = process.env.BENCH_METRICS_CALLGRIND_NODE_FLAGS;
  const flags = given !== undefined ? given.split(' ').filter((f) => f !== '') : CALLGRIND_NODE_FLAGS;
  const args = [
    '--tool=callgrind',
    '--separate-threads=yes',
    `--callgrind-out-file=${join(callgrind.dir, 'run.%p.out')}`,
    process.execPath,
    ...flags,
    '--import',
    'tsx',
    'bench/metrics-channel-child.ts',
  ];
  const child = spawn('valgrind', args, {
    env: {
      ...process.env,
      BENCH_METRICS_MODE: mode,
      BENCH_METRICS_TARGET: target,
      BENCH_METRICS_NATIVE_QPS: String(callgrind.nativeQps),
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  try {
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const next = async (prefix: string): Promise<string[]> => {
      for (;;) {
        const { value, done } = await lines.next();
        if (done) throw new Error(`the ${mode} channel process ended before "${prefix}"`);
        if ((value as string).startsWith(`${prefix} `)) return (value as string).split(' ').slice(1);
      }
    };
    const [pid, period] = await next('ready');
    // callgrind_control without a pid would command every callgrind process on the machine.
    if (!/^\d+$/.test(pid ?? '')) throw new Error(`the ${mode} channel process gave no pid: "${pid}"`);
    execFileSync('callgrind_control', ['-z', pid!], { stdio: 'ignore' });
    child.stdin.write(`go ${rpcs}\n`);
    await next('done');
    execFileSync('callgrind_control', ['-d', 'window', pid!], { stdio: 'ignore' });
    child.stdin.write('updates\n');
    const [updates] = await next('updates');
    child.stdin.write('exit\n');
    await new Promise((resolve) => child.once('exit', resolve));
    return {
      pid: pid!,
      window: {
        rpcs,
        periodS: Number(period),
        updates: Number(updates),
      },
    };
  } finally {
    if (child.exitCode === null) child.kill();
  }
}
