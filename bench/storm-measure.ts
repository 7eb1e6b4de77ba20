/**
 * The connect storm's measuring: one library's policy tree (a fresh one per run) warmed up and timed at one
 * size. `runStormJob` is what storm.ts runs, in a process of its own per job (storm-child.ts) unless
 * STORM_ISOLATE=0.
 */
import { type CpuSample, startCpuSample, stealPercent } from './cpu-time.js';
import { median, ms } from './report.js';
import type { Shape, StormHarness } from './storm-shapes.js';

/**
 * Runs per size (median), fewer for the large sizes. Nine: on a shared VM a burst of host steal or a major
 * collection lands in a run or two, and the median of nine leaves up to four such runs out (a burst lasting
 * seconds still covers them all: the steal printed beside the figure says so).
 */
export const repeatsFor = (n: number): number => (n <= 10_000 ? 9 : 1);
/**
 * Warm-up before the measured runs (JIT), the same for either library: at least three runs and at least 1 s of
 * them, at most 2 s (a run of seconds, a quadratic comparison, warms itself). With three runs alone a
 * 10,000-endpoint tree ran its first measured runs partly unoptimised, worst in a fresh process, where no
 * earlier case has warmed the code the policies share: the xDS tree's median read 23-36 ms there against
 * 20-25 ms with the 1 s floor. STORM_WARM_UP_MIN_MS changes the floor.
 */
const WARM_UP_RUNS = 3;
const WARM_UP_MIN_MS = Number(process.env.STORM_WARM_UP_MIN_MS ?? 1_000);
const WARM_UP_MS = 2_000;

export interface StormFigures {
  upMs: number;
  downMs: number;
  /** Process CPU time of the first update + connect storm (median for several runs). */
  upCpuMs: number;
  /** The host's share of the machine's CPU time during those first updates + connect storms, in percent. */
  upStealPercent: number | null;
}

/**
 * A turn of the event loop before each timed region, for either library. The runs are synchronous, so without
 * it V8's garbage collection tasks (finishing the marking of earlier runs' discarded trees) never get a turn,
 * and that work lands in the next timed region as marking steps on allocation: a 10,000-endpoint ring_hash
 * storm read 80-105 ms in the bench against 35-45 ms in a driver that yielded between runs. A real channel's
 * connections complete in separate event-loop turns. Not a forced gc(): that discards optimised code (gc.ts).
 */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
const SETTLE_MS = 20;

async function runOnce(
  create: () => StormHarness,
  n: number,
  label: string,
): Promise<{ upMs: number; downMs: number; up: CpuSample }> {
  const h = create();
  await settle();
  const endSample = startCpuSample();
  const t0 = process.hrtime.bigint();
  await h.firstUpdate();
  for (let i = 0; i < n; i++) h.up(i);
  const upMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const up = endSample();
  if (h.state !== 'READY')
    throw new Error(`${label}: expected READY after the connect storm, got ${h.state}`);
  await settle();
  const downMs = ms(() => {
    for (let i = 0; i < n; i++) h.down(i);
  });
  if (h.state === 'READY') throw new Error(`${label}: still READY after the disconnect storm`);
  h.destroy();
  return { upMs, downMs, up };
}

async function warmUp(run: () => Promise<unknown>): Promise<void> {
  const start = performance.now();
  const elapsed = () => performance.now() - start;
  for (let w = 0; (w < WARM_UP_RUNS || elapsed() < WARM_UP_MIN_MS) && elapsed() < WARM_UP_MS; w++)
    await run();
}

/** `repeats` runs (median) after {@link warmUp} (JIT), unless `once`. */
async function measure(
  create: () => StormHarness,
  n: number,
  label: string,
  once = false,
): Promise<StormFigures> {
  const repeats = once ? 1 : repeatsFor(n);
  if (!once) await warmUp(() => runOnce(create, n, label));
  const up: number[] = [];
  const down: number[] = [];
  const samples: CpuSample[] = [];
  for (let r = 0; r < repeats; r++) {
    const f = await runOnce(create, n, label);
    up.push(f.upMs);
    down.push(f.downMs);
    samples.push(f.up);
  }
  return {
    upMs: median(up),
    downMs: median(down),
    upCpuMs: median(samples.map((s) => s.cpuMicros / 1000)),
    upStealPercent: stealPercent(samples),
  };
}

/**
 * The first update alone, its subchannels READY from creation: READY when it returns. Medians, in ms, of its
 * wall and process CPU time.
 */
async function measureConnectAtOnce(
  create: () => StormHarness,
  n: number,
  label: string,
): Promise<{ ms: number; cpuMs: number }> {
  const once = async (): Promise<{ ms: number; cpuMs: number }> => {
    const h = create();
    await settle();
    const endSample = startCpuSample();
    const t0 = process.hrtime.bigint();
    await h.firstUpdate();
    const took = Number(process.hrtime.bigint() - t0) / 1e6;
    const cpu = endSample();
    if (h.state !== 'READY')
      throw new Error(`${label}: expected READY after the first update, got ${h.state}`);
    h.destroy();
    return { ms: took, cpuMs: cpu.cpuMicros / 1000 };
  };
  await warmUp(once);
  const runs: { ms: number; cpuMs: number }[] = [];
  for (let r = 0; r < repeatsFor(n); r++) runs.push(await once());
  return { ms: median(runs.map((r) => r.ms)), cpuMs: median(runs.map((r) => r.cpuMs)) };
}

/** One measurement: a library's policy tree at one size, as a connect storm or a connect-inside first update. */
export interface StormJob {
  readonly library: 'lbtree' | 'grpc-js';
  readonly policy: string;
  readonly shape: Shape;
  readonly n: number;
  /** `storm`: first update + one-by-one connect storm, then the disconnect storm; `at-once`: fakes READY inside. */
  readonly kind: 'storm' | 'at-once';
  /** One run, no warm-up (a comparison projected to take minutes). */
  readonly once: boolean;
  readonly label: string;
}

export type StormJobResult = StormFigures | { ms: number; cpuMs: number };

/** Runs a job in this process. Each library's harness is loaded only when a job needs it. */
export async function runStormJob(job: StormJob): Promise<StormJobResult> {
  const connectAtOnce = job.kind === 'at-once';
  let create: () => StormHarness;
  if (job.library === 'lbtree') {
    const { createLbtreeStorm } = await import('./storm-lbtree.js');
    create = () => createLbtreeStorm(job.policy, job.shape, job.n, connectAtOnce);
  } else {
    const { createGrpcJs } = await import('./storm-grpc.js');
    create = () => createGrpcJs(job.policy, job.shape, job.n, connectAtOnce);
  }
  return connectAtOnce
    ? measureConnectAtOnce(create, job.n, job.label)
    : measure(create, job.n, job.label, job.once);
}
