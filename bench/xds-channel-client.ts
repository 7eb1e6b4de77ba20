// One `xds:///bench` channel for the xds-channel benchmark, in its own process: grpc-js keeps one resolver per
// scheme per process, so lbtree's resolver (`register({ xds })`) and @grpc/grpc-js-xds's (`register()`) each get
// a process of their own. Usage: `xds-channel-client.ts <lbtree|grpc-js-xds>` with the bootstrap JSON in
// BENCH_XDS_BOOTSTRAP; run with --expose-gc. Commands arrive as JSON lines on stdin, answers leave as JSON lines
// on stdout (see bench/xds-channel.ts for the protocol and what each figure means).
import { appendFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createInterface } from 'node:readline';
import { getHeapStatistics, writeHeapSnapshot } from 'node:v8';
import * as grpc from '@grpc/grpc-js';
import { BackendClient, whoami } from '../src/cli/loopback-backends.js';
import { bigLocalities } from './xds-channel-assignment.js';
import { FLOOR_SCHEME, pushAddresses, registerFloor } from './xds-channel-floor.js';

export interface FloorAddresses {
  readonly backends: readonly string[];
  readonly marker: string;
}

export type ClientCommand =
  | { readonly cmd: 'qps'; readonly rpcs: number; readonly inflight: number }
  | {
      readonly cmd: 'arm';
      readonly marker: string;
      readonly settleMs: number;
      readonly capMs: number;
      /** The floor side pushes the big assignment's N addresses itself, once armed. */
      readonly n?: number;
    }
  /** Starts `rate` calls per second (each wait-for-ready, none awaited by the next) and an event-loop delay monitor. */
  | { readonly cmd: 'load'; readonly rate: number }
  /** The floor side hands its resolver the big assignment's N addresses (shifted by `shift`), synchronously. */
  | { readonly cmd: 'push'; readonly n: number; readonly shift: number }
  /** The longest event-loop stall since the last `stall` (or `load`), and the calls answered meanwhile. */
  | { readonly cmd: 'stall' }
  | { readonly cmd: 'exit' };

export type ClientAnswer =
  | { readonly ready: true }
  | { readonly qps: number; readonly cpuUsPerRpc: number }
  | { readonly armed: true }
  | { readonly loading: true }
  | { readonly pushed: true }
  | {
      readonly maxStallMs: number;
      readonly maxStallCpuMs: number;
      readonly ok: number;
      readonly failed: number;
      readonly heapBytes: number;
    }
  /** markerNs: process.hrtime (CLOCK_MONOTONIC, shared by every process of the machine) of the first RPC answered by the marker; null when the cap ran out. */
  | { readonly markerNs: string | null; readonly heapBytes: number; readonly pushedNs?: string };

const side = process.argv[2];
const bootstrap = JSON.parse(process.env.BENCH_XDS_BOOTSTRAP ?? 'null') as unknown;
/** The floor side's addresses (it has no control plane): the baseline backends and the marker. */
const floor = JSON.parse(process.env.BENCH_XDS_FLOOR ?? 'null') as FloorAddresses | null;
/** BENCH_XDS_TARGET: the listener to call (bench/xds-istio-overhead.ts has two); default `bench`. */
let target = `xds:///${process.env.BENCH_XDS_TARGET ?? 'bench'}`;
if (side === 'grpc-js-floor') {
  if (!floor) throw new Error('the grpc-js-floor side needs BENCH_XDS_FLOOR');
  registerFloor();
  pushAddresses(floor.backends);
  target = `${FLOOR_SCHEME}:///bench`;
} else if (side === 'lbtree' || side === 'lbtree-no-lrs') {
  const { register } = await import('lbtree/grpc-js');
  register({ xds: { bootstrap } });
  // BENCH_XDS_LRS=1: the same channel on the twin service whose cluster has no lrs_server.
  if (side === 'lbtree-no-lrs') target = 'xds:///bench-no-lrs';
} else if (side === 'grpc-js-xds') {
  process.env.GRPC_XDS_BOOTSTRAP_CONFIG = JSON.stringify(bootstrap);
  const { register } = await import('@grpc/grpc-js-xds');
  register();
} else {
  throw new Error(`side must be lbtree, lbtree-no-lrs, grpc-js-xds or grpc-js-floor, got ${side}`);
}

