/**
 * lbtree's storm figures in a process that has already built and dropped trees (issue 25 §6): one process
 * (bench/storm-rounds-child.ts) runs ROUNDS rounds after a warm-up round, each round every case below at N
 * endpoints, one after the other, so each case runs after the others' trees were built and dropped, as in a
 * real process that builds trees next to other work. Per round and case: the first update, the first update +
 * connect storm (median of RUNS), the same list delivered again (a fresh copy of the list, median of RUNS) and
 * ns per pick with every endpoint READY (least_request's goal: 60 ns; the other cases' picks beside it).
 * Beside each case: lbtree's first update + connect storm in a fresh process of its own (the storm section's
 * measurement, storm-measure.ts), the figure the rounds must hold. grpc-js is not run here: its round_robin
 * and grpc-js-xds's xds_wrr_locality take minutes per storm at 10,000 endpoints (quadratic; see the storm
 * section). Knobs: STORM_ROUNDS_N, STORM_ROUNDS, STORM_ROUNDS_RUNS.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { StormFigures, StormJob } from './storm-measure.js';
import type { RoundsJob, RoundsResult } from './storm-rounds-child.js';
import type { Shape } from './storm-shapes.js';

export const ROUND_CASES = [
  { title: 'round_robin', policy: 'round_robin', shape: 'plain' },
  { title: 'least_request', policy: 'least_request', shape: 'plain' },
  { title: 'priority -> round_robin', policy: 'priority', shape: 'one-priority' },
  {
    title: 'xds_wrr_locality, one locality per endpoint',
    policy: 'xds_wrr_locality',
    shape: 'locality-per-endpoint',
  },
  { title: 'xDS tree, one locality', policy: 'priority', shape: 'xds-one-locality' },
] as const;

const N = Number(process.env.STORM_ROUNDS_N ?? 10_000);
const ROUNDS = Number(process.env.STORM_ROUNDS ?? 5);
const RUNS = Number(process.env.STORM_ROUNDS_RUNS ?? 5);

function runChild<R>(file: string, job: RoundsJob | StormJob): Promise<R> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL(file, import.meta.url)), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let answered = false;
    child.once('message', (message: { result: R } | { error: string }) => {
      answered = true;
      if ('error' in message) reject(new Error(message.error));
      else resolve(message.result);
    });
    child.once('exit', (code, signal) => {
      if (!answered) reject(new Error(`storm rounds: ${file} ended (${signal ?? code}) with no figures`));
    });
    child.send(job);
  });
}

export async function runStormRoundsBench(): Promise<void> {
  const rounds = await runChild<RoundsResult>('./storm-rounds-child.ts', {
    n: N,
    rounds: ROUNDS,
    runs: RUNS,
  });
  const fresh: StormFigures[] = [];
  for (const c of ROUND_CASES) {
    const job: StormJob = {
      kind: 'storm',
      library: 'lbtree',
      policy: c.policy,
      shape: c.shape as Shape,
      n: N,
      once: false,
      label: `lbtree ${c.title}`,
    };
    fresh.push(await runChild<StormFigures>('./storm-child.ts', job));
  }
  console.log(
    `\n## lbtree storms in one process: ${ROUNDS} rounds after a warm-up round, every case at ${N.toLocaleString('en')} endpoints each round (median of ${RUNS} runs per round)\n`,
  );
  console.log(
    '| case | round | first update | first update + connect storm | the same, in a fresh process | ratio | same list again | pick |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const [c, { title }] of ROUND_CASES.entries()) {
    const alone = fresh[c]!.upMs;
    for (let r = 0; r < ROUNDS; r++) {
      const f = rounds.rounds[r]![c]!;
      const pick = `${f.nsPerPick.toFixed(1)} ns`;
      console.log(
        `| ${title} | ${r + 1} | ${f.firstMs.toFixed(2)} ms | ${f.stormMs.toFixed(2)} ms | ${alone.toFixed(2)} ms | ${(f.stormMs / alone).toFixed(2)} | ${f.againMs.toFixed(2)} ms | ${pick} |`,
      );
    }
  }
}
