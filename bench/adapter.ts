/**
 * lbtree behind its @grpc/grpc-js adapter, beside grpc-js's own round_robin:
 * - picks through the adapter (ns per pick), both policies driven with the same fake subchannels;
 * - unary QPS on real channels against 4 loopback servers (ratio target >= 0.97: the policy must cost
 *   nothing measurable end to end).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { register } from 'lbtree/grpc-js';
import { newClient, whoami } from '../src/cli/loopback-backends.js';
import { createGrpcJsPolicyHarness } from './grpc-js-harness.js';
import { median, printRow, printTableHeader } from './report.js';

const PICKS = 5_000_000;

function nsPerPick(lbConfig: Record<string, unknown>, endpoints: number): number {
  const h = createGrpcJsPolicyHarness(lbConfig);
  h.update(Array.from({ length: endpoints }, (_, i) => [`10.0.${i >> 8}.${i & 255}:443`]));
  h.makeAllReady();
  if (h.state !== 'READY') throw new Error(`${Object.keys(lbConfig)[0]} did not become READY`);
  for (let i = 0; i < 200_000; i++) h.pick();
  const runs: number[] = [];
  for (let r = 0; r < 3; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < PICKS; i++) h.pick();
    runs.push(Number(process.hrtime.bigint() - t) / PICKS);
  }
  h.destroy();
  return median(runs);
}

/** Completed unary RPCs per second over `seconds`, `concurrency` callers on one channel. */
async function qps(target: string, lbConfig: unknown, seconds: number, concurrency: number): Promise<number> {
  const client = newClient(target, [lbConfig]);
  try {
    for (let i = 0; i < 200; i++) await whoami(client, { waitForReady: true }); // connect and warm up
    let done = 0;
    const end = Date.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (Date.now() < end) {
          await whoami(client, { waitForReady: true });
          done++;
        }
      }),
    );
    return done / seconds;
  } finally {
    client.close();
  }
}

export async function runAdapterBench(): Promise<void> {
  register();
  printTableHeader('through the grpc-js adapter (fake subchannels; picks)', 'grpc-js round_robin');
  for (const n of [10, 1000]) {
    const ours = nsPerPick({ lbtree_round_robin: {} }, n);
    const theirs = nsPerPick({ round_robin: {} }, n);
    printRow(`pick, ${n} READY endpoints`, ours, theirs, 'ns');
  }

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
    const ours: number[] = [];
    const theirs: number[] = [];
    // Alternate rounds so that drift on a shared machine hits both alike.
    for (let round = 0; round < 5; round++) {
      ours.push(await qps(target, { lbtree_round_robin: {} }, 2, 32));
      theirs.push(await qps(target, { round_robin: {} }, 2, 32));
    }
    printTableHeader(
      'unary RPCs, real channels, 4 servers in another process, 32 concurrent callers',
      'grpc-js round_robin',
    );
    const row = (label: string, a: number, b: number) =>
      console.log(`| ${label} | ${a.toFixed(0)} RPC/s | ${b.toFixed(0)} RPC/s | ${(a / b).toFixed(3)} |`);
    row('QPS (median of 5 alternating 2 s rounds)', median(ours), median(theirs));
  } finally {
    servers.stdin.end();
  }
}
