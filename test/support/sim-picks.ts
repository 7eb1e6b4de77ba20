import type { Simulation } from '../../src/sim/index.js';

/** The address of each of `n` picks (or the pick type when a pick does not complete). */
export function picks(sim: Simulation, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const p = sim.pick();
    out.push(p.type === 'complete' ? p.address : p.type);
  }
  return out;
}

/** How many times each value occurs. */
export function tally(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}

/** Scripts every given backend to connect after 1 ms, delivers them with `config`, and lets them connect. */
export function connectAll(sim: Simulation, keys: readonly string[], config: unknown): Simulation {
  for (const k of keys) sim.script(k, { connectAfterMs: 1 });
  sim.update(keys, config);
  sim.advance(1);
  return sim;
}

/** Where picks with each of `hashes` land once their endpoints have connected (A42: a pick starts a connection). */
export function hashedPicks(sim: Simulation, hashes: readonly bigint[]): string[] {
  for (const hash of hashes) sim.pick({ hash });
  sim.advance(1);
  return hashes.map((hash) => {
    const p = sim.pick({ hash });
    return p.type === 'complete' ? p.address : p.type;
  });
}

/** `n` distinct addresses, from the `from`-th one on. */
export function manyAddresses(n: number, from = 0): string[] {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:80`;
  });
}
