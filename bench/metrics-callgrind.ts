/**
 * bench/metrics.ts's load-independent figure: the instructions (callgrind Ir) a grpc-js channel process executes
 * per real RPC, for a lbtree_weighted_round_robin channel over ORCA-reporting loopback servers, with metrics on
 * (every instrument), off (a MeterProvider, nothing enabled) and none (no recorder). Each channel runs alone in
 * a child process under valgrind (bench/metrics-channel-child.ts); its counters are zeroed after a warm-up and
 * dumped after RPCS calls (callgrind_control). The servers run in this process, outside the count.
 * The WRR scheduler update is a 1 s timer, so under valgrind (tens of times slower) a window of calls sees more
 * updates per call than a native run does: the child reports the updates seen with metrics on, so the table can
 * say how many there were.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export type Mode = 'none' | 'off' | 'on';

export interface CallgrindFigure {
  readonly irPerRpc: number;
  /** Scheduler updates during the counted window (metrics on only; -1 otherwise). */
  readonly updates: number;
}

/** One channel process under callgrind: Ir per RPC over `rpcs` calls after the warm-up. */
export async function callgrindIrPerRpc(mode: Mode, target: string, rpcs: number): Promise<CallgrindFigure> {
  const dir = mkdtempSync(join(tmpdir(), 'lbtree-metrics-callgrind-'));
  try {
    const child = spawn(
      'valgrind',
      [
        '--tool=callgrind',
        `--callgrind-out-file=${join(dir, 'run.%p.out')}`,
        process.execPath,
        '--import',
        'tsx',
        'bench/metrics-channel-child.ts',
      ],
      {
        env: { ...process.env, BENCH_METRICS_MODE: mode, BENCH_METRICS_TARGET: target },
        stdio: ['pipe', 'pipe', 'ignore'],
      },
    );
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const next = async (prefix: string): Promise<string> => {
      for (;;) {
        const { value, done } = await lines.next();
        if (done) throw new Error(`the ${mode} channel process ended before "${prefix}"`);
        if ((value as string).startsWith(prefix)) return (value as string).slice(prefix.length).trim();
      }
    };
    const pid = await next('ready');
    execFileSync('callgrind_control', ['-z', pid], { stdio: 'ignore' });
    child.stdin.write(`go ${rpcs}\n`);
    const updates = Number(await next('done'));
    execFileSync('callgrind_control', ['-d', 'window', pid], { stdio: 'ignore' });
    child.stdin.write('exit\n');
    await new Promise((resolve) => child.once('exit', resolve));
    const dump = readdirSync(dir).find((f) => f.endsWith('.1'));
    if (dump === undefined) throw new Error(`no callgrind dump for the ${mode} channel in ${dir}`);
    const summary = /^(?:summary|totals): (\d+)/m.exec(readFileSync(join(dir, dump), 'utf8'));
    if (!summary) throw new Error(`no instruction total in ${dump}`);
    return { irPerRpc: Number(summary[1]) / rpcs, updates };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
