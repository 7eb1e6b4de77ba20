import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type BackendMetricReport,
  type CompletePick,
  OK_STATUS,
  type PickArgs,
} from '../../src/core/index.js';
import { Simulation, type SubchannelHandle } from '../../src/sim/index.js';
import { connectAll, tally } from '../support/sim-picks.js';

const ARGS: PickArgs = { metadata: { get: () => [] } };
const [A, B, C] = ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80'] as const;
const UTILIZATION: Record<string, number> = { [A]: 0.2, [B]: 0.4, [C]: 0.8 };

function wrr(fields: Record<string, unknown> = {}): unknown[] {
  return [{ weighted_round_robin: { blackoutPeriod: '0s', weightUpdatePeriod: '1s', ...fields } }];
}

function report(cpuUtilization: number): BackendMetricReport {
  return {
    cpuUtilization,
    memUtilization: 0,
    applicationUtilization: 0,
    rpsFractional: 100,
    eps: 0,
    utilization: {},
    requestCost: {},
    namedMetrics: {},
  };
}

/** `n` calls on the current picker, each ending with the per-call report its backend would send. */
function calls(sim: Simulation, n: number, utilization = UTILIZATION): Record<string, number> {
  const seen: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = sim.picker.pick(ARGS) as CompletePick;
    assert.equal(r.type, 'complete');
    const key = (r.subchannel as SubchannelHandle).key;
    seen.push(key);
    r.onCallStarted?.();
    const u = utilization[key];
    r.onCallEnded?.(OK_STATUS, { backendMetrics: u === undefined ? undefined : report(u) });
  }
  return tally(seen);
}

function near(counts: Record<string, number>, total: number, want: Record<string, number>): void {
  for (const [k, share] of Object.entries(want)) {
    const got = (counts[k] ?? 0) / total;
    assert.ok(Math.abs(got - share) < 0.02, `${k}: ${got} vs ${share} in ${JSON.stringify(counts)}`);
  }
}

const CONVERGED = { [A]: 4 / 7, [B]: 2 / 7, [C]: 1 / 7 };

