/**
 * weighted_round_robin (A58), lbtree beside @grpc/grpc-js 1.14's own weighted_round_robin in the same
 * process: the cost of a pick once weights are known, and of the scheduler rebuild that runs every
 * weight_update_period, at 1,000 and 10,000 endpoints. Both policies get the same per-call ORCA reports
 * (three utilization levels, so the weights differ), delivered through their own call-end hooks: lbtree's
 * from decoded details, grpc-js's from the `endpoint-load-metrics-bin` trailer it decodes itself.
 * grpc-js's rebuild is its `calculateAndUpdateState()` (what its weight-update interval calls); lbtree's is
 * its weight-update timer firing.
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
import { backendMetricsTrailer } from 'lbtree/grpc-js';
import { BenchChannel } from './bench-channel.js';
import { createGrpcJsPolicyHarness } from './grpc-js-harness.js';
import { median, ms, printRow, printTableHeader } from './report.js';

const SIZES = [1_000, 10_000];
const UTILIZATION = [0.2, 0.4, 0.8];
const address = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:50051`;

function report(i: number): Partial<BackendMetricReport> {
  // grpc-js 1.14 reads only application_utilization (A58 falls back to cpu_utilization): set both.
  const u = UTILIZATION[i % 3]!;
  return { applicationUtilization: u, cpuUtilization: u, rpsFractional: 100 };
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

interface WrrHarness {
  /** One pick whose call ends with its endpoint's report (feeds the weights). */
  callWithReport(): void;
  pick(): unknown;
  rebuild(): void;
  destroy(): void;
}

function lbtreeWrr(n: number): WrrHarness {
  const registry = registerAllPolicies(new Registry());
  const parsed = registry.parseLbConfigList([
    { weighted_round_robin: { blackoutPeriod: '0s', weightUpdatePeriod: '1s' } },
  ]);
  const clock = new StepClock();
  const channel = new BenchChannel(clock);
  const lb = registry.create(parsed, channel);
  const endpoints = Array.from({ length: n }, (_, i) => ({
    addresses: [channel.intern(address(i))],
    attributes: Attributes.EMPTY,
  }));
  lb.update({ endpoints: ok(endpoints), config: parsed.config, attributes: NO_CHANNEL_ARGS });
  channel.makeAllReady();
  const details = new Map<string, CallEndDetails>();
  endpoints.forEach((_, i) => {
    const r = { ...report(i), memUtilization: 0, eps: 0, utilization: {}, requestCost: {}, namedMetrics: {} };
    details.set(address(i), { backendMetrics: r as BackendMetricReport });
  });
  return {
    callWithReport() {
      const r = channel.picker.pick(channel.pickArgs) as CompletePick;
      r.onCallEnded?.(OK_STATUS, details.get(r.subchannel.key));
    },
    pick: () => channel.picker.pick(channel.pickArgs),
    rebuild: () => clock.fireQueued(),
    destroy: () => lb.destroy(),
  };
}

function grpcJsWrr(n: number): WrrHarness {
  const h = createGrpcJsPolicyHarness({
    weighted_round_robin: { blackout_period: '0s', weight_update_period: '1s' },
  });
  h.update(Array.from({ length: n }, (_, i) => [address(i)]));
  h.makeAllReady();
  const trailers = new Map<string, Metadata>();
  for (let i = 0; i < n; i++) trailers.set(address(i), backendMetricsTrailer(report(i), new Metadata()));
  const policy = h.policy as { calculateAndUpdateState(): void };
  return {
    callWithReport() {
      const r = h.pick() as experimental.PickResult;
      const key = (r.subchannel as unknown as { getAddress(): string }).getAddress();
      r.onCallEnded?.(status.OK, '', trailers.get(key)!);
    },
    pick: () => h.pick(),
    rebuild: () => policy.calculateAndUpdateState(),
    destroy: () => h.destroy(),
  };
}

function measure(make: (n: number) => WrrHarness, n: number): { pickNs: number; rebuildMs: number } {
  const h = make(n);
  for (let i = 0; i < 3 * n; i++) h.callWithReport();
  h.rebuild(); // weights known from here on
  const rebuilds: number[] = [];
  for (let r = 0; r < 7; r++) rebuilds.push(ms(() => h.rebuild()));
  const picks = 200_000;
  const pickRuns: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t = ms(() => {
      for (let i = 0; i < picks; i++) h.pick();
    });
    pickRuns.push((t * 1e6) / picks);
  }
  h.destroy();
  return { pickNs: median(pickRuns), rebuildMs: median(rebuilds) };
}

export function runWeightedRoundRobinBench(): void {
  printTableHeader(
    'weighted_round_robin: picks and scheduler rebuilds, weights known',
    'grpc-js 1.14 weighted_round_robin',
  );
  for (const n of SIZES) {
    const ours = measure(lbtreeWrr, n);
    const theirs = measure(grpcJsWrr, n);
    printRow(`pick, ${n.toLocaleString('en')} endpoints`, ours.pickNs, theirs.pickNs, 'ns');
    printRow(
      `scheduler rebuild, ${n.toLocaleString('en')} endpoints`,
      ours.rebuildMs,
      theirs.rebuildMs,
      'ms',
    );
  }
}
