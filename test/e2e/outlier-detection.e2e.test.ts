import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type * as Grpc from '@grpc/grpc-js';
import type { Backend, BackendClientType } from '../../src/cli/loopback-backends.js';

// grpc-js comes from traced-grpc (GRPC_TRACE set before it loads); its trace lines show
// lbtree's policy is the one that ejected.
const { traces } = await import('../support/traced-grpc.js');
const { newClient, startBackends, whoami } = await import('../../src/cli/loopback-backends.js');
const { register } = await import('../../src/grpc-js/index.js');

const CONFIG = [
  {
    outlier_detection_experimental: {
      // Short enough for a test, long enough that a loaded machine still sends request_volume calls to
      // each server within one interval (the RPCs go in batches, see rpcsUntil).
      interval: '1s',
      baseEjectionTime: '1s',
      maxEjectionPercent: 34,
      failurePercentageEjection: { threshold: 30, minimumHosts: 3, requestVolume: 5 },
      childPolicy: [{ round_robin: {} }],
    },
  },
];

/** RPCs in flight at once: one at a time, a machine loaded enough to make each take 50 ms would send fewer
 * than request_volume calls to a server in an interval, and nothing would ever be ejected. */
const BATCH = 6;

/** Runs RPCs, BATCH at a time, until `done` says so over the last outcomes, or the deadline passes. */
async function rpcsUntil(
  client: BackendClientType,
  done: (outcomes: readonly string[]) => boolean,
  deadlineMs = 20_000,
): Promise<string[]> {
  const outcomes: string[] = [];
  const end = Date.now() + deadlineMs;
  while (!done(outcomes)) {
    assert.ok(Date.now() < end, `condition not reached; last outcomes: ${outcomes.slice(-30).join(' ')}`);
    const batch = Array.from({ length: BATCH }, () =>
      whoami(client, { waitForReady: true }).catch((e: Grpc.ServiceError) => `error:${e.code}`),
    );
    outcomes.push(...(await Promise.all(batch)));
  }
  return outcomes;
}

const lastN = (outcomes: readonly string[], n: number) => (outcomes.length >= n ? outcomes.slice(-n) : null);

describe('outlier_detection_experimental on a real grpc-js channel (A50, A61)', () => {
  let backends: Backend[];
  let client: BackendClientType;
  before(async () => {
    register();
    backends = await startBackends(['a', 'b', 'c']);
    client = newClient(`endpoints:${backends.map((b) => b.address).join(';')}`, CONFIG);
  });
  after(() => {
    client?.close();
    for (const b of backends) b.stop();
  });

  test('a server failing half its calls is ejected, then returns once it recovers', async () => {
    const [a, b, c] = backends as [Backend, Backend, Backend];
    b.failEvery = 2;
    // Ejected: 60 RPCs in a row all served by a and c.
    await rpcsUntil(client, (o) => lastN(o, 60)?.every((x) => x === 'a' || x === 'c') ?? false);
    assert.ok(b.failed > 0, 'b did fail calls before it was ejected');
    assert.ok(
      traces.some((t) => t.includes('outlier_detection: ejecting endpoint') && t.includes(b.address)),
      "lbtree's outlier detection traced the ejection",
    );
    // Recovered: after base_ejection_time b is un-ejected and serves again, without failures.
    b.failEvery = 0;
    const servedBefore = b.served;
    await rpcsUntil(client, () => b.served >= servedBefore + 10);
    assert.ok(
      traces.some((t) => t.includes('outlier_detection: un-ejecting endpoint') && t.includes(b.address)),
    );
    assert.ok(a.served > 0 && c.served > 0);
  });
});
