/**
 * weighted_round_robin (A58), lbtree beside @grpc/grpc-js 1.14's own weighted_round_robin in the same
 * process, at 1,000 and 10,000 endpoints:
 * - pick: both policies run under the same grpc-js harness (lbtree behind its grpc-js adapter, as a real
 *   channel runs it), after each has been fed the same per-call ORCA reports through the
 *   `endpoint-load-metrics-bin` trailer (three utilization levels) and its own weight-update timer has fired,
 *   so both pick with weights that differ; the pick shares per utilization level are printed as proof.
 * - scheduler rebuild: what the weight-update timer does (read every weight, build the scheduler, report a
 *   new picker). grpc-js's is its `calculateAndUpdateState()`; lbtree's is its timer callback, run under a
 *   hand-fired clock (the adapter's clock is the real one, which cannot be fired inside a timed region).
 * - call end: one call's per-call report decoded and applied, from trailers as a real call delivers them.
 * - connections completing one by one, at 1,000 endpoints only: grpc-js recomputes its whole picker on every
 *   endpoint's READY (quadratic), which takes minutes at 10,000 endpoints. The other rows therefore start
 *   from subchannels that are already connected, so each policy sees its list READY in one update.
 */
import { type experimental, Metadata, status } from '@grpc/grpc-js';
import {
  Attributes,
  type BackendMetricReport,
  type CallEndDetails,
  type CancelTimer,
  type Clock,
  type CompletePick,
  NO_CHANNEL_ARGS,
  OK_STATUS,
  ok,
  Registry,
  registerAllPolicies,
} from 'lbtree';
import { backendMetricsTrailer, register } from 'lbtree/grpc-js';
import { BenchChannel } from './bench-channel.js';
import { createGrpcJsPolicyHarness, type GrpcJsRoundRobinHarness } from './grpc-js-harness.js';
import { median, ms, printRow, printTableHeader } from './report.js';

