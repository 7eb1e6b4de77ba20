/**
 * A79 metrics: what recording costs a channel. Three configurations:
 * - none: no recorder (no MeterProvider anywhere; `helper.metricsRecorder` is undefined, the policies' record
 *   calls are skipped at `?.`);
 * - off: a MeterProvider given but no metric enabled (every lbtree metric is experimental, off by default);
 * - on: every lbtree instrument enabled on @opentelemetry/sdk-metrics's MeterProvider with a reader.
 * Two workloads:
 * - in process: weighted_round_robin over 100 endpoints under the bench channel, each "call" a pick and a
 *   per-call ORCA report with no RPC, a scheduler update (the metrics' recording: 100 weights and three
 *   counters) every 10,000 picks, fired by hand; CPU time per pick, per scheduler update, and per weight
 *   recorded beside the SDK's own `Histogram.record()`. A worst case, not the issue's calls per second and CPU
 *   per call: a pick is some thousand times cheaper than an RPC, so the SDK's records of the weights weigh
 *   that much more (printed so). BENCH_METRICS_ROUNDS (7) interleaved rounds.
 * - real channel: lbtree_weighted_round_robin on grpc-js channels to three loopback servers that send ORCA
 *   trailers (A58's default weight_update_period, 1 s), the issue's goal judged on them: one client process,
 *   the three modes and a fourth channel (on but A96's per-call retry metrics) in interleaved blocks, median
 *   paired ratio and its bootstrap 95 % interval, with self-tests (bench/metrics-blocks.ts). With BENCH_METRICS_CALLGRIND=1 also instructions per RPC under callgrind, a fresh
 *   process per count (bench/metrics-callgrind.ts): BENCH_METRICS_CALLGRIND_ROUNDS (3) processes per mode of
 *   BENCH_METRICS_CALLGRIND_RPCS (3,000) calls, BENCH_METRICS_CALLGRIND_JOBS (3) at once, the main thread counted
 *   apart, judged on every count: met, missed, or not resolved when the counts' own spread straddles the line.
 * BENCH_METRICS_PROCESS_PAIRS=1 adds the same comparisons with each mode in a process of its own, two processes
 * taking turns block by block, beside a placebo of two `off` processes (bench/metrics-process-pairs.ts; =only
 * runs it alone). Ratios only: the machine may be loaded. BENCH_METRICS_ONLY_CHANNEL=1 / BENCH_METRICS_ONLY_IN_PROCESS=1 run
 * one workload; BENCH_METRICS_WARMUP (2,000) is the calls a callgrind child makes before its count.
 */
import * as grpc from '@grpc/grpc-js';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  Attributes,
  type BackendMetricReport,
  type CallEndDetails,
  type CancelTimer,
  type Clock,
  type CompletePick,
  type InstrumentDescriptor,
  type MetricsOptions,
  type MetricsRecorder,
  metricsRecorderFor,
  NO_CHANNEL_ARGS,
  OK_STATUS,
  ok,
  Registry,
  registerAllPolicies,
  registeredInstruments,
} from 'lbtree';
import { backendMetricsTrailer } from 'lbtree/grpc-js';
import { BenchChannel } from './bench-channel.js';
import { echo } from './echo-service.js';
import { runBlocksVerdict } from './metrics-blocks.js';
import { CALLGRIND_NODE_FLAGS, callgrindWindow, type Mode } from './metrics-callgrind.js';
import { runProcessPairs } from './metrics-process-pairs.js';
import { median } from './report.js';

class PullReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const MODES: readonly Mode[] = ['none', 'off', 'on'];

function metricsOptions(mode: Mode): MetricsOptions | undefined {
  if (mode === 'none') return undefined;
  const meterProvider = new MeterProvider({ readers: [new PullReader()] });
  const enableMetrics = mode === 'on' ? registeredInstruments().map((i) => i.name) : [];
  return { meterProvider, enableMetrics, optionalLabels: ['grpc.lb.locality', 'grpc.lb.backend_service'] };
}

