import type { Backend } from '../../loopback-backends.js';
import { newClient, startBackends } from '../../loopback-backends.js';
import { LoadGenerator } from '../load-generator.js';
import type { ScenarioContext, ScenarioResult } from '../scenario.js';
import { describeShares, type Phase, playStage, total } from '../stage.js';

/** weighted_round_robin (A58) with per-call ORCA reports; no blackout, weights rebuilt every 100 ms. */
const WRR = [{ lbtree_weighted_round_robin: { blackoutPeriod: '0s', weightUpdatePeriod: '0.1s' } }];

/** Every reply of `backend` reports this CPU utilization (and the same 100 queries per second). */
function reportUtilization(backend: Backend, cpuUtilization: number): void {
  backend.backendMetrics = { cpuUtilization, rpsFractional: 100 };
}

/** Whether each backend's share of the phase is within 7 points of `expected` (fractions by name). */
function sharesNear(phase: Phase | undefined, expected: Readonly<Record<string, number>>): boolean {
  const all = total(phase?.served ?? new Map());
  return (
    all > 0 &&
    Object.entries(expected).every(
      ([name, want]) => Math.abs((phase?.served.get(name) ?? 0) / all - want) <= 0.07,
    )
  );
}

/** Weights follow the backends' reported utilization; one backend turns busy and traffic moves away from it. */
export async function playWeightedRoundRobin({ view, pace }: ScenarioContext): Promise<ScenarioResult> {
  const backends = await startBackends(['wrr-1', 'wrr-2', 'wrr-3']);
  const [first, second, third] = backends as [Backend, Backend, Backend];
  reportUtilization(first, 0.2);
  reportUtilization(second, 0.4);
  reportUtilization(third, 0.8);
  const client = newClient(`endpoints:${backends.map((b) => b.address).join(';')}`, WRR, pace.channelOptions);
  const load = new LoadGenerator(client, pace.ratePerSecond);
  try {
    load.start();
    const phases = await playStage({
      scenario: 'weighted_round_robin',
      view,
      client,
      load,
      backends,
      pace,
      cues: [
        {
          label: 'wrr-1, wrr-2, wrr-3 report CPU utilization 0.2 / 0.4 / 0.8 (ORCA, per call): weights form',
          settled: (s) => total(s) >= 100,
        },
        {
          label: 'converged: traffic follows 1 / utilization — 57 / 29 / 14 %',
          settled: (s) => total(s) >= 300,
        },
        {
          label: 'wrr-1 turns busy: it now reports utilization 0.8',
          action: () => reportUtilization(first, 0.8),
          settled: (s) => total(s) >= 100,
        },
        {
          label: 'converged again: 25 / 50 / 25 %',
          settled: (s) => total(s) >= 300,
        },
      ],
    });
    await load.stop();
    const [, converged, , reconverged] = phases;
    return {
      notes: phases.map((p) => `${p.label}: ${describeShares(p.served) || 'no RPCs'}`),
      expectations: [
        {
          description: 'shares converge to the inverse of utilization: 57 / 29 / 14 % ± 7',
          met: sharesNear(converged, { 'wrr-1': 4 / 7, 'wrr-2': 2 / 7, 'wrr-3': 1 / 7 }),
        },
        {
          description: 'after wrr-1 turns busy: 25 / 50 / 25 % ± 7',
          met: sharesNear(reconverged, { 'wrr-1': 0.25, 'wrr-2': 0.5, 'wrr-3': 0.25 }),
        },
        { description: 'no RPC failed', met: load.failures === 0 },
      ],
    };
  } finally {
    await load.stop();
    client.close();
    for (const b of [first, second, third]) b.stop();
  }
}
