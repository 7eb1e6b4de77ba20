import { type BackendClientType, newClient, startBackends, whoami } from '../../loopback-backends.js';
import { LoadGenerator } from '../load-generator.js';
import type { ScenarioContext, ScenarioResult } from '../scenario.js';
import { playStage } from '../stage.js';

const USERS = Array.from({ length: 12 }, (_, i) => `user-${i + 1}`);

/** Where each user's requests land now. A request caught on a connection as it dies is tried again. */
async function homes(client: BackendClientType): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const user of USERS) {
    for (let attempt = 1; ; attempt++) {
      try {
        out.set(user, await whoami(client, { waitForReady: true, headers: { 'x-user': user } }));
        break;
      } catch (e) {
        if (attempt === 3) throw e;
      }
    }
  }
  return out;
}

/** ring_hash keeps each user on one backend; a backend dies and only its users move; it returns and so do they. */
export async function playRingHashAffinity({ view, pace }: ScenarioContext): Promise<ScenarioResult> {
  const backends = await startBackends(['ring-1', 'ring-2', 'ring-3', 'ring-4']);
  const client = newClient(
    `endpoints:${backends.map((b) => b.address).join(';')}`,
    [{ ring_hash_experimental: { requestHashHeader: 'x-user' } }],
    pace.channelOptions,
  );
  const load = new LoadGenerator(client, pace.ratePerSecond, 4, (n) => ({
    'x-user': USERS[n % USERS.length]!,
  }));
  try {
    const before = await homes(client);
    const victimName = before.get(USERS[0]!)!;
    const victim = backends.find((b) => b.name === victimName)!;
    view.event(`each user has a home backend: ${[...before].map(([u, b]) => `${u}→${b}`).join(' ')}`);
    let during = new Map<string, string>();
    load.start();
    await playStage({
      scenario: 'ring_hash affinity',
      view,
      client,
      load,
      backends,
      pace,
      cues: [
        { label: '12 users, each pinned to the backend its x-user hash lands on' },
        {
          label: `${victimName} dies: only its users move, to the next endpoint on the ring`,
          action: async () => {
            victim.stop();
            during = await homes(client);
          },
        },
        {
          label: `${victimName} is back: its users return to it`,
          action: async () => {
            await victim.start();
          },
          settled: (s) => (s.get(victimName) ?? 0) >= 10,
        },
      ],
    });
    await load.stop();
    const after = await homes(client);
    const victims = USERS.filter((u) => before.get(u) === victimName);
    const others = USERS.filter((u) => before.get(u) !== victimName);
    return {
      notes: [
        `${victimName} was home to ${victims.join(', ')}`,
        `while it was down they went to ${victims.map((u) => during.get(u)).join(', ')}`,
        load.describeFailures(`${victimName} when it died`),
      ].filter(Boolean),
      expectations: [
        {
          description: `${victimName}'s users moved elsewhere while it was down`,
          met: victims.every((u) => during.get(u) !== victimName),
        },
        {
          description: 'every other user stayed on its home backend',
          met: others.every((u) => during.get(u) === before.get(u)),
        },
        {
          description: 'after it came back every user is home again',
          met: USERS.every((u) => after.get(u) === before.get(u)),
        },
        {
          description: 'no RPC failed apart from those in flight on the dying backend (at most 4)',
          met: load.failures <= 4,
        },
      ],
    };
  } finally {
    await load.stop();
    client.close();
    for (const b of backends) b.stop();
  }
}