// tsx turns source maps on; every refused connection's error would pay for a mapped stack trace (on both
// sides alike), which no deployed channel does.
process.setSourceMapsEnabled(false);

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const fullGc = () => {
  gc();
  gc();
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const answer = (a: ClientAnswer) => process.stdout.write(`${JSON.stringify(a)}\n`);

const client = new BackendClient(target, grpc.credentials.createInsecure());

/** BENCH_XDS_CALL_DEADLINE_MS: each RPC's deadline (a channel under valgrind resolves far slower). */
const CALL_DEADLINE_MS = Number(process.env.BENCH_XDS_CALL_DEADLINE_MS ?? 30_000);

/** Connects and warms up: RPCs until every backend of the baseline assignment has answered. */
async function warmUp(backends: number): Promise<void> {
  const seen = new Set<string>();
  for (let i = 0; i < 300 || seen.size < backends; i++) {
    seen.add(await whoami(client, { waitForReady: true, deadlineMs: CALL_DEADLINE_MS }));
  }
}

/**
 * `rpcs` unary RPCs, `inflight` at a time: completed RPCs per second, and this process's CPU time (user +
 * system) per RPC, which other processes' load on a shared machine disturbs far less than the rate.
 */
async function qps(rpcs: number, inflight: number): Promise<{ qps: number; cpuUsPerRpc: number }> {
  let started = 0;
  const profiler = await startProfiler('qps');
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      while (started < rpcs) {
        started++;
        await whoami(client, { waitForReady: true, deadlineMs: CALL_DEADLINE_MS });
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  await profiler?.stop();
  return { qps: rpcs / seconds, cpuUsPerRpc: (used.user + used.system) / rpcs };
}

/**
 * Heap after full GCs, then one RPC at a time (1 ms apart, so that polling costs the channel little) until
 * the marker backend answers: its time, then the heap `settleMs` later (after full GCs) minus before.
 */
async function awaitMarker(marker: string, settleMs: number, capMs: number, n?: number): Promise<void> {
  fullGc();
  const heapBefore = process.memoryUsage().heapUsed;
  snapshotHeap('before');
  const profiler = await startProfiler('push');
  answer({ armed: true });
  let pushedNs: string | undefined;
  if (n !== undefined && floor) {
    pushedNs = process.hrtime.bigint().toString();
    pushAddresses(bigLocalities(n, floor.backends, floor.marker).flat());
  }
  const deadline = Date.now() + capMs;
  let markerNs: string | null = null;
  while (Date.now() < deadline) {
    const name = await whoami(client, { waitForReady: true, deadlineMs: capMs }).catch(() => '');
    if (name === marker) {
      markerNs = process.hrtime.bigint().toString();
      break;
    }
    await sleep(1);
  }
  await profiler?.stop();
  await sleep(settleMs);
  fullGc();
  const heapBytes = process.memoryUsage().heapUsed - heapBefore;
  snapshotHeap('after');
  answer(pushedNs === undefined ? { markerNs, heapBytes } : { markerNs, heapBytes, pushedNs });
}

/** With BENCH_XDS_HEAP_SNAPSHOT_DIR set: a heap snapshot where the heap is measured (diff `before` and `after`). */
function snapshotHeap(when: 'before' | 'after'): void {
  const dir = process.env.BENCH_XDS_HEAP_SNAPSHOT_DIR;
  if (dir) writeHeapSnapshot(`${dir}/${side}-${process.pid}-${when}.heapsnapshot`);
}

let profiles = 0;
/**
 * With BENCH_XDS_PROFILE_DIR set: a CPU profile of one QPS round or push window (arm → marker), for
 * `node --cpu-prof`'s readers.
 */
async function startProfiler(window: 'qps' | 'push'): Promise<{ stop(): Promise<void> } | null> {
  const dir = process.env.BENCH_XDS_PROFILE_DIR;
  if (!dir) return null;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    async stop() {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(
        `${dir}/${side}-${window}-${process.pid}-${++profiles}.cpuprofile`,
        JSON.stringify(profile),
      );
      session.disconnect();
    },
  };
}

/**
 * Calls at a steady rate in the background, and the event loop's longest stall meanwhile: the longest gap
 * between two runs of a 10 ms interval timer, less those 10 ms (what perf_hooks.monitorEventLoopDelay's max
 * measures; its histogram read 0 in the floor's process after a reset, so the gap is measured here directly).
 */
class BackgroundLoad {
  ok = 0;
  failed = 0;
  private maxGapMs = 0;
  /** The most CPU time (this process's user + system) spent between two runs of the interval timer. */
  private maxGapCpuMs = 0;
  constructor(rate: number) {
    const everyMs = 1000 / rate;
    let due = performance.now();
    // A timer every 5 ms issues the calls that are due: a stalled loop issues the ones it missed when it resumes,
    // as callers whose requests queued meanwhile would.
    setInterval(() => {
      const now = performance.now();
      for (; due <= now; due += everyMs) {
        whoami(client, { waitForReady: true, deadlineMs: 60_000 }).then(
          () => this.ok++,
          () => this.failed++,
        );
      }
    }, 5);
    let last = performance.now();
    let lastCpu = process.cpuUsage();
    setInterval(() => {
      const now = performance.now();
      const cpu = process.cpuUsage();
      this.maxGapMs = Math.max(this.maxGapMs, now - last - STALL_TICK_MS);
      // On a loaded machine a stall's wall time includes the time the process waited for a core; its CPU time
      // (all of the process's threads, GC helpers included) is what the process itself spent.
      const cpuMs = (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000;
      this.maxGapCpuMs = Math.max(this.maxGapCpuMs, cpuMs);
      if (STALL_LOG !== undefined && now - last - STALL_TICK_MS > STALL_LOG_MS) logStall(last, now);
      last = now;
      lastCpu = cpu;
    }, STALL_TICK_MS);
  }
  /** The longest stall (ms) and the calls answered since the last read. */
  read(): { maxStallMs: number; maxStallCpuMs: number; ok: number; failed: number; heapBytes: number } {
    const figures = {
      maxStallMs: this.maxGapMs,
      maxStallCpuMs: this.maxGapCpuMs,
      ok: this.ok,
      failed: this.failed,
      // V8's own count: process.memoryUsage() reads the RSS from /proc, which fails (EMFILE) while the floor's
      // 10,000 reconnecting sockets hold every descriptor the process may open.
      heapBytes: getHeapStatistics().used_heap_size,
    };
    this.maxGapMs = 0;
    this.maxGapCpuMs = 0;
    this.ok = 0;
    this.failed = 0;
    return figures;
  }
}
const STALL_TICK_MS = 10;
/**
 * BENCH_STALL_LOG=<file>: each stall over 50 ms is appended to it as a line `<start µs> <end µs>` on the clock a
 * `--cpu-prof` profile's sample times use (CLOCK_MONOTONIC), so a profile can be read stall by stall.
 */
const STALL_LOG = process.env.BENCH_STALL_LOG;
const STALL_LOG_MS = 50;
const hrtimeAtOrigin = Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000;
function logStall(fromMs: number, toMs: number): void {
  const us = (ms: number) => Math.round(hrtimeAtOrigin + ms * 1000);
  appendFileSync(STALL_LOG!, `${us(fromMs)} ${us(toMs)}\n`);
}
let load: BackgroundLoad | null = null;

await warmUp(Number(process.argv[3] ?? 1));
answer({ ready: true });
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line) as ClientCommand;
  if (command.cmd === 'qps') answer(await qps(command.rpcs, command.inflight));
  else if (command.cmd === 'arm')
    await awaitMarker(command.marker, command.settleMs, command.capMs, command.n);
  else if (command.cmd === 'load') {
    load = new BackgroundLoad(command.rate);
    answer({ loading: true });
  } else if (command.cmd === 'push') {
    if (!floor) throw new Error('push: only the grpc-js-floor side pushes its own addresses');
    pushAddresses(bigLocalities(command.n, floor.backends, floor.marker, command.shift).flat());
    answer({ pushed: true });
  } else if (command.cmd === 'stall') {
    if (!load) throw new Error('stall: send load first');
    answer(load.read());
  } else break;
}
client.close();
process.exit(0);