const SIZES = [1_000, 10_000];
const ONE_BY_ONE_SIZE = 1_000;
const UTILIZATION = [0.2, 0.4, 0.8];
/** The shares A58's weight (qps / utilization) gives the three levels at equal qps: 4 : 2 : 1. */
const EXPECTED_SHARES = '57/29/14';
const WEIGHT_UPDATE_MS = 100;
const PICKS = 200_000;
const address = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:50051`;
const indexOf = (hostPort: string): number => {
  const [a, b, c] = hostPort.slice(3, hostPort.indexOf(':')).split('.').map(Number);
  return (a! << 16) | (b! << 8) | c!;
};

function report(i: number): Partial<BackendMetricReport> {
  // grpc-js 1.14 reads only application_utilization (A58 falls back to cpu_utilization): set both.
  const u = UTILIZATION[i % 3]!;
  return { applicationUtilization: u, cpuUtilization: u, rpsFractional: 100 };
}

const CONFIG = { blackout_period: '0s', weight_update_period: `${WEIGHT_UPDATE_MS / 1000}s` };

type GrpcPick = experimental.PickResult & { subchannel: { getAddress(): string } };

/** A policy under the grpc-js harness, fed per-call reports until its weight-update timer has used them. */
async function weighted(policyName: string, n: number): Promise<GrpcJsRoundRobinHarness> {
  const h = createGrpcJsPolicyHarness({ [policyName]: CONFIG }, { connected: true });
  h.update(Array.from({ length: n }, (_, i) => [address(i)]));
  if (h.state !== 'READY') throw new Error(`${policyName}: expected READY, got ${h.state}`);
  // One trailer object per utilization level, reused: grpc-js caches its decode on the Metadata object,
  // and decoding a fresh one costs it a reload of the ORCA .proto files (see `callEndUs`).
  const trailers = UTILIZATION.map((_, level) => backendMetricsTrailer(report(level), new Metadata()));
  for (let i = 0; i < 3 * n; i++) {
    const r = h.pick() as GrpcPick;
    r.onCallEnded?.(status.OK, '', trailers[indexOf(r.subchannel.getAddress()) % 3]!);
  }
  // Both policies rebuild on a real timer every weight_update_period: let it fire with the weights known.
  await new Promise((resolve) => setTimeout(resolve, 3 * WEIGHT_UPDATE_MS));
  return h;
}

/** Shares of picks per utilization level, in percent. */
function shares(h: GrpcJsRoundRobinHarness): string {
  const counts = [0, 0, 0];
  const picks = 70_000;
  for (let i = 0; i < picks; i++) counts[indexOf((h.pick() as GrpcPick).subchannel.getAddress()) % 3]!++;
  return counts.map((c) => Math.round((100 * c) / picks)).join('/');
}

function nsPerPick(h: GrpcJsRoundRobinHarness): number {
  for (let i = 0; i < PICKS; i++) h.pick();
  const runs: number[] = [];
  for (let r = 0; r < 5; r++)
    runs.push(
      (ms(() => {
        for (let i = 0; i < PICKS; i++) h.pick();
      }) *
        1e6) /
        PICKS,
    );
  return median(runs);
}

/** Timers held until fired by hand: `fireQueued` runs what is queued now (a timer it re-queues waits). */
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

/** lbtree's weight-update timer callback over n READY endpoints with known, differing weights. */
function lbtreeRebuildMs(n: number): number {
  const registry = registerAllPolicies(new Registry());
  const parsed = registry.parseLbConfigList([{ weighted_round_robin: CONFIG }]);
  const clock = new StepClock();
  const channel = new BenchChannel(clock);
  channel.connected = true;
  const lb = registry.create(parsed, channel);
  const endpoints = Array.from({ length: n }, (_, i) => ({
    addresses: [channel.intern(address(i))],
    attributes: Attributes.EMPTY,
  }));
  lb.update({ endpoints: ok(endpoints), config: parsed.config, attributes: NO_CHANNEL_ARGS });
  const details: CallEndDetails[] = endpoints.map((_, i) => ({
    backendMetrics: {
      memUtilization: 0,
      eps: 0,
      utilization: {},
      requestCost: {},
      namedMetrics: {},
      ...report(i),
    } as BackendMetricReport,
  }));
  for (let i = 0; i < 3 * n; i++) {
    const r = channel.picker.pick(channel.pickArgs) as CompletePick;
    r.onCallEnded?.(OK_STATUS, details[indexOf(r.subchannel.key)]);
  }
  clock.fireQueued(); // weights known from here on
  const runs: number[] = [];
  for (let r = 0; r < 7; r++) runs.push(ms(() => clock.fireQueued()));
  lb.destroy();
  return median(runs);
}

function grpcJsRebuildMs(h: GrpcJsRoundRobinHarness): number {
  const policy = h.policy as { calculateAndUpdateState(): void };
  const runs: number[] = [];
  for (let r = 0; r < 7; r++) runs.push(ms(() => policy.calculateAndUpdateState()));
  return median(runs);
}

/**
 * One call ending with a per-call report in fresh trailers, as every real call's are. grpc-js 1.14 never
 * keeps the ORCA proto it loads (`loadOrcaProto` does not store its result), so each decode re-reads the
 * .proto files; lbtree decodes with the generated @bufbuild/protobuf schema.
 */
function callEndUs(h: GrpcJsRoundRobinHarness, calls: number): number {
  const trailers = Array.from({ length: calls }, (_, i) => backendMetricsTrailer(report(i), new Metadata()));
  const results = Array.from({ length: calls }, () => h.pick() as GrpcPick);
  return (
    (ms(() => {
      for (let i = 0; i < calls; i++) results[i]!.onCallEnded?.(status.OK, '', trailers[i]!);
    }) *
      1000) /
    calls
  );
}

/** n endpoints whose connections complete one after another, each READY reaching the policy. */
function oneByOneMs(policyName: string, n: number): number {
  const h = createGrpcJsPolicyHarness({ [policyName]: CONFIG });
  const t = ms(() => {
    h.update(Array.from({ length: n }, (_, i) => [address(i)]));
    h.makeAllReady();
  });
  if (h.state !== 'READY') throw new Error(`${policyName}: expected READY, got ${h.state}`);
  h.destroy();
  return t;
}

export async function runWeightedRoundRobinBench(): Promise<void> {
  register();
  const ours = 'lbtree_weighted_round_robin';
  const theirs = 'weighted_round_robin';
  printTableHeader(
    'weighted_round_robin: picks with known weights, scheduler rebuilds',
    'grpc-js 1.14 weighted_round_robin',
  );
  const proof: string[] = [];
  for (const n of SIZES) {
    const count = n.toLocaleString('en');
    const a = await weighted(ours, n);
    const b = await weighted(theirs, n);
    proof.push(`${count} endpoints: lbtree ${shares(a)}, grpc-js ${shares(b)}`);
    printRow(`pick, ${count} endpoints`, nsPerPick(a), nsPerPick(b), 'ns');
    printRow(`scheduler rebuild, ${count} endpoints`, lbtreeRebuildMs(n), grpcJsRebuildMs(b), 'ms');
    if (n === SIZES[0]) {
      printRow(
        'call end with a per-call report (fresh trailers)',
        callEndUs(a, 2_000),
        callEndUs(b, 20),
        'us',
      );
    }
    a.destroy();
    b.destroy();
  }
  const count = ONE_BY_ONE_SIZE.toLocaleString('en');
  printRow(
    `${count} connections completing one by one`,
    oneByOneMs(ours, ONE_BY_ONE_SIZE),
    oneByOneMs(theirs, ONE_BY_ONE_SIZE),
    'ms',
  );
  console.log(
    `\nPick shares per reported utilization 0.2/0.4/0.8 (A58 weights qps/utilization: ${EXPECTED_SHARES}): ${proof.join('; ')}.`,
  );
}
