import { type Backend, newClient, startBackends } from '../../loopback-backends.js';
import { LoadGenerator } from '../load-generator.js';
import type { ScenarioContext, ScenarioResult } from '../scenario.js';
import { describePhase, playStage, servedBy as served } from '../stage.js';

/**
 * priority → weighted_target → round_robin, one zone per priority (A56 over A28 over A61); endpoints carry
 * the paths `p0/zone` and `p1/zone`. Shared with the end-to-end failover test.
 */
export const PRIORITY_FAILOVER_TREE = [
  {
    priority_experimental: {
      priorities: ['p0', 'p1'],
      children: Object.fromEntries(
        ['p0', 'p1'].map((p) => [
          p,
          {
            config: [
              {
                weighted_target_experimental: {
                  targets: { zone: { weight: 1, childPolicy: [{ round_robin: {} }] } },
                },
              },
            ],
          },
        ]),
      ),
    },
  },
];

/** Priority 0 serves; it dies and priority 1 takes over; it comes back and traffic returns. */
export async function playPriorityFailover({ view, pace }: ScenarioContext): Promise<ScenarioResult> {
  const p0 = await startBackends(['p0-east-a', 'p0-east-b']);
  const p1 = await startBackends(['p1-west-a', 'p1-west-b']);
  const all: Backend[] = [...p0, ...p1];
  const target = `endpoints:${[...p0.map((b) => `p0/zone=${b.address}`), ...p1.map((b) => `p1/zone=${b.address}`)].join(';')}`;
  const client = newClient(target, PRIORITY_FAILOVER_TREE, pace.channelOptions);
  const load = new LoadGenerator(client, pace.ratePerSecond);
  try {
    load.start();
    const phases = await playStage({
      scenario: 'priority failover',
      view,
      client,
      load,
      backends: all,
      pace,
      cues: [
        {
          label: 'priority 0 (east) serves; priority 1 (west) is not even connected',
          settled: (s) => served(s, 'p0') >= 60,
        },
        {
          label: 'priority 0 dies: it reports TRANSIENT_FAILURE and priority 1 takes over',
          action: () => {
            for (const b of p0) b.stop();
          },
          settled: (s) => served(s, 'p1') >= 40,
        },
        {
          label: 'priority 0 is back: once it is READY, traffic returns to it',
          action: async () => {
            await Promise.all(p0.map((b) => b.start()));
          },
          settled: (s) => served(s, 'p0') >= 40,
        },
      ],
    });
    await load.stop();
    const [healthy, down, back] = phases;
    return {
      notes: [...phases.map(describePhase), load.describeFailures('priority 0 when it died')].filter(Boolean),
      expectations: [
        {
          description: 'only priority 0 serves while it is healthy',
          met: served(healthy?.served, 'p1') === 0 && served(healthy?.served, 'p0') > 0,
        },
        {
          description: 'priority 1 takes the traffic while priority 0 is down',
          met: served(down?.served, 'p1') > 0,
        },
        {
          description: 'traffic returns to priority 0 after it comes back',
          met: served(back?.served, 'p0') > 0,
        },
        {
          // Killing the servers fails the RPC each caller had in flight, and at most one more that it sent
          // to a connection the client had not yet seen close.
          description: 'RPCs failed only when priority 0 was killed under them (at most 2 per caller)',
          met: (down?.failures ?? 0) <= 8 && phases.every((p) => p === down || p.failures === 0),
        },
      ],
    };
  } finally {
    await load.stop();
    client.close();
    for (const b of all) b.stop();
  }
}
