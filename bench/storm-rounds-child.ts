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

/**
 * `count` picks on the harness's current picker; the number that completed (read from each result, as a
 * channel reads what it was given). A function of its own, called for the warm-up and then for the timed
 * picks, so the timed picks run code optimized before the window, as a channel's caller is. (Inside measureCase the loop ran in that async function's on-stack-replaced code, which
 * V8 threw away and recompiled as the cases' pickers changed: part of a timed window could run in the
 * interpreter while the compile finished.)
 */
function pickMany(h: LbtreeStormHarness, count: number): number {
  let completed = 0;
  for (let i = 0; i < count; i++) if ((h.pick() as { type: string }).type === 'complete') completed++;
  return completed;
}

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
      pickMany(h, 200_000);
      // A turn of the event loop: a compile the warm-up started finishes before the window, not inside it.
      await settle();
      pickMany(h, 100_000);
      const t2 = now();
      const completed = pickMany(h, PICKS);
      nsPerPick = (since(t2) * 1e6) / PICKS;
      if (completed !== PICKS) throw new Error(`storm rounds: ${PICKS - completed} picks did not complete`);
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