describe('weighted_round_robin (A58, A61)', () => {
  test('A58: without load reports it behaves as round_robin', () => {
    const sim = connectAll(new Simulation(), [A, B, C], wrr());
    near(calls(sim, 3000, {}), 3000, { [A]: 1 / 3, [B]: 1 / 3, [C]: 1 / 3 });
  });

  test('A58 "Per-Call Load Reporting": weights qps / utilization take effect at the next weight_update_period', () => {
    const sim = connectAll(new Simulation(), [A, B, C], wrr());
    near(calls(sim, 300), 300, { [A]: 1 / 3, [B]: 1 / 3, [C]: 1 / 3 });
    sim.advance(1000);
    near(calls(sim, 7000), 7000, CONVERGED);
  });

  test('A58 blackout_period: reports count only after they have come for that long', () => {
    const sim = connectAll(new Simulation(), [A, B, C], wrr({ blackoutPeriod: '10s' }));
    calls(sim, 300); // the first reports arrive at 1 ms
    sim.advance(9_998);
    near(calls(sim, 3000), 3000, { [A]: 1 / 3, [B]: 1 / 3, [C]: 1 / 3 });
    sim.advance(1001); // the first weight update at least 10 s after 1 ms is the one at 11 s
    near(calls(sim, 7000), 7000, CONVERGED);
  });

  test('A58 weight_expiration_period: stale weights fall back to equal shares', () => {
    const sim = connectAll(new Simulation(), [A, B, C], wrr({ weightExpirationPeriod: '5s' }));
    calls(sim, 300);
    sim.advance(1000);
    near(calls(sim, 7000, {}), 7000, CONVERGED); // calls without reports keep the old weights…
    sim.advance(5000);
    near(calls(sim, 3000, {}), 3000, { [A]: 1 / 3, [B]: 1 / 3, [C]: 1 / 3 }); // …until they expire
  });

  test('A58 "Per-Call Load Reporting": with enable_oob_load_report, per-call reports are not parsed', () => {
    const sim = connectAll(new Simulation(), [A, B, C], wrr({ enableOobLoadReport: true }));
    calls(sim, 300);
    sim.advance(1000);
    near(calls(sim, 3000), 3000, { [A]: 1 / 3, [B]: 1 / 3, [C]: 1 / 3 });
  });

  test('A61: weights are kept per endpoint across updates, whatever the address order', () => {
    const sim = new Simulation();
    for (const k of [A, B, C, '[fd00::1]:80']) sim.script(k, { connectAfterMs: 1 });
    const endpoints = [{ addresses: [A, '[fd00::1]:80'] }, { addresses: [B] }, { addresses: [C] }];
    sim.update(endpoints, wrr());
    sim.advance(1);
    calls(sim, 300);
    sim.advance(1000);
    sim.update([{ addresses: ['[fd00::1]:80', A] }, { addresses: [C] }, { addresses: [B] }], wrr());
    near(calls(sim, 7000), 7000, CONVERGED);
  });

  test('A58 + A61: two updates 10 ms apart, each followed at once by weighted picks (the scheduler is built on picker start)', () => {
    const sim = connectAll(new Simulation(), [A, B, C], wrr());
    calls(sim, 300);
    sim.advance(1000); // the periodic rebuild at t = 1001 uses the reports
    near(calls(sim, 7000), 7000, CONVERGED);
    sim.advance(50); // inside the tenth of a period after that rebuild, when READY-set changes are rate-limited
    /** Calls spread over `ms` of virtual time, 70 per millisecond. */
    const over = (ms: number): Record<string, number> => {
      const total: Record<string, number> = {};
      for (let t = 0; t < ms; t++) {
        for (const [k, c] of Object.entries(calls(sim, 70))) total[k] = (total[k] ?? 0) + c;
        sim.advance(1);
      }
      return total;
    };
    sim.update([C, A, B], wrr());
    const first = over(10);
    sim.update([B, C, A], wrr());
    const second = over(100);
    // The first 10 ms and the next 100 ms each follow the weights 4 : 2 : 1 (57 / 29 / 14 %), not 1/3 each
    // (a picker over a few endpoints builds its scheduler on its first pick).
    near(first, 700, CONVERGED);
    near(second, 7000, CONVERGED);
  });

  test('A58 OnSubchannelBecomesReady: an endpoint that reconnects sits out a new blackout period', () => {
    const sim = connectAll(new Simulation(), [A, B, C], wrr({ blackoutPeriod: '2s' }));
    calls(sim, 300);
    sim.advance(2000);
    calls(sim, 300);
    sim.advance(1000);
    near(calls(sim, 7000), 7000, CONVERGED);
    // A reconnects: its weight is unknown again (the mean of B and C) until 2 s of new reports.
    sim.subchannel(A).setState('IDLE');
    sim.advance(1);
    sim.script(A, { connectAfterMs: 1 });
    sim.advance(10);
    assert.equal(sim.subchannel(A).state, 'READY');
    sim.advance(1000);
    const mean = (2.5 + 1.25) / 2;
    near(calls(sim, 7000), 7000, {
      [A]: mean / (mean + 3.75),
      [B]: 2.5 / (mean + 3.75),
      [C]: 1.25 / (mean + 3.75),
    });
  });

  test('a connect storm with a call after every READY still rebuilds a bounded number of times (O(1) per pick)', () => {
    const keys = Array.from({ length: 2000 }, (_, i) => `10.1.${i >> 8}.${i & 255}:80`);
    const sim = new Simulation({ trace: true });
    for (const k of keys) sim.script(k, 'hang');
    sim.update(keys, wrr());
    for (const k of keys) {
      sim.subchannel(k).setState('READY');
      assert.equal(sim.picker.pick(ARGS).type, 'complete');
    }
    // Past 64 endpoints, a picker's first pick rebuilds only when n picks were made since the last rebuild:
    // one pick per READY never pays for it, so the storm does not rebuild per endpoint…
    const rebuilds = () => sim.traces.filter((t) => t.includes('scheduler rebuilt')).length;
    assert.ok(rebuilds() <= 64 + 2, `${rebuilds()} rebuilds`);
    const before = rebuilds();
    for (let i = 0; i < 1999; i++) sim.picker.pick(ARGS);
    assert.equal(rebuilds(), before);
    // … and the catch-up rebuild comes a tenth of weight_update_period after the last one.
    sim.advance(100);
    assert.equal(rebuilds(), before + 1);
  });

  test('a connect storm rebuilds the scheduler a bounded number of times, not once per endpoint', () => {
    const keys = Array.from({ length: 2000 }, (_, i) => `10.1.${i >> 8}.${i & 255}:80`);
    const sim = new Simulation({ trace: true });
    for (const k of keys) sim.script(k, 'hang');
    sim.update(keys, wrr());
    for (const k of keys) sim.subchannel(k).setState('READY');
    sim.advance(1);
    const rebuilds = sim.traces.filter((t) => t.includes('scheduler rebuilt')).length;
    assert.ok(rebuilds <= 2, `${rebuilds} rebuilds`);
    assert.equal(sim.state, 'READY');
    assert.equal(
      Object.keys(
        tally(Array.from({ length: 4000 }, () => (sim.picker.pick(ARGS) as CompletePick).subchannel.key)),
      ).length,
      2000,
    );
  });
});
