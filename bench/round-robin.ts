/**
 * round_robin with fake subchannels, lbtree beside @grpc/grpc-js in the same process. Each figure is the
 * median of several fresh runs; the ratio column is lbtree's time over grpc-js's (below 1 = lbtree faster).
 * The updates' timed regions end once the work each deferred to `process.nextTick` has run: grpc-js's
 * pick_first asks its subchannel to connect in a nextTick after the update returns, lbtree's inside the update,
 * so both first-update figures include starting every connection. No timer or I/O runs inside a timed region,
 * so no policy's background timers land inside another's figures.
 * lbtree is measured as users run it: the compiled dist/ (`npm run bench` builds first).
 */
import { createGrpcJsRoundRobin } from './grpc-js-harness.js';
import { createLbtreeRoundRobin } from './lbtree-harness.js';
import { deferredTicks, median, msAsync, printRow, printTableHeader } from './report.js';

interface Harness {
  update(endpoints: readonly (readonly string[])[]): void;
  prepare(endpoints: readonly (readonly string[])[]): unknown;
  apply(prepared: unknown): void;
  makeAllReady(): void;
  pick(): unknown;
  readonly state: string;
  destroy(): void;
}

const SIZES = [100, 1_000, 10_000];
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
const PICKS = 5_000_000;

function endpoints(n: number): string[][] {
  return Array.from({ length: n }, (_, i) => [`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:50051`]);
}

interface Figures {
  firstUpdateMs: number;
  sameListMs: number;
  nsPerPick: number;
}

async function measure(create: () => Harness, n: number): Promise<Figures> {
  const list = endpoints(n);
  const first: number[] = [];
  const again: number[] = [];
  // Run 0 warms the JIT up and is not counted.
  for (let r = 0; r <= REPEATS; r++) {
    const h = create();
    // Only the policy's work is timed: lists are converted to each library's form beforehand. The second
    // list is a fresh copy, as a resolver delivers it (new endpoint objects, same addresses).
    const firstList = h.prepare(list);
    const firstMs = await msAsync(async () => {
      h.apply(firstList);
      await deferredTicks();
    });
    const againList = h.prepare(list);
    const againMs = await msAsync(async () => {
      h.apply(againList);
      await deferredTicks();
    });
    if (r > 0) {
      first.push(firstMs);
      again.push(againMs);
    }
    h.destroy();
  }
  const h = create();
  h.update(list);
  h.makeAllReady();
  if (h.state !== 'READY') throw new Error(`expected READY after makeAllReady, got ${h.state}`);
  let sink = 0;
  for (let i = 0; i < 200_000; i++) if (h.pick()) sink++;
  const pickRuns: number[] = [];
  for (let r = 0; r < 3; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < PICKS; i++) if (h.pick()) sink++;
    pickRuns.push(Number(process.hrtime.bigint() - t) / PICKS);
  }
  h.destroy();
  if (sink === 0) throw new Error('no picks completed');
  return { firstUpdateMs: median(first), sameListMs: median(again), nsPerPick: median(pickRuns) };
}

export async function runRoundRobinBench(): Promise<void> {
  printTableHeader(`round_robin, fake subchannels (median of ${REPEATS} runs)`, '@grpc/grpc-js');
  for (const n of SIZES) {
    // lbtree first, then grpc-js: grpc-js's pick_first children leave timers that fire only once we yield.
    const ours = await measure(createLbtreeRoundRobin, n);
    const theirs = await measure(createGrpcJsRoundRobin, n);
    printRow(`${n} endpoints: first update`, ours.firstUpdateMs, theirs.firstUpdateMs, 'ms');
    printRow(`${n} endpoints: same list again`, ours.sameListMs, theirs.sameListMs, 'ms');
    printRow(`${n} endpoints: pick`, ours.nsPerPick, theirs.nsPerPick, 'ns');
  }
}
