/**
 * What Istio's listener shape costs a call (issue 22 §5): an `xds:///` channel whose Listener carries istiod's
 * empty A33 `HTTPFault{}` filter before the router and whose virtual host has an A44 retry policy (retry_on
 * unavailable; no call fails, so none is retried), beside the same channel on a Listener without them, and
 * beside @grpc/grpc-js-xds on both, against one lbtree control plane and the same 3 loopback servers.
 *
 * Each channel runs in a child process of its own (bench/xds-channel-client.ts; grpc-js keeps one resolver per
 * scheme per process). Rounds: every channel runs RPCS unary RPCs, INFLIGHT in flight, one channel at a time,
 * the order rotating from round to round; the figures are the median of the rounds, and the overhead ratio is
 * the median of the per-round ratios (istio / plain of one library in the same round: paired, so a load spike
 * that hits one round moves both sides of its ratio). CPU per RPC is the channel process's user + system time.
 *
 * BENCH_ISTIO_CALLGRIND=1 also runs each channel once under valgrind's callgrind and counts the instructions
 * (Ir) its process executes per RPC over BENCH_ISTIO_CALLGRIND_RPCS RPCs after warm-up (counters zeroed before
 * and dumped after with callgrind_control): a figure the machine's load does not move.
 * Knobs: BENCH_ISTIO_RPCS (default 5,000), BENCH_ISTIO_ROUNDS (default 6; 0 with callgrind: its figures only),
 * BENCH_ISTIO_CALLGRIND_RPCS (default 1,000), BENCH_ISTIO_CALLGRIND_SIDES (e.g. lbtree).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Backend, startBackends } from '../src/cli/loopback-backends.js';
import {
  ControlPlane,
  faultFilter,
  LISTENER_TYPE_URL,
  type ResourceJson,
  ROUTE_CONFIGURATION_TYPE_URL,
  xdsService,
} from '../src/control-plane/index.js';
import { median, printRow, printTableHeader } from './report.js';
import { ChannelProcess, type Side } from './xds-channel.js';

const RPCS = Number(process.env.BENCH_ISTIO_RPCS ?? 5_000);
const ROUNDS = Number(process.env.BENCH_ISTIO_ROUNDS ?? 6);
const INFLIGHT = 32;
const CALLGRIND = process.env.BENCH_ISTIO_CALLGRIND === '1';
const CALLGRIND_RPCS = Number(process.env.BENCH_ISTIO_CALLGRIND_RPCS ?? 1_000);
/** BENCH_ISTIO_CALLGRIND_SIDES=lbtree: count only those sides' channels (a valgrind run takes minutes each). */
const CALLGRIND_SIDES = process.env.BENCH_ISTIO_CALLGRIND_SIDES?.split(',');

type Shape = 'plain' | 'istio';
interface Variant {
  readonly side: Extract<Side, 'lbtree' | 'grpc-js-xds'>;
  readonly shape: Shape;
}
const VARIANTS: readonly Variant[] = [
  { side: 'lbtree', shape: 'plain' },
  { side: 'lbtree', shape: 'istio' },
  { side: 'grpc-js-xds', shape: 'plain' },
  { side: 'grpc-js-xds', shape: 'istio' },
];
const label = (v: Variant) => `${v.side} ${v.shape}`;

/** Listener `bench-<shape>` → its routes → its cluster over the backends; istio: HTTPFault{} and a retry policy. */
function service(shape: Shape, backends: readonly Backend[]): ResourceJson[] {
  const resources = xdsService({
    name: `bench-${shape}`,
    clusters: [
      {
        name: `bench-${shape}-cluster`,
        lbPolicy: 'ROUND_ROBIN',
        localities: [{ zone: 'zone-0', endpoints: backends.map((b) => b.address) }],
      },
    ],
  });
  if (shape === 'plain') return resources;
  for (const r of resources) {
    if (r['@type'] === LISTENER_TYPE_URL) {
      const hcm = (r.apiListener as { apiListener: { httpFilters: unknown[] } }).apiListener;
      hcm.httpFilters.unshift(faultFilter());
    }
    if (r['@type'] === ROUTE_CONFIGURATION_TYPE_URL) {
      for (const host of r.virtualHosts as Record<string, unknown>[]) {
        host.retryPolicy = { retryOn: 'unavailable', numRetries: 2 };
      }
    }
  }
  return resources;
}

async function start(
  v: Variant,
  plane: ControlPlane,
  backends: readonly Backend[],
  wrapper?: readonly string[],
): Promise<ChannelProcess> {
  const floor = { backends: backends.map((b) => b.address), marker: backends[0]!.address };
  return ChannelProcess.start(v.side, plane, `istio-overhead-${v.side}-${v.shape}`, floor, {
    env: {
      BENCH_XDS_TARGET: `bench-${v.shape}`,
      ...(wrapper ? { BENCH_XDS_CALL_DEADLINE_MS: String(30 * 60_000) } : {}),
    },
    ...(wrapper ? { wrapper } : {}),
  });
}

