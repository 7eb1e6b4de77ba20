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
