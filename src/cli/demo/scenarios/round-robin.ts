import { newClient, startBackends } from '../../loopback-backends.js';
import { LoadGenerator } from '../load-generator.js';
import type { ScenarioContext, ScenarioResult } from '../scenario.js';
import { describePhase, playStage, total } from '../stage.js';

/** round_robin spreads load; a backend dies and traffic moves; it returns and traffic comes back. */
export async function playRoundRobin({ view, pace }: ScenarioContext): Promise<ScenarioResult> {
  const backends = await startBackends(['alpha', 'bravo', 'charlie']);
  const client = newClient(
    `endpoints:${backends.map((b) => b.address).join(';')}`,
    [{ lbtree_round_robin: {} }],
    pace.channelOptions,
  );
  const load = new LoadGenerator(client, pace.ratePerSecond);
  const bravo = backends[1]!;
  try {
    load.start();
    const phases = await playStage({
      scenario: 'round_robin',
      view,
      client,
      load,
      backends,
      pace,
      cues: [
        { label: 'round_robin spreads RPCs over alpha, bravo, charlie', settled: (s) => total(s) >= 90 },
        {
          label: 'bravo goes away (GOAWAY, drains): traffic moves to alpha and charlie',
          action: () => bravo.drain(),
        },
        {
          label: 'bravo is back: round_robin reconnects and spreads again',
          action: async () => {
            await bravo.start();
          },
          settled: (s) => (s.get('bravo') ?? 0) >= 10,
        },
      ],
    });
    await load.stop();
    const [steady, down, back] = phases;
    const spread = (p: typeof steady) => [...(p?.served.values() ?? [])];
    const even = (values: number[]) =>
      values.length === 3 && Math.min(...values) >= 0.8 * (values.reduce((a, b) => a + b, 0) / 3);
    return {
      notes: phases.map(describePhase),
      expectations: [
        {
          description: 'steady load is spread evenly (each backend within 20%)',
          met: even(spread(steady)),
        },
        {
          // RPCs already in flight on bravo when it went away finish there (at most one per caller).
          description: 'bravo serves nothing new while it is down (at most the 4 RPCs in flight)',
          met: (down?.served.get('bravo') ?? 0) <= 4,
        },
        { description: 'bravo serves again after it returns', met: (back?.served.get('bravo') ?? 0) > 0 },
        { description: 'no wait-for-ready RPC failed', met: load.failures === 0 },
      ],
    };
  } finally {
    await load.stop();
    client.close();
    for (const b of backends) b.stop();
  }
}
