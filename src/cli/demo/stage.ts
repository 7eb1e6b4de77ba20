import { type Client, connectivityState } from '@grpc/grpc-js';
import type { Backend } from '../loopback-backends.js';
import type { LoadGenerator } from './load-generator.js';
import type { Pace } from './pace.js';
import type { PanelSource, View } from './view.js';

/** One scripted moment of a scenario: say `label`, do `action`, then let the load run for a phase. */
export interface Cue {
  readonly label: string;
  readonly action?: () => void | Promise<void>;
  /**
   * What the phase after this cue must have served to have shown its outcome (e.g. "priority 1 served 30
   * RPCs"). At fast pace the phase ends as soon as this holds; at human pace phases share the duration
   * evenly. Default: 60 RPCs served in the phase.
   */
  readonly settled?: (served: ReadonlyMap<string, number>) => boolean;
  /** Whether the phase is about session affinity (hashing a key), so its summary gives the affinity. */
  readonly showsAffinity?: boolean;
}

export interface StageOptions {
  readonly scenario: string;
  readonly view: View;
  readonly client: Client;
  readonly load: LoadGenerator;
  readonly backends: readonly Backend[];
  readonly pace: Pace;
  readonly cues: readonly Cue[];
  /** More to show beside the backends (e.g. what a control plane sent). */
  readonly panel?: PanelSource;
}

/** Per-backend RPC counts served between the end of one cue's action and the next cue. */
export interface Phase {
  readonly label: string;
  readonly served: ReadonlyMap<string, number>;
  /** RPCs per `key backend` pair, when the load records keys (see LoadGenerator.routes). */
  readonly routes: ReadonlyMap<string, number>;
  /** RPCs that failed during the phase. */
  readonly failures: number;
  /** False when a fast-paced phase hit its time limit before its outcome showed. */
  readonly settled: boolean;
  /** From its cue: the phase is about session affinity. */
  readonly showsAffinity: boolean;
}

const atLeast60 = (served: ReadonlyMap<string, number>) => total(served) >= 60;

export function total(served: ReadonlyMap<string, number>): number {
  let n = 0;
  for (const v of served.values()) n += v;
  return n;
}

/** RPCs served by the backends whose names start with `prefix`. */
export function servedBy(served: ReadonlyMap<string, number> | undefined, prefix: string): number {
  let n = 0;
  for (const [name, v] of served ?? []) if (name.startsWith(prefix)) n += v;
  return n;
}

/** Plays cues against a running load, drawing a frame every tick; returns what each phase served. */
export async function playStage(o: StageOptions): Promise<Phase[]> {
  const started = Date.now();
  const phases: Phase[] = [];
  const rates = new Map<string, number>();
  let previous = o.load.snapshot();
  let previousAt = started;
  let label = 'starting';
  // Human pace: each phase lasts at least its share of the duration, so a person can follow it.
  const minPhaseMs = o.pace.fast ? 0 : o.pace.durationMs / Math.max(1, o.cues.length);
  const limitMs = Math.max(minPhaseMs, o.pace.phaseLimitMs);
  const draw = (elapsed: number) => {
    const now = o.load.snapshot();
    const dt = (Date.now() - previousAt) / 1000;
    for (const b of o.backends) {
      const delta = (now.get(b.name) ?? 0) - (previous.get(b.name) ?? 0);
      // Exponential smoothing keeps the rate readable at a 250 ms tick.
      rates.set(b.name, 0.5 * (rates.get(b.name) ?? 0) + 0.5 * (dt > 0 ? delta / dt : 0));
    }
    previous = now;
    previousAt = Date.now();
    o.view.frame({
      scenario: o.scenario,
      elapsedMs: elapsed,
      durationMs: o.pace.fast ? undefined : o.pace.durationMs,
      channelState: connectivityState[o.client.getChannel().getConnectivityState(false)] ?? '?',
      event: label,
      backends: o.backends.map((b) => ({
        name: b.name,
        address: b.address,
        running: b.running,
        served: now.get(b.name) ?? 0,
        ratePerSecond: rates.get(b.name) ?? 0,
      })),
      failures: o.load.failures,
      ...(o.panel ? { panel: o.panel() } : {}),
    });
  };
  for (const cue of o.cues) {
    label = cue.label;
    o.view.event(`${((Date.now() - started) / 1000).toFixed(1)}s  ${cue.label}`);
    await cue.action?.();
    const from = o.load.snapshot();
    const routesFrom = new Map(o.load.routes);
    const failuresFrom = o.load.failures;
    const phaseStart = Date.now();
    const settled = cue.settled ?? atLeast60;
    let done = false;
    for (;;) {
      const served = diff(o.load.snapshot(), from);
      done = settled(served);
      const inPhase = Date.now() - phaseStart;
      draw(Date.now() - started);
      if (inPhase >= minPhaseMs && (done || inPhase >= limitMs)) break;
      await new Promise((r) => setTimeout(r, o.pace.tickMs));
    }
    const served = diff(o.load.snapshot(), from);
    phases.push({
      label,
      served,
      routes: diff(o.load.routes, routesFrom),
      failures: o.load.failures - failuresFrom,
      settled: settled(served),
      showsAffinity: cue.showsAffinity === true,
    });
    if (!done) o.view.event(`(this phase did not show its outcome within ${limitMs / 1000} s)`);
  }
  return phases;
}

function diff(now: ReadonlyMap<string, number>, before: ReadonlyMap<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of now) {
    const d = v - (before.get(k) ?? 0);
    if (d > 0) out.set(k, d);
  }
  return out;
}

/**
 * Of the keyed RPCs in a phase, the fraction that went to their key's most frequent backend: 1 when every
 * key stuck to one backend (ring_hash affinity), about 1 / backends when they were spread.
 */
export function affinity(routes: ReadonlyMap<string, number>): number {
  const top = new Map<string, number>();
  let all = 0;
  for (const [route, n] of routes) {
    const key = route.slice(0, route.indexOf(' '));
    top.set(key, Math.max(top.get(key) ?? 0, n));
    all += n;
  }
  let kept = 0;
  for (const n of top.values()) kept += n;
  return all === 0 ? 0 : kept / all;
}

/** `a1 25% b1 75%`: each backend's share of a phase. */
export function describeShares(served: ReadonlyMap<string, number>): string {
  const all = total(served);
  return [...served]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} ${((100 * v) / all).toFixed(0)}%`)
    .join(' ');
}

/**
 * `v3: a1 40% b1 60%; users on their usual backend 100%`: the phase (its label up to the colon), each backend's
 * share, and, in a phase about session affinity, the affinity. Elsewhere (round_robin spreading every user
 * over the backends) that figure would only measure chance, so it is left out.
 */
export function describePhaseTraffic(p: Phase): string {
  const colon = p.label.indexOf(':');
  const name = colon < 0 ? p.label : p.label.slice(0, colon);
  const affinityNote =
    p.showsAffinity && p.routes.size > 0
      ? `; users on their usual backend ${(100 * affinity(p.routes)).toFixed(0)}%`
      : '';
  return `${name}: ${describeShares(p.served) || 'no RPCs'}${affinityNote}`;
}

export function describePhase(p: Phase): string {
  const parts = [...p.served].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`);
  return `${p.label}: ${parts.join(' ') || 'no RPCs'}${p.settled ? '' : ' (outcome not shown in time)'}`;
}
