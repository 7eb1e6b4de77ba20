// One channel for the xds-channel-cost benchmark (bench/xds-channel-cost.ts), in a fresh process of its own:
// `node bench/xds-channel-cost-client.mjs <lbtree|grpc-js-xds|grpc-js-plain>`. Plain JavaScript, run without
// tsx, so that its start-up loads modules as a user's process does (no loader hooks). lbtree is the compiled
// dist/ through the package's own exports. The bootstrap JSON comes in BENCH_XDS_BOOTSTRAP, the plain
// channel's backend addresses in BENCH_PLAIN_ADDRESSES (comma-separated). One JSON line on stdout, then exit.
// With BENCH_COST_CALLGRIND_CALLS=N (the process runs under valgrind's callgrind): after the warm-up, the line
// `started` on stdout after the first OK call (the parent dumps the start's counters; it goes on once a line
// arrives on stdin), `counting` on stdout, then N calls (BENCH_COST_CALLGRIND_IN_FLIGHT at once, 1 by default)
// once a line arrives on stdin (the parent has zeroed the counters), then the line `counted`, and the exit once
// another line arrives (the parent has dumped them).
import { readFileSync } from 'node:fs';
import { constants, PerformanceObserver, performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { whoami, whoamiClientClass } from './whoami-client.mjs';

const side = process.argv[2];
const WARM_UP = Number(process.env.BENCH_COST_WARM_UP ?? 1_500);
const SEQUENTIAL = Number(process.env.BENCH_COST_SEQUENTIAL ?? 3_000);
const CONCURRENT = Number(process.env.BENCH_COST_CONCURRENT ?? 10_000);
const INFLIGHT = 50;
const CALLGRIND_CALLS = Number(process.env.BENCH_COST_CALLGRIND_CALLS ?? 0);
/** How many of the counted calls are in flight at once (1: one after the other). */
const CALLGRIND_IN_FLIGHT = Number(process.env.BENCH_COST_CALLGRIND_IN_FLIGHT ?? 1);
/** Each call's deadline; longer under valgrind, where the first call waits for the xDS resources 50× slower. */
const DEADLINE_MS = Number(process.env.BENCH_COST_CALL_DEADLINE_MS ?? 30_000);

/** Milliseconds since this process started (performance's time origin), at the first line of this module. */
const mainMs = performance.now();

const grpc = await import('@grpc/grpc-js');
let target;
const options = {};
if (side === 'lbtree') {
  const { register } = await import('lbtree/grpc-js');
  register({ xds: { bootstrap: JSON.parse(process.env.BENCH_XDS_BOOTSTRAP) } });
  target = 'xds:///bench';
} else if (side === 'grpc-js-xds') {
  process.env.GRPC_XDS_BOOTSTRAP_CONFIG = process.env.BENCH_XDS_BOOTSTRAP;
  const { register } = await import('@grpc/grpc-js-xds');
  register();
  target = 'xds:///bench';
} else if (side === 'grpc-js-plain') {
  target = `ipv4:${process.env.BENCH_PLAIN_ADDRESSES}`;
  options['grpc.service_config'] = JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] });
} else {
  throw new Error(`side must be lbtree, grpc-js-xds or grpc-js-plain, got ${side}`);
}
const loadedMs = performance.now();

const Client = whoamiClientClass(grpc);
const client = new Client(target, grpc.credentials.createInsecure(), options);
const call = () => whoami(client, DEADLINE_MS);

/** Under callgrind: says `say`, then waits for the parent's next line (see awaitLine below). */
let awaitLine;
if (CALLGRIND_CALLS > 0) {
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  // callgrind answers callgrind_control only while the process runs code, not while it blocks in epoll_wait:
  // a timer keeps it waking while the parent zeroes or dumps the counters (and stops during the count).
  awaitLine = async (say) => {
    const wake = setInterval(() => {}, 5);
    process.stdout.write(`${say}\n`);
    await lines.next();
    clearInterval(wake);
  };
}

await call();
const firstOkMs = performance.now();
// Under callgrind the parent dumps the counts of the start (process start → first OK call) here.
if (CALLGRIND_CALLS > 0) await awaitLine('started');

for (let i = 0; i < WARM_UP; i++) await call();

/**
 * CPU time of this process's main thread (the event loop: all JavaScript, and V8's work on that thread), in µs,
 * from Linux's /proc in clock ticks of 10 ms (USER_HZ 100); null elsewhere. The rest of process.cpuUsage() is
 * other threads: V8's optimizing compiler and GC helpers, libuv's pool.
 */
function mainThreadCpuUs() {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

/** Wall and CPU (user + system; the main thread's alone) per call, in µs, over `calls` calls with `inflight` in flight. */
async function perCall(calls, inflight) {
  let started = 0;
  const mainCpu = mainThreadCpuUs();
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      while (started < calls) {
        started++;
        await call();
      }
    }),
  );
  const wallUs = Number(process.hrtime.bigint() - start) / 1e3 / calls;
  const used = process.cpuUsage(cpu);
  const mainCpuAfter = mainThreadCpuUs();
  const mainCpuUs = mainCpu === null || mainCpuAfter === null ? null : (mainCpuAfter - mainCpu) / calls;
  return { wallUs, cpuUs: (used.user + used.system) / calls, mainCpuUs };
}

if (CALLGRIND_CALLS > 0) {
  await awaitLine('counting');
  await perCall(CALLGRIND_CALLS, CALLGRIND_IN_FLIGHT);
  await awaitLine('counted');
  client.close();
  process.exit(0);
}

/**
 * How many full (mark-compact) collections V8 ran while `run` ran: the cost of a bigger old generation. The
 * observer makes one entry per collection (about 30 in 10,000 calls), on every side alike.
 */
async function markCompactsDuring(run) {
  let count = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) count++;
  });
  observer.observe({ entryTypes: ['gc'] });
  const result = await run();
  // gc entries arrive in a later turn of the event loop.
  await new Promise((resolve) => setImmediate(resolve));
  observer.disconnect();
  return { result, count };
}

/**
 * The heap the process keeps, in MB: used heap after a full collection, once the figures are taken. `gc` is
 * exposed only now, so the measured calls run under the flags a user's process has.
 */
function heapAfterFullGcMb() {
  setFlagsFromString('--expose-gc');
  runInNewContext('gc')();
  return process.memoryUsage().heapUsed / 1e6;
}

const sequential = await perCall(SEQUENTIAL, 1);
const { result: concurrent, count: markCompacts } = await markCompactsDuring(() =>
  perCall(CONCURRENT, INFLIGHT),
);
const heapMb = heapAfterFullGcMb();
client.close();
process.stdout.write(
  `${JSON.stringify({ mainMs, loadedMs, firstOkMs, sequential, concurrent: { ...concurrent, markCompacts }, heapMb })}\n`,
);
process.exit(0);