/** Fires the policy's timers only when told: a scheduler update exactly where the loop wants one. */
class StepClock implements Clock {
  private queued: { fn: () => void; cancelled: boolean }[] = [];
  now(): number {
    return performance.now();
  }
  setTimer(_delayMs: number, fn: () => void): CancelTimer {
    const t = { fn, cancelled: false };
    this.queued.push(t);
    return () => {
      t.cancelled = true;
    };
  }
  fireQueued(): void {
    const due = this.queued;
    this.queued = [];
    for (const t of due) if (!t.cancelled) t.fn();
  }
}

class MeteredChannel extends BenchChannel {
  constructor(
    clock: Clock,
    readonly metricsRecorder: MetricsRecorder | undefined,
  ) {
    super(clock);
  }
}

const ENDPOINTS = 100;
const CALLS_PER_UPDATE = 10_000;
const UTILIZATION = [0.2, 0.4, 0.8];

function reportFor(i: number): CallEndDetails {
  const u = UTILIZATION[i % 3]!;
  return {
    backendMetrics: {
      cpuUtilization: u,
      applicationUtilization: u,
      rpsFractional: 100,
      memUtilization: 0,
      eps: 0,
      utilization: {},
      requestCost: {},
      namedMetrics: {},
    } as BackendMetricReport,
  };
}

/**
 * One in-process run: CPU µs per pick over `updates` scheduler updates of `callsPerUpdate` picks each (with
 * none, CPU µs per scheduler update).
 */
function inProcessRun(mode: Mode, updates: number, callsPerUpdate = CALLS_PER_UPDATE): number {
  const registry = registerAllPolicies(new Registry());
  const parsed = registry.parseLbConfigList([
    { weighted_round_robin: { blackout_period: '0s', weight_update_period: '1s' } },
  ]);
  const options = metricsOptions(mode);
  const clock = new StepClock();
  const channel = new MeteredChannel(clock, options && metricsRecorderFor('bench:///wrr', options));
  channel.connected = true;
  const lb = registry.create(parsed, channel);
  const endpoints = Array.from({ length: ENDPOINTS }, (_, i) => ({
    addresses: [channel.intern(`10.0.${i >> 8}.${i & 255}:50051`)],
    attributes: Attributes.EMPTY,
  }));
  lb.update({ endpoints: ok(endpoints), config: parsed.config, attributes: NO_CHANNEL_ARGS });
  const details = endpoints.map((_, i) => reportFor(i));
  const index = new Map(channel.created.map((s, i) => [s.key, i]));
  const call = () => {
    const r = channel.picker.pick(channel.pickArgs) as CompletePick;
    r.onCallEnded?.(OK_STATUS, details[index.get(r.subchannel.key)!]);
  };
  for (let i = 0; i < CALLS_PER_UPDATE; i++) call();
  clock.fireQueued();
  const cpu = process.cpuUsage();
  for (let u = 0; u < updates; u++) {
    for (let i = 0; i < callsPerUpdate; i++) call();
    clock.fireQueued();
  }
  const used = process.cpuUsage(cpu);
  lb.destroy();
  return (used.user + used.system) / (updates * Math.max(1, callsPerUpdate));
}

