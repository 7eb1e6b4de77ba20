/**
 * One grpc-js channel for bench/metrics.ts's callgrind counts (bench/metrics-callgrind.ts), alone in its process: lbtree_weighted_round_robin
 * over the parent's ORCA-reporting loopback servers (BENCH_METRICS_TARGET), with metrics `on` (every lbtree
 * instrument and optional label, @opentelemetry/sdk-metrics with a reader), `off` (that MeterProvider, nothing
 * enabled) or `none` (no metrics options: no recorder). Protocol, a line each way: it prints
 * `ready <pid> <weight update period, s>` after warming up; on `go N` it makes N calls (16 in flight) and prints
 * `done <seconds> <CPU µs per call>`; on `updates` it prints `updates <scheduler updates the SDK saw since the
 * last go, or -1 when metrics are not on>` (asked after a count, so collecting is outside it); on `exit` it
 * closes. It reads its commands with a blocking read, so while it waits for one (when the parent zeroes or dumps
 * callgrind's counters) its main thread runs nothing: no timer, no I/O, no V8 task lands at a window's ends.
 * Given `--expose-gc` (the callgrind children), it collects its whole heap before `ready`, so every window
 * starts from the same heap.
 *
 * The WRR scheduler update is a wall-clock timer (weight_update_period, A58's default 1 s). Natively the
 * channel runs with 1 s. Under valgrind a call takes tens of times longer, so a 1 s timer would fire tens of
 * times more often per call: given BENCH_METRICS_NATIVE_QPS (the native calls per second), the child times its
 * own calls on a first channel and then runs the measured one with the period scaled by native / own rate, so
 * it sees about as many scheduler updates per call as a native run.
 */

import { readSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { type MetricsOptions, registeredInstruments } from 'lbtree';
import { METRICS_CHANNEL_OPTION, register } from 'lbtree/grpc-js';
import { calls, type EchoClient, EchoClientClass } from './echo-service.js';

class PullReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** A58's default weight_update_period, what the native channel runs with. */
const NATIVE_PERIOD_S = 1;

const mode = process.env.BENCH_METRICS_MODE ?? 'none';
const target = process.env.BENCH_METRICS_TARGET!;
const nativeQps = Number(process.env.BENCH_METRICS_NATIVE_QPS) || 0;
const warmup = Number(process.env.BENCH_METRICS_WARMUP) || 2_000;
const reader = new PullReader();
const options: MetricsOptions | undefined =
  mode === 'none'
    ? undefined
    : {
        meterProvider: new MeterProvider({ readers: [reader] }),
        enableMetrics: mode === 'on' ? registeredInstruments().map((i) => i.name) : [],
        optionalLabels: [
          'grpc.lb.locality',
          'grpc.lb.backend_service',
          'grpc.disconnect_error',
          'grpc.security_level',
        ],
      };

/** The WRR scheduler updates the SDK has seen (the weights histogram's count over 3 endpoints); on only. */
async function updatesSeen(): Promise<number> {
  if (mode !== 'on') return -1;
  const { resourceMetrics } = await reader.collect();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const m of scope.metrics) {
      if (m.descriptor.name === 'grpc.lb.wrr.endpoint_weights') {
        return (m.dataPoints[0]?.value as { count: number } | undefined)?.count ?? 0;
      }
    }
  }
  return 0;
}

function channel(periodSeconds: number): EchoClient {
  return new EchoClientClass(target, grpc.credentials.createInsecure(), {
    'grpc.service_config': JSON.stringify({
      loadBalancingConfig: [
        { lbtree_weighted_round_robin: { blackoutPeriod: '0s', weightUpdatePeriod: `${periodSeconds}s` } },
      ],
    }),
    ...(options && { [METRICS_CHANNEL_OPTION]: options }),
  }) as EchoClient;
}

/** Seconds and CPU µs (all of this process's threads) of `n` calls. */
async function timed(client: EchoClient, n: number): Promise<{ seconds: number; cpuUs: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await calls(client, n, 16);
  const used = process.cpuUsage(cpu);
  return { seconds: (performance.now() - start) / 1000, cpuUs: used.user + used.system };
}

register();
let period = NATIVE_PERIOD_S;
let client: EchoClient;
if (nativeQps > 0) {
  // Calibration: this process's own rate, on a channel of the same mode (it also warms the code up).
  const first = channel(NATIVE_PERIOD_S);
  await calls(first, warmup / 2, 16);
  const { seconds } = await timed(first, warmup / 2);
  first.close();
  period = NATIVE_PERIOD_S * (nativeQps / (warmup / 2 / seconds));
  client = channel(Number(period.toFixed(3)));
  await calls(client, 300, 16);
} else {
  client = channel(NATIVE_PERIOD_S);
  await calls(client, warmup, 16);
}
let updatesBefore = await updatesSeen();
// What the warm-up left queued runs now, not in the window; then the heap is collected (callgrind children).
await new Promise((resolve) => setTimeout(resolve, 50));
(globalThis as { gc?: () => void }).gc?.();
console.log(`ready ${process.pid} ${period.toFixed(3)}`);
for (;;) {
  const [command, arg] = readCommand().split(' ');
  if (command === 'go') {
    const n = Number(arg);
    const { seconds, cpuUs } = await timed(client, n);
    console.log(`done ${seconds} ${cpuUs / n}`);
  } else if (command === 'updates') {
    // Asked after the parent's count: collecting is no part of the measured window.
    const now = await updatesSeen();
    console.log(`updates ${mode === 'on' ? (now - updatesBefore) / 3 : -1}`);
    updatesBefore = now;
  } else {
    // `exit`, or the parent's end of stdin.
    client.close();
    process.exit(0);
  }
}

/** The parent's next line on stdin, read blocking: this process's main thread runs nothing until it comes. */
function readCommand(): string {
  const byte = Buffer.alloc(1);
  let line = '';
  for (;;) {
    if (readSync(0, byte, 0, 1, null) === 0) return 'exit';
    if (byte[0] === 0x0a) return line;
    line += String.fromCharCode(byte[0]!);
  }
}
