/** lbtree's storm rounds in one process (see bench/storm-rounds.ts): a job in, its figures out. */

import type { LbtreeStormHarness } from './storm-lbtree.js';
import { ROUND_CASES } from './storm-rounds.js';
import type { Shape } from './storm-shapes.js';

export interface RoundsJob {
  readonly n: number;
  readonly rounds: number;
  readonly runs: number;
}

export interface CaseFigures {
  readonly firstMs: number;
  readonly stormMs: number;
  readonly againMs: number;
  readonly nsPerPick: number;
}

export interface RoundsResult {
  /** Per measured round, per case (in ROUND_CASES order). */
  readonly rounds: CaseFigures[][];
}

const PICKS = 2_000_000;
/** A turn of the event loop before each timed region, as storm-measure.ts does (V8's GC tasks get to run). */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));
const now = () => process.hrtime.bigint();
const since = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;
const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[xs.length >> 1]!;

async function measureCase(create: () => LbtreeStormHarness, n: number, runs: number): Promise<CaseFigures> {
  const first: number[] = [];
  const storm: number[] = [];
  const again: number[] = [];
  let nsPerPick = Number.NaN;
  for (let r = 0; r < runs; r++) {
    const h = create();
    await settle();
    const t0 = now();
    await h.firstUpdate();
    first.push(since(t0));
    for (let i = 0; i < n; i++) h.up(i);
    storm.push(since(t0));
    if (h.state !== 'READY') throw new Error(`storm rounds: expected READY, got ${h.state}`);
    const apply = h.prepareAgain();
    await settle();
    const t1 = now();
    apply();
    again.push(since(t1));
    if (r === runs - 1) {
      let sink = 0;
      for (let i = 0; i < 200_000; i++) if (h.pick()) sink++;
      const t2 = now();
      for (let i = 0; i < PICKS; i++) if (h.pick()) sink++;
      nsPerPick = (since(t2) * 1e6) / PICKS;
      if (sink === 0) throw new Error('storm rounds: no picks completed');
    }
    h.destroy();
  }
  return {
    firstMs: median(first),
    stormMs: median(storm),
    againMs: median(again),
    nsPerPick,
  };
}

async function runRounds(job: RoundsJob): Promise<RoundsResult> {
  const { createLbtreeStorm } = await import('./storm-lbtree.js');
  const rounds: CaseFigures[][] = [];
  // Round 0 warms up (JIT) and is not reported.
  for (let round = 0; round <= job.rounds; round++) {
    const figures: CaseFigures[] = [];
    for (const c of ROUND_CASES) {
      const create = () => createLbtreeStorm(c.policy, c.shape as Shape, job.n);
      figures.push(await measureCase(create, job.n, job.runs));
    }
    if (round > 0) rounds.push(figures);
  }
  return { rounds };
}

process.once('message', (job: RoundsJob) => {
  runRounds(job).then(
    (result) => process.send!({ result }, () => process.exit(0)),
    (error: unknown) =>
      process.send!({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) }, () =>
        process.exit(1),
      ),
  );
});
