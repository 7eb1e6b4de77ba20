// One process for the xds-channel-blocks benchmark (bench/xds-channel-blocks.ts): lbtree's `xds:///bench`
// channel and a plain grpc-js round_robin channel over the same three backends, taking turns in blocks of calls.
// Plain JavaScript without tsx, lbtree from dist/ through the package's exports, as xds-channel-cost-client.mjs.
// BENCH_XDS_BOOTSTRAP: the bootstrap JSON; BENCH_PLAIN_ADDRESSES: the backends (comma-separated). Needs
// `node --expose-gc`. Prints one JSON line of blocks, then exits.
import { readFileSync } from 'node:fs';
import { whoami, whoamiClientClass } from './whoami-client.mjs';

const grpc = await import('@grpc/grpc-js');
const { register } = await import('lbtree/grpc-js');
register({ xds: { bootstrap: JSON.parse(process.env.BENCH_XDS_BOOTSTRAP) } });

const Client = whoamiClientClass(grpc);
const insecure = grpc.credentials.createInsecure();
/** Channel 0 is the comparison (plain grpc-js), channel 1 lbtree's. */
const channels = [
  new Client(`ipv4:${process.env.BENCH_PLAIN_ADDRESSES}`, insecure, {
    'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
  }),
  new Client('xds:///bench', insecure, {}),
];
const call = (client) => whoami(client, 30_000);

const WARM_UP_CYCLES = Number(process.env.BENCH_BLOCKS_WARM_UP_CYCLES ?? 30);
/**
 * The two ways a channel is used (issue 25 §4), one after the other, each with its own warm-up: calls one at a
 * time, and 50 in flight. A sequential block is 300 calls (about 100 ms) so that V8's helper threads (compiler,
 * collector), which work at moments of their own, weigh little in any one block.
 */
const MODES = [
  {
    name: 'sequential',
    inFlight: 1,
    calls: Number(process.env.BENCH_BLOCKS_SEQUENTIAL_CALLS ?? 300),
    cycles: Number(process.env.BENCH_BLOCKS_SEQUENTIAL_CYCLES ?? 150),
  },
  {
    name: '50 in flight',
    inFlight: 50,
    calls: Number(process.env.BENCH_BLOCKS_CONCURRENT_CALLS ?? 500),
    cycles: Number(process.env.BENCH_BLOCKS_CONCURRENT_CYCLES ?? 300),
  },
];

/** The main thread's CPU time in ns (Linux), or -1. */
function mainThreadNs() {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  } catch {
    return -1;
  }
}

async function runCalls(client, calls, inFlight) {
  let started = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (started < calls) {
        started++;
        await call(client);
      }
    }),
  );
}

const blocks = [];
for (const mode of MODES) {
  for (let cycle = -WARM_UP_CYCLES; cycle < mode.cycles; cycle++) {
    // Each cycle swaps which channel goes first, so neither always follows the other.
    const order = cycle % 2 === 0 ? [0, 1] : [1, 0];
    for (const channel of order) {
      await new Promise((resolve) => setImmediate(resolve));
      const main0 = mainThreadNs();
      const cpu = process.cpuUsage();
      const start = process.hrtime.bigint();
      await runCalls(channels[channel], mode.calls, mode.inFlight);
      const wallNs = Number(process.hrtime.bigint() - start);
      // The block's own garbage, collected inside its window (the young generation is larger than a block).
      globalThis.gc({ type: 'minor' });
      const used = process.cpuUsage(cpu);
      const main1 = mainThreadNs();
      if (cycle < 0) continue;
      blocks.push({
        cycle,
        mode: mode.name,
        channel,
        calls: mode.calls,
        wallUs: wallNs / 1e3,
        cpuUs: used.user + used.system,
        mainCpuUs: main0 < 0 || main1 < 0 ? -1 : (main1 - main0) / 1e3,
      });
    }
  }
}
process.stdout.write(`${JSON.stringify(blocks)}\n`);
process.exit(0);