/** Instructions per RPC of each variant's channel process, under callgrind (see the header). */
async function callgrindIrPerRpc(
  plane: ControlPlane,
  backends: readonly Backend[],
): Promise<Map<Variant, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'lbtree-callgrind-'));
  const result = new Map<Variant, number>();
  try {
    for (const [i, v] of VARIANTS.entries()) {
      if (CALLGRIND_SIDES && !CALLGRIND_SIDES.includes(v.side)) continue;
      const out = join(dir, `v${i}.%p.out`);
      const channel = await start(v, plane, backends, [
        'valgrind',
        '--tool=callgrind',
        `--callgrind-out-file=${out}`,
      ]);
      execFileSync('callgrind_control', ['-z', String(channel.pid)], { stdio: 'ignore' });
      await channel.request({ cmd: 'qps', rpcs: CALLGRIND_RPCS, inflight: INFLIGHT }, 'qps');
      execFileSync('callgrind_control', ['-d', 'window', String(channel.pid)], { stdio: 'ignore' });
      await channel.exit();
      const dump = readdirSync(dir).find((f) => f.startsWith(`v${i}.`) && f.endsWith('.1'));
      if (dump === undefined) throw new Error(`no callgrind dump for ${label(v)} in ${dir}`);
      const summary = /^(?:summary|totals): (\d+)/m.exec(readFileSync(join(dir, dump), 'utf8'));
      if (!summary) throw new Error(`no instruction total in ${dump}`);
      result.set(v, Number(summary[1]) / CALLGRIND_RPCS);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return result;
}

export async function runXdsIstioOverheadBench(): Promise<void> {
  const load = loadavg().map((x) => x.toFixed(2));
  const backends = await startBackends(['b1', 'b2', 'b3']);
  const plane = new ControlPlane({
    resources: [...service('plain', backends), ...service('istio', backends)],
  });
  await plane.listen('127.0.0.1:0');
  try {
    const channels = new Map<Variant, ChannelProcess>();
    if (ROUNDS > 0) for (const v of VARIANTS) channels.set(v, await start(v, plane, backends));
    const qps = new Map<Variant, number[]>(VARIANTS.map((v) => [v, []]));
    const cpu = new Map<Variant, number[]>(VARIANTS.map((v) => [v, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]!);
      for (const v of order) {
        const a = await channels.get(v)!.request({ cmd: 'qps', rpcs: RPCS, inflight: INFLIGHT }, 'qps');
        qps.get(v)!.push(a.qps);
        cpu.get(v)!.push(a.cpuUsPerRpc);
      }
    }
    await Promise.all([...channels.values()].map((c) => c.exit()));
    const ir = CALLGRIND ? await callgrindIrPerRpc(plane, backends) : undefined;

    const [lbPlain, lbIstio, theirPlain, theirIstio] = VARIANTS;
    const m = (x: Map<Variant, number[]>, v: Variant) => median(x.get(v)!);
    /** The median of the per-round ratios a / b. */
    const paired = (x: Map<Variant, number[]>, a: Variant, b: Variant) =>
      median(x.get(a)!.map((value, i) => value / x.get(b)![i]!));
    printTableHeader(
      `Istio's listener shape on an xds:/// channel: HTTPFault{} + a retry policy vs neither (load average at start ${load.join(' ')})`,
      'grpc-js-xds',
    );
    const rows: [string, Map<Variant, number[]>, string][] = [
      [
        `unary QPS, ${RPCS.toLocaleString('en')} RPCs, ${INFLIGHT} in flight (median of ${ROUNDS}; higher is better)`,
        qps,
        'RPC/s',
      ],
      ['channel process CPU per RPC (median; user + system; lower is better)', cpu, 'µs'],
    ];
    for (const [metric, x, unit] of ROUNDS > 0 ? rows : []) {
      printRow(`${metric}, Istio shape`, m(x, lbIstio!), m(x, theirIstio!), unit);
      printRow(`${metric}, plain listener`, m(x, lbPlain!), m(x, theirPlain!), unit);
    }
    if (ir && ir.size === VARIANTS.length) {
      printRow(
        `instructions per RPC (callgrind Ir, ${CALLGRIND_RPCS} RPCs), Istio shape`,
        ir.get(lbIstio!)!,
        ir.get(theirIstio!)!,
        'Ir',
      );
      printRow(
        `instructions per RPC (callgrind Ir), plain listener`,
        ir.get(lbPlain!)!,
        ir.get(theirPlain!)!,
        'Ir',
      );
    }
    console.log('\n| overhead of the Istio shape (istio / plain, same library) | lbtree | grpc-js-xds |');
    console.log('|---|---|---|');
    const pct = (r: number) => `${((r - 1) * 100).toFixed(1)} %`;
    if (ROUNDS > 0) {
      console.log(
        `| CPU per RPC (median of per-round ratios) | ${pct(paired(cpu, lbIstio!, lbPlain!))} | ${pct(paired(cpu, theirIstio!, theirPlain!))} |`,
      );
      console.log(
        `| QPS (median of per-round ratios; negative: slower) | ${pct(paired(qps, lbIstio!, lbPlain!))} | ${pct(paired(qps, theirIstio!, theirPlain!))} |`,
      );
    }
    if (ir) {
      const r = (a: Variant, b: Variant) =>
        ir.has(a) && ir.has(b) ? pct(ir.get(a)! / ir.get(b)!) : 'not counted';
      console.log(
        `| instructions per RPC (callgrind) | ${r(lbIstio!, lbPlain!)} | ${r(theirIstio!, theirPlain!)} |`,
      );
      console.log(
        `\ncallgrind Ir per RPC: ${[...ir].map(([v, x]) => `${label(v)} ${x.toFixed(0)}`).join('; ')}.`,
      );
    }
    const rounds = (v: Variant) =>
      qps
        .get(v)!
        .map((x, i) => `${x.toFixed(0)} (${cpu.get(v)![i]!.toFixed(0)} µs)`)
        .join(', ');
    console.log(
      `\nrounds, in order (RPC/s, CPU per RPC): ${VARIANTS.map((v) => `${label(v)} ${rounds(v)}`).join('; ')}.`,
    );
  } finally {
    await plane.close();
    for (const b of backends) b.stop();
  }
}
