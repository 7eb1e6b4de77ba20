/**
 * The flight recorder (issue 24 §3), on against off in the same run:
 * - a pick and its call's end through the grpc-js adapter (fake subchannels), ns per call;
 * - CPU time per unary call on real channels against 4 loopback servers in another process (goal: on / off
 *   ≤ 1.03);
 * - the heap a recorder holds after many calls: bounded by its ring (1,000 events against 100,000), not by the
 *   number of calls.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Metadata } from '@grpc/grpc-js';
import { FLIGHT_RECORDER_OPTION, FlightRecorder, register } from 'lbtree/grpc-js';
import { newClient, whoami } from '../src/cli/loopback-backends.js';
import { VirtualClock } from '../src/sim/index.js';
import { gc } from './gc.js';
import { createGrpcJsPolicyHarness } from './grpc-js-harness.js';
import { median, printRow, printTableHeader } from './report.js';

const CALLS = 2_000_000;
const TRAILERS = new Metadata();

/** ns per pick plus the call's end (the recorder counts both), 10 READY endpoints. */
function nsPerCall(channelOptions: Record<string, unknown>): number {
  const h = createGrpcJsPolicyHarness({ lbtree_round_robin: {} }, { channelOptions });
  h.update(Array.from({ length: 10 }, (_, i) => [`10.0.0.${i + 1}:443`]));
  h.makeAllReady();
  if (h.state !== 'READY') throw new Error('round_robin did not become READY');
  const call = () => {
    const result = h.pick() as { onCallEnded: ((code: number, details: string, t: Metadata) => void) | null };
    result.onCallEnded?.(0, '', TRAILERS);
  };
  for (let i = 0; i < 200_000; i++) call();
  const runs: number[] = [];
  for (let r = 0; r < 3; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) call();
    runs.push(Number(process.hrtime.bigint() - t) / CALLS);
  }
  h.destroy();
  return median(runs);
}

/** CPU µs of this process per completed unary call over `seconds`, `concurrency` callers on one channel. */
async function cpuPerCall(
  target: string,
  options: Record<string, unknown>,
  seconds: number,
): Promise<number> {
  const client = newClient(target, [{ lbtree_round_robin: {} }], options);
  try {
    for (let i = 0; i < 200; i++) await whoami(client, { waitForReady: true });
    let done = 0;
    const cpu = process.cpuUsage();
    const end = Date.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (Date.now() < end) {
          await whoami(client, { waitForReady: true });
          done++;
        }
      }),
    );
    const used = process.cpuUsage(cpu);
    return (used.user + used.system) / done;
  } finally {
    client.close();
  }
}

/** Heap (bytes) a recorder holds after `calls` calls over 10 endpoints, a 10 ms interval and a state change per 100 calls. */
function heapAfter(maxEvents: number, calls: number): { bytes: number; events: number } {
  gc();
  const before = process.memoryUsage().heapUsed;
  const clock = new VirtualClock();
  const recorder = new FlightRecorder({ clock, maxEvents, intervalMs: 10 });
  const counters = Array.from({ length: 10 }, (_, i) => recorder.endpoint(`10.0.0.${i + 1}:443`));
  for (let i = 0; i < calls; i++) {
    clock.advance(1);
    const c = counters[i % 10]!;
    recorder.picked(c);
    recorder.callEnded(c, i % 7 !== 0);
    if (i % 100 === 0) recorder.subchannelState(c.address, i % 200 === 0 ? 'READY' : 'IDLE');
  }
  gc();
  const bytes = process.memoryUsage().heapUsed - before;
  const events = recorder.size;
  // Keep the recorder alive through the measurement.
  if (recorder.droppedEvents < 0) console.log(recorder);
  return { bytes, events };
}

export async function runRecorderBench(): Promise<void> {
  register();
  printTableHeader(
    'flight recorder: a pick and its end through the adapter, 10 READY endpoints',
    'recorder off',
  );
  const off: number[] = [];
  const on: number[] = [];
  for (let round = 0; round < 3; round++) {
    off.push(nsPerCall({}));
    on.push(nsPerCall({ [FLIGHT_RECORDER_OPTION]: new FlightRecorder() }));
  }
  printRow('pick + call end (lbtree column: recorder on)', median(on), median(off), 'ns');

  const servers = spawn(process.execPath, ['--import', 'tsx', 'bench/backend-process.ts', '4'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  try {
    const [line] = await createInterface({ input: servers.stdout })
      [Symbol.asyncIterator]()
      .next()
      .then((r) => [r.value]);
    const addresses = JSON.parse(line as string) as string[];
    const target = `endpoints:${addresses.join(';')}`;
    const cpuOn: number[] = [];
    const cpuOff: number[] = [];
    // Alternate rounds so that drift on a shared machine hits both alike.
    for (let round = 0; round < 5; round++) {
      cpuOff.push(await cpuPerCall(target, {}, 2));
      cpuOn.push(await cpuPerCall(target, { [FLIGHT_RECORDER_OPTION]: new FlightRecorder() }, 2));
    }
    printTableHeader(
      'flight recorder: CPU per unary call, real channel, 4 servers in another process, 32 callers (goal ≤ 1.03)',
      'recorder off',
    );
    printRow('client CPU per call (median of 5 alternating 2 s rounds)', median(cpuOn), median(cpuOff), 'µs');
  } finally {
    servers.stdin.end();
  }

  printTableHeader(
    'flight recorder: heap held after N calls (10 ms intervals), by ring size',
    'ring of 100,000 events',
  );
  for (const calls of [200_000, 2_000_000]) {
    const small = heapAfter(1_000, calls);
    const large = heapAfter(100_000, calls);
    printRow(
      `after ${calls.toLocaleString('en')} calls (${small.events} / ${large.events} events kept)`,
      small.bytes,
      large.bytes,
      'B',
    );
  }
}
