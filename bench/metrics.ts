/**
 * A79 metrics: what recording costs a channel. Three configurations, measured interleaved in the same run:
 * - none: no recorder (no MeterProvider anywhere; `helper.metricsRecorder` is undefined, the policies' record
 *   calls are skipped at `?.`);
 * - off: a MeterProvider given but no metric enabled (every lbtree metric is experimental, off by default);
 * - on: every lbtree instrument enabled on @opentelemetry/sdk-metrics's MeterProvider with a reader.
 * Two workloads:
 * - in process: weighted_round_robin over 100 endpoints under the bench channel, each call a pick and a
 *   per-call ORCA report, a scheduler update (the metrics' recording: 100 weights and three counters) every
 *   10,000 calls, fired by hand; CPU time per call.
 * - real channel: lbtree_weighted_round_robin on a grpc-js channel to three loopback servers that send ORCA
 *   trailers, weight_update_period 0.1 s; calls per second and CPU time per call (client and servers share
 *   the process, as they do in every configuration).
 * Ratios only: the machine may be loaded; rounds alternate the configurations so drift hits each alike.
 * BENCH_METRICS_CALLGRIND=1 adds the load-independent figure: instructions per real RPC of the same channel
 * alone in a process under callgrind, on / off / none (bench/metrics-callgrind.ts); BENCH_METRICS_CALLGRIND_RPCS
 * calls per count (default 2,000), BENCH_METRICS_CALLGRIND_ROUNDS counts per mode (default 2);
 * BENCH_METRICS_ONLY_CALLGRIND=1 skips the other figures.
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
import { backendMetricsTrailer, METRICS_CHANNEL_OPTION, register } from 'lbtree/grpc-js';
import { BenchChannel } from './bench-channel.js';
import { EchoClientClass as Client, calls, type EchoClient, echo } from './echo-service.js';
import { callgrindIrPerRpc, type Mode } from './metrics-callgrind.js';
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
 * One in-process run: CPU µs per call over `updates` scheduler updates of `callsPerUpdate` calls each (with
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

/** One real-channel run: calls per second and CPU µs per call. */
async function channelRun(client: EchoClient, n: number): Promise<{ qps: number; cpuUs: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await calls(client, n, 16);
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  return { qps: n / seconds, cpuUs: (used.user + used.system) / n };
}

function ratioRow(metric: string, a: number, b: number, unit: string): string {
  return `| ${metric} | ${a.toFixed(unit === 'calls/s' ? 0 : 3)} ${unit} | ${b.toFixed(unit === 'calls/s' ? 0 : 3)} ${unit} | ${(a / b).toFixed(3)} |`;
}

