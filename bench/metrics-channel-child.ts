/**
 * One grpc-js channel for bench/metrics.ts's callgrind figure, alone in its process: lbtree_weighted_round_robin
 * over the parent's ORCA-reporting loopback servers (BENCH_METRICS_TARGET), with metrics `on` (every lbtree
 * instrument and optional label, @opentelemetry/sdk-metrics with a reader), `off` (that MeterProvider, nothing
 * enabled) or `none` (no metrics options: no recorder). Protocol, a line each way: it prints `ready <pid>`
 * after warming up; on `go N` it makes N calls (16 in flight) and prints `done <scheduler updates seen>`; on
 * `exit` it closes.
 */

import { createInterface } from 'node:readline';
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

const mode = process.env.BENCH_METRICS_MODE ?? 'none';
const target = process.env.BENCH_METRICS_TARGET!;
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

register();
const client = new EchoClientClass(target, grpc.credentials.createInsecure(), {
  'grpc.service_config': JSON.stringify({
    loadBalancingConfig: [
      { lbtree_weighted_round_robin: { blackoutPeriod: '0s', weightUpdatePeriod: '1s' } },
    ],
  }),
  ...(options && { [METRICS_CHANNEL_OPTION]: options }),
}) as EchoClient;

await calls(client, Number(process.env.BENCH_METRICS_WARMUP ?? 2_000), 16);
console.log(`ready ${process.pid}`);
for await (const line of createInterface({ input: process.stdin })) {
  const [command, arg] = line.split(' ');
  if (command === 'go') {
    const before = await updatesSeen();
    await calls(client, Number(arg), 16);
    const after = await updatesSeen();
    console.log(`done ${mode === 'on' ? (after - before) / 3 : -1}`);
  } else if (command === 'exit') {
    client.close();
    process.exit(0);
  }
}