async function startServer(utilization: number): Promise<{ address: string; server: grpc.Server }> {
  const server = new grpc.Server();
  server.addService(echo, {
    call: (callObj: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      const trailer = backendMetricsTrailer(
        { cpuUtilization: utilization, applicationUtilization: utilization, rpsFractional: 100 },
        new grpc.Metadata(),
      );
      callback(null, callObj.request, trailer);
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return { address: `127.0.0.1:${port}`, server };
}

function ratioRow(metric: string, a: number, b: number, unit: string): string {
  return `| ${metric} | ${a.toFixed(unit === 'calls/s' ? 0 : 3)} ${unit} | ${b.toFixed(unit === 'calls/s' ? 0 : 3)} ${unit} | ${(a / b).toFixed(3)} |`;
}

export async function runMetricsBench(): Promise<void> {
  if (process.env.BENCH_METRICS_ONLY_CHANNEL !== '1') runInProcess();
  if (process.env.BENCH_METRICS_ONLY_IN_PROCESS !== '1') await runChannel();
}

function runInProcess(): void {
  const rounds = Number(process.env.BENCH_METRICS_ROUNDS) || 7;
  // In process.
  const cpu: Record<Mode, number[]> = { none: [], off: [], on: [] };
  const update: Record<Mode, number[]> = { none: [], off: [], on: [] };
  for (const mode of MODES) inProcessRun(mode, 2); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (const mode of MODES) cpu[mode].push(inProcessRun(mode, 30));
    for (const mode of MODES) update[mode].push(inProcessRun(mode, 300, 0));
  }
  const u = (mode: Mode) => median(update[mode]);
  console.log(
    '\n## metrics (A79): recording cost, in process (WRR, 100 endpoints, an update per 10,000 picks)\n',
  );
  console.log(
    "A worst case, not the goal's figure: picks and ORCA reports without RPCs (a pick is a fraction of a µs, an RPC\n" +
      "hundreds), so the scheduler update's records to the OpenTelemetry SDK, amortised over 10,000 picks, weigh as\n" +
      'they never do on a channel. The goal (calls per second and CPU per call) is judged on the real channel below.\n',
  );
  console.log('| metric | a | b | ratio of medians | goal within 2 % |');
  console.log('|---|---|---|---|---|');
  comparisonRows('CPU per pick (no RPC)', 'µs', 3, cpu);
  const beside = '— (a part of the per-call figure)';
  console.log(
    `${ratioRow('CPU per scheduler update: metrics on (a) vs off (b)', u('on'), u('off'), 'µs')} ${beside} |`,
  );
  console.log(
    `${ratioRow('CPU per scheduler update: metrics off (a) vs no recorder (b)', u('off'), u('none'), 'µs')} ${beside} |`,
  );
  const record = recordCost(rounds);
  console.log(
    `${ratioRow(
      "one weight recorded: through lbtree's recorder, to the SDK and the live view (a) vs the SDK's own Histogram.record() alone (b)",
      record.lbtree,
      record.sdk,
      'µs',
    )} ${beside} |`,
  );
  console.log(
    `\nOf the ${(u('on') - u('off')).toFixed(1)} µs a scheduler update costs more with metrics on, ` +
      `${((ENDPOINTS * record.sdk) / (u('on') - u('off'))).toFixed(2)} is the SDK's own record of the ${ENDPOINTS} weights ` +
      `(${ENDPOINTS} × ${record.sdk.toFixed(3)} µs; A78 records one per endpoint per update).`,
  );
}

/**
 * CPU µs per histogram record of a WRR weight: through a channel's recorder (the SDK and lbtree's live-view
 * copy) and with the SDK's `Histogram.record()` alone, given the attributes lbtree hands it; medians of `rounds`
 * interleaved runs of 200,000 records.
 */
function recordCost(rounds: number): { lbtree: number; sdk: number } {
  const weights = registeredInstruments().find((i) => i.name === 'grpc.lb.wrr.endpoint_weights') as
    | InstrumentDescriptor<'histogram'>
    | undefined;
  if (weights === undefined) throw new Error('no WRR weights histogram');
  const recorder = metricsRecorderFor('bench:///wrr', metricsOptions('on')!)!;
  const labels = { 'grpc.lb.locality': '' };
  const histogram = new MeterProvider({ readers: [new PullReader()] })
    .getMeter('bench')
    .createHistogram(weights.name, { description: weights.description, unit: weights.unit });
  const attributes = { 'grpc.target': 'bench:///wrr', 'grpc.lb.locality': '' };
  const n = 200_000;
  const timeIt = (fn: (i: number) => void): number => {
    const cpu = process.cpuUsage();
    for (let i = 0; i < n; i++) fn(i);
    const used = process.cpuUsage(cpu);
    return (used.user + used.system) / n;
  };
  const viaLbtree = (i: number) => recorder.recordHistogram(weights, i & 1023, labels);
  const viaSdk = (i: number) => histogram.record(i & 1023, attributes);
  timeIt(viaLbtree);
  timeIt(viaSdk);
  const lbtree: number[] = [];
  const sdk: number[] = [];
  for (let r = 0; r < rounds; r++) {
    lbtree.push(timeIt(viaLbtree));
    sdk.push(timeIt(viaSdk));
  }
  return { lbtree: median(lbtree), sdk: median(sdk) };
}

/** Median, and the spread of `xs` around it: (max − min) / median. */
function summary(xs: readonly number[]): { median: number; min: number; max: number; spread: number } {
  const m = median(xs);
  const min = Math.min(...xs);
  const max = Math.max(...xs);
  return { median: m, min, max, spread: (max - min) / m };
}

/**
 * Whether a / b is within 2 % of 1, judged on every count, not only the medians: met when the ratio of any
 * count of a to any count of b is (min a / max b … max a / min b inside 0.98 … 1.02), missed when none is,
 * not resolved when the counts' own spread straddles the line.
 */
function verdict(a: readonly number[], b: readonly number[]): string {
  if (a.length < 2 || b.length < 2) return 'not judged (one count: no spread to judge against)';
  const low = Math.min(...a) / Math.max(...b);
  const high = Math.max(...a) / Math.min(...b);
  if (low >= 0.98 && high <= 1.02) return 'meets 2 %';
  if (low > 1.02 || high < 0.98) return 'misses 2 %';
  return `not resolved (counts give ${low.toFixed(3)}–${high.toFixed(3)})`;
}

/** "median (min–max, spread %)" */
function spreadText(xs: readonly number[], digits: number): string {
  const s = summary(xs);
  return `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)}, ${(s.spread * 100).toFixed(1)} %)`;
}

function comparisonRows(what: string, unit: string, digits: number, xs: Record<Mode, number[]>): void {
  for (const [a, b] of [
    ['on', 'off'],
    ['off', 'none'],
  ] as const) {
    console.log(
      `| ${what}: metrics ${a} (a) vs ${b === 'none' ? 'no recorder' : b} (b) | ${spreadText(xs[a], digits)} ${unit} | ` +
        `${spreadText(xs[b], digits)} ${unit} | ${(median(xs[a]) / median(xs[b])).toFixed(4)} | ${verdict(xs[a], xs[b])} |`,
    );
  }
}

/** The order of the modes in round `r`: rotated, so no mode always runs first or last. */
function roundOrder(r: number): Mode[] {
  return MODES.map((_, i) => MODES[(i + r) % MODES.length]!);
}

/**
 * A real grpc-js channel: the verdict from one client process running the modes in interleaved blocks
 * (bench/metrics-blocks.ts); with BENCH_METRICS_CALLGRIND=1, instructions per RPC under callgrind too, a fresh
 * process per count, the scheduler period scaled to the native rate (the verdict run's, or
 * BENCH_METRICS_NATIVE_QPS).
 */
async function runChannel(): Promise<void> {
  const servers = await Promise.all(UTILIZATION.map(startServer));
  const target = `endpoints:${servers.map((s) => s.address).join(';')}`;
  try {
    // BENCH_METRICS_PROCESS_PAIRS=1 adds the comparison with each mode in a process of its own; =only runs it alone.
    const pairs = process.env.BENCH_METRICS_PROCESS_PAIRS;
    const verdictQps = pairs === 'only' ? undefined : await runBlocksVerdict(target);
    if (pairs === '1' || pairs === 'only') await runProcessPairs(target);
    if (process.env.BENCH_METRICS_CALLGRIND === '1') {
      const nativeQps = Number(process.env.BENCH_METRICS_NATIVE_QPS) || verdictQps;
      if (nativeQps === undefined)
        throw new Error('BENCH_METRICS_CALLGRIND=1 without a native rate: set BENCH_METRICS_NATIVE_QPS');
      // A58's default weight_update_period is 1 s: natively, one update per second of calls.
      await runCallgrind(target, nativeQps, 1000 / nativeQps);
    }
  } finally {
    for (const s of servers) s.server.forceShutdown();
  }
}

/**
 * Instructions per real RPC, on / off / none, a fresh process per count, BENCH_METRICS_CALLGRIND_JOBS (3) of
 * them at once: instruction counts do not depend on the load.
 */
async function runCallgrind(target: string, nativeQps: number, nativeUpdatesPerKrpc: number): Promise<void> {
  const rpcs = Number(process.env.BENCH_METRICS_CALLGRIND_RPCS) || 3_000;
  const rounds = Number(process.env.BENCH_METRICS_CALLGRIND_ROUNDS) || 3;
  const main: Record<Mode, number[]> = { none: [], off: [], on: [] };
  const all: Record<Mode, number[]> = { none: [], off: [], on: [] };
  const periods: Record<Mode, number[]> = { none: [], off: [], on: [] };
  const updatesPerKrpc: number[] = [];
  const jobs = Number(process.env.BENCH_METRICS_CALLGRIND_JOBS) || 3;
  const queue = Array.from({ length: rounds }, (_, r) => roundOrder(r)).flat();
  const worker = async () => {
    for (let mode = queue.shift(); mode !== undefined; mode = queue.shift()) {
      const f = await callgrindWindow(mode, target, rpcs, nativeQps);
      main[mode].push(f.mainIrPerRpc);
      all[mode].push(f.allIrPerRpc);
      periods[mode].push(f.periodS);
      if (mode === 'on') updatesPerKrpc.push((1000 * f.updates) / rpcs);
    }
  };
  await Promise.all(Array.from({ length: jobs }, worker));
  console.log(
    `\n## metrics (A79): instructions per real RPC (callgrind Ir, ${rounds} fresh processes per mode, ${rpcs} RPCs each after a warm-up and a full collection; node ${(process.env.BENCH_METRICS_CALLGRIND_NODE_FLAGS ?? CALLGRIND_NODE_FLAGS.join(' ')) || 'without flags'} for the count only; WRR, 3 loopback servers with ORCA; median (min–max, spread))\n`,
  );
  console.log('| metric | a | b | ratio of medians | goal within 2 % |');
  console.log('|---|---|---|---|---|');
  comparisonRows('Ir per RPC, main thread', 'Ir', 0, main);
  comparisonRows('Ir per RPC, every thread (V8 helper threads land in or out by chance)', 'Ir', 0, all);
  console.log(
    "\nHow far to trust them: V8's optimizing compiler still runs in the window after this warm-up (with every V8\n" +
      'task on the main thread, --single-threaded, it was about half of a 1,000-RPC window), and how much of it and\n' +
      "of the collector's marking lands in a window, and on which thread, depends on timing: a verdict is only as\n" +
      'good as the spreads beside it.',
  );
  const counts = (xs: Record<Mode, number[]>) =>
    MODES.map((mode) => `${mode} ${xs[mode].map((x) => x.toFixed(0)).join(' / ')}`).join('; ');
  console.log(`\nEvery count, Ir per RPC: main thread ${counts(main)}; every thread ${counts(all)}.`);
  console.log(
    `\nUnder valgrind the weight_update_period was scaled from 1 s to the native rate (${nativeQps.toFixed(0)} calls/s): ` +
      `${MODES.map((mode) => `${mode} ${periods[mode].map((p) => `${p.toFixed(1)} s`).join(' / ')}`).join('; ')}. ` +
      `Scheduler updates per 1,000 calls with metrics on: ${updatesPerKrpc.map((x) => x.toFixed(3)).join(', ')} under valgrind, ` +
      `${nativeUpdatesPerKrpc.toFixed(3)} natively (one a second).`,
  );
}