export async function runMetricsBench(): Promise<void> {
  if (process.env.BENCH_METRICS_CALLGRIND === '1') await runCallgrind();
  if (process.env.BENCH_METRICS_ONLY_CALLGRIND === '1') return;
  const rounds = Number(process.env.BENCH_METRICS_ROUNDS) || 7;
  // In process.
  const cpu: Record<Mode, number[]> = { none: [], off: [], on: [] };
  const update: Record<Mode, number[]> = { none: [], off: [], on: [] };
  for (const mode of MODES) inProcessRun(mode, 2); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (const mode of MODES) cpu[mode].push(inProcessRun(mode, 30));
    for (const mode of MODES) update[mode].push(inProcessRun(mode, 300, 0));
  }
  const m = (mode: Mode) => median(cpu[mode]);
  const u = (mode: Mode) => median(update[mode]);
  console.log(
    '\n## metrics (A79): recording cost, in process (WRR, 100 endpoints, an update per 10,000 calls)\n',
  );
  console.log('| metric | a | b | ratio a / b (goal ≤ 1.02) |');
  console.log('|---|---|---|---|');
  console.log(ratioRow('CPU per call: metrics on (a) vs off (b)', m('on'), m('off'), 'µs'));
  console.log(ratioRow('CPU per call: metrics off (a) vs no recorder (b)', m('off'), m('none'), 'µs'));
  console.log(ratioRow('CPU per scheduler update: metrics on (a) vs off (b)', u('on'), u('off'), 'µs'));
  console.log(
    ratioRow('CPU per scheduler update: metrics off (a) vs no recorder (b)', u('off'), u('none'), 'µs'),
  );

  // A real grpc-js channel.
  register();
  const servers = await Promise.all(UTILIZATION.map(startServer));
  const target = `endpoints:${servers.map((s) => s.address).join(';')}`;
  const config = JSON.stringify({
    loadBalancingConfig: [
      { lbtree_weighted_round_robin: { blackoutPeriod: '0s', weightUpdatePeriod: '0.1s' } },
    ],
  });
  const clients = {} as Record<Mode, EchoClient>;
  for (const mode of MODES) {
    const options = metricsOptions(mode);
    clients[mode] = new Client(target, grpc.credentials.createInsecure(), {
      'grpc.service_config': config,
      ...(options && { [METRICS_CHANNEL_OPTION]: options }),
    }) as EchoClient;
    await calls(clients[mode], 500, 16); // connect and learn the weights
  }
  const perCall = Number(process.env.BENCH_METRICS_CALLS) || 3000;
  const qps: Record<Mode, number[]> = { none: [], off: [], on: [] };
  const cpuUs: Record<Mode, number[]> = { none: [], off: [], on: [] };
  for (let r = 0; r < rounds; r++) {
    for (const mode of MODES) {
      const run = await channelRun(clients[mode], perCall);
      qps[mode].push(run.qps);
      cpuUs[mode].push(run.cpuUs);
    }
  }
  for (const c of Object.values(clients)) c.close();
  for (const s of servers) s.server.forceShutdown();
  const q = (mode: Mode) => median(qps[mode]);
  const c = (mode: Mode) => median(cpuUs[mode]);
  console.log(
    '\n## metrics (A79): recording cost on a grpc-js channel (WRR, 3 loopback servers with ORCA)\n',
  );
  console.log('| metric | a | b | ratio a / b (goal within 2 %) |');
  console.log('|---|---|---|---|');
  console.log(ratioRow('calls per second: metrics on (a) vs off (b)', q('on'), q('off'), 'calls/s'));
  console.log(
    ratioRow('calls per second: metrics off (a) vs no recorder (b)', q('off'), q('none'), 'calls/s'),
  );
  console.log(ratioRow('CPU per call: metrics on (a) vs off (b)', c('on'), c('off'), 'µs'));
  console.log(ratioRow('CPU per call: metrics off (a) vs no recorder (b)', c('off'), c('none'), 'µs'));
}

/** Instructions per real RPC, on / off / none, each mode counted ROUNDS times; medians. */
async function runCallgrind(): Promise<void> {
  const rpcs = Number(process.env.BENCH_METRICS_CALLGRIND_RPCS) || 2_000;
  const rounds = Number(process.env.BENCH_METRICS_CALLGRIND_ROUNDS) || 2;
  const servers = await Promise.all(UTILIZATION.map(startServer));
  const target = `endpoints:${servers.map((s) => s.address).join(';')}`;
  const ir: Record<Mode, number[]> = { none: [], off: [], on: [] };
  const updates: number[] = [];
  try {
    // Instruction counts do not depend on the load, so a round counts the three channels at once.
    for (let r = 0; r < rounds; r++) {
      const figures = await Promise.all(MODES.map((mode) => callgrindIrPerRpc(mode, target, rpcs)));
      for (const [i, mode] of MODES.entries()) ir[mode].push(figures[i]!.irPerRpc);
      updates.push(figures[MODES.indexOf('on')]!.updates);
    }
  } finally {
    for (const s of servers) s.server.forceShutdown();
  }
  const m = (mode: Mode) => median(ir[mode]);
  console.log(
    `\n## metrics (A79): instructions per real RPC (callgrind Ir, ${rpcs} RPCs per count, median of ${rounds}; WRR, 3 loopback servers with ORCA)\n`,
  );
  console.log('| metric | a | b | ratio a / b (goal ≤ 1.02) |');
  console.log('|---|---|---|---|');
  const row = (what: string, a: number, b: number) =>
    console.log(`| ${what} | ${a.toFixed(0)} Ir | ${b.toFixed(0)} Ir | ${(a / b).toFixed(4)} |`);
  row('Ir per RPC: metrics on (a) vs off (b)', m('on'), m('off'));
  row('Ir per RPC: metrics off (a) vs no recorder (b)', m('off'), m('none'));
  console.log(
    `\nEvery count: ${MODES.map((mode) => `${mode} ${ir[mode].map((x) => x.toFixed(0)).join(' / ')}`).join('; ')}. ` +
      `Scheduler updates in the metrics-on windows: ${updates.join(', ')} (a 1 s timer; under valgrind a window lasts tens of seconds).`,
  );
}
