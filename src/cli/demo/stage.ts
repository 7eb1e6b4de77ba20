import { type Client, connectivityState } from '@grpc/grpc-js';
import type { Backend } from '../loopback-backends.js';
import type { LoadGenerator } from './load-generator.js';
import type { View } from './view.js';

/** One scripted moment of a scenario: at `atMs`, say `label` and do `action`. */
export interface Cue {
  readonly atMs: number;
  readonly label: string;
  readonly action?: () => void | Promise<void>;
}

export interface StageOptions {
  readonly scenario: string;
  readonly view: View;
  readonly client: Client;
  readonly load: LoadGenerator;
  readonly backends: readonly Backend[];
  readonly durationMs: number;
  readonly cues: readonly Cue[];
}

/** Per-backend RPC counts served between two cues. */
export interface Phase {
  readonly label: string;
  readonly served: ReadonlyMap<string, number>;
}

const TICK_MS = 250;

/** Plays cues against a running load, drawing a frame every tick; returns what each phase served. */
export async function playStage(o: StageOptions): Promise<Phase[]> {
  const started = Date.now();
  const phases: Phase[] = [];
  let current = o.load.snapshot();
  let label = 'starting';
  let previous = o.load.snapshot();
  let previousAt = started;
  const rates = new Map<string, number>();
  const cues = [...o.cues].sort((a, b) => a.atMs - b.atMs);
  let next = 0;
  for (;;) {
    const elapsed = Date.now() - started;
    while (next < cues.length && cues[next]!.atMs <= elapsed) {
      const cue = cues[next++]!;
      const now = o.load.snapshot();
      if (next > 1) phases.push({ label, served: diff(now, current) });
      current = now;
      label = cue.label;
      o.view.event(`${(elapsed / 1000).toFixed(1)}s  ${cue.label}`);
      await cue.action?.();
    }
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
      durationMs: o.durationMs,
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
    });
    if (elapsed >= o.durationMs) break;
    await new Promise((r) => setTimeout(r, TICK_MS));
  }
  phases.push({ label, served: diff(o.load.snapshot(), current) });
  return phases;
}

function diff(now: ReadonlyMap<string, number>, before: ReadonlyMap<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of now) out.set(k, v - (before.get(k) ?? 0));
  return out;
}

export function describePhase(p: Phase): string {
  const parts = [...p.served].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`);
  return `${p.label}: ${parts.join(' ') || 'no RPCs'}`;
}
