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
 *     CPU per call over CONCURRENT calls with 50 in flight.
 * Medians of ROUNDS rounds. Goals (issue 25 §4): per-call wall and CPU ≤ 1.05 × plain; first OK call ≤ ½ of
 * grpc-js-xds's. Knobs: BENCH_COST_ROUNDS, BENCH_COST_WARM_UP, BENCH_COST_SEQUENTIAL, BENCH_COST_CONCURRENT,
 * BENCH_COST_NODE_FLAGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`), BENCH_COST_SIDES (raw figures of some).
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startBackends } from '../src/cli/loopback-backends.js';
import { ControlPlane, xdsService } from '../src/control-plane/index.js';
import { median } from './report.js';

type Side = 'lbtree' | 'grpc-js-plain' | 'grpc-js-xds';
const ALL_SIDES: readonly Side[] = ['lbtree', 'grpc-js-plain', 'grpc-js-xds'];
const ONLY = process.env.BENCH_COST_SIDES?.split(',');
const SIDES = ALL_SIDES.filter((s) => !ONLY || ONLY.includes(s));
const ROUNDS = Number(process.env.BENCH_COST_ROUNDS ?? 3);
const NODE_FLAGS = process.env.BENCH_COST_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
const CLIENT = fileURLToPath(new URL('./xds-channel-cost-client.mjs', import.meta.url));

interface PerCall {
  readonly wallUs: number;
  readonly cpuUs: number;
}

export interface CostFigures {
  readonly mainMs: number;
  readonly loadedMs: number;
  readonly firstOkMs: number;
  readonly sequential: PerCall;
  readonly concurrent: PerCall;
}

function runClient(side: Side, bootstrap: unknown, addresses: readonly string[]): Promise<CostFigures> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...NODE_FLAGS, CLIENT, side], {
      env: {
        ...process.env,
        BENCH_XDS_BOOTSTRAP: JSON.stringify(bootstrap),
        BENCH_PLAIN_ADDRESSES: addresses.join(','),
      },
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

export async function runXdsChannelCostBench(): Promise<void> {
  const load = loadavg().map((x) => x.toFixed(2));
  const backends = await startBackends(['b1', 'b2', 'b3']);
  const addresses = backends.map((b) => b.address);
  const plane = new ControlPlane({
    resources: xdsService({
      name: 'bench',
      clusters: [
        { name: 'bench-cluster', lbPolicy: 'ROUND_ROBIN', localities: [{ zone: 'z', endpoints: addresses }] },
      ],
    }),
  });
  await plane.listen('127.0.0.1:0');
  const runs: Record<Side, CostFigures[]> = { lbtree: [], 'grpc-js-plain': [], 'grpc-js-xds': [] };
  try {
    const sides = SIDES;
    for (let round = 0; round < ROUNDS; round++) {
      // The order rotates: each side goes first, second and third in turn.
      const order = sides.map((_, i) => sides[(i + round) % sides.length]!);
      for (const side of order) {
        runs[side].push(
          await runClient(side, plane.bootstrap({ nodeId: `cost-${side}-${round}` }), addresses),
        );
      }
    }
  } finally {
    await plane.close();
    for (const b of backends) b.stop();
  }
  if (SIDES.length < ALL_SIDES.length) {
    console.log(JSON.stringify(runs, null, 1));
    return;
  }
  const m = (side: Side, f: (x: CostFigures) => number) => median(runs[side].map(f));
  console.log(
    `\n## the cost of a call on an xds:/// channel: fresh processes, 3 loopback backends, round_robin (median of ${ROUNDS} rounds; load average at start ${load.join(' ')})\n`,
  );
  console.log(
    '| metric | lbtree xds: | grpc-js round_robin (plain, no xDS) | @grpc/grpc-js-xds | lbtree / plain | lbtree / grpc-js-xds | goal |',
  );
  console.log('|---|---|---|---|---|---|---|');
  const row = (metric: string, f: (x: CostFigures) => number, unit: string, goal: string) => {
    const [ours, plain, xds] = [m('lbtree', f), m('grpc-js-plain', f), m('grpc-js-xds', f)];
    const cell = (x: number) => `${x.toFixed(unit === 'ms' ? 1 : 2)} ${unit}`;
    console.log(
      `| ${metric} | ${cell(ours)} | ${cell(plain)} | ${cell(xds)} | ${(ours / plain).toFixed(3)} | ${(ours / xds).toFixed(3)} | ${goal} |`,
    );
  };
  row('process start → first OK call', (x) => x.firstOkMs, 'ms', '≤ 0.5 × grpc-js-xds');
  row('process start → channel modules loaded', (x) => x.loadedMs, 'ms', '');
  row('wall per call, sequential', (x) => x.sequential.wallUs, 'µs', '≤ 1.05 × plain');
  row('CPU per call, sequential', (x) => x.sequential.cpuUs, 'µs', '≤ 1.05 × plain');
  row('CPU per call, 50 in flight', (x) => x.concurrent.cpuUs, 'µs', '≤ 1.05 × plain');
  const rounds = (side: Side) =>
    runs[side].map((x) => `${x.firstOkMs.toFixed(0)} ms / ${x.sequential.wallUs.toFixed(0)} µs`).join(', ');
  console.log(
    `\nRounds in order (first OK call / sequential wall per call): lbtree ${rounds('lbtree')}; plain ${rounds('grpc-js-plain')}; grpc-js-xds ${rounds('grpc-js-xds')}.`,
  );
}
