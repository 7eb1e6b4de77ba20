/** Shared measuring and printing for the benchmark sections. */

export function median(xs: readonly number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

/** Wall time of a synchronous call, in ms. */
export function ms(fn: () => void): number {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

/**
 * Resolves once the work queued with `process.nextTick` so far has run, and any it queues in turn: Node runs
 * the whole tick queue before a promise continuation. grpc-js's pick_first asks its subchannel to connect in a
 * nextTick after an update returns; awaiting this inside a timed region counts that work, as lbtree's pick_first
 * does the same inside the update. No timer or I/O runs meanwhile.
 */
export function deferredTicks(): Promise<void> {
  return new Promise((resolve) => process.nextTick(resolve));
}

/** Wall time of an async call, in ms (for timed regions that await {@link deferredTicks}). */
export async function msAsync(fn: () => Promise<void>): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

export function printTableHeader(title: string, comparison: string): void {
  console.log(`\n## ${title}\n`);
  console.log(`| metric | lbtree | ${comparison} | ratio (lbtree / ${comparison}) |`);
  console.log('|---|---|---|---|');
}

/** One row; for times and sizes a ratio below 1 means lbtree is better, for throughput above 1. */
export function printRow(metric: string, ours: number, theirs: number, unit: string): void {
  const digits = unit === 'ns' || unit === 'B' ? 1 : 2;
  const fmt = (x: number) => `${x.toFixed(digits)} ${unit}`;
  console.log(`| ${metric} | ${fmt(ours)} | ${fmt(theirs)} | ${(ours / theirs).toFixed(3)} |`);
}
