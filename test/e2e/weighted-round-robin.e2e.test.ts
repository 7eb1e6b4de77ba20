import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Backend, BackendClientType } from '../../src/cli/loopback-backends.js';

// grpc-js comes from traced-grpc (GRPC_TRACE set before it loads); its trace lines show
// lbtree's weighted_round_robin built the scheduler.
const { traces } = await import('../support/traced-grpc.js');
const { newClient, startBackends } = await import('../../src/cli/loopback-backends.js');
const { concurrentCalls: calls } = await import('../support/concurrent-calls.js');
const { register } = await import('../../src/grpc-js/index.js');
const { tally } = await import('../support/sim-picks.js');

const CONFIG = [{ lbtree_weighted_round_robin: { blackoutPeriod: '0s', weightUpdatePeriod: '0.1s' } }];

describe('weighted_round_robin on a real grpc-js channel (A58 with per-call ORCA reports, A51)', () => {
  let backends: Backend[];
  let client: BackendClientType;
  before(async () => {
    register();
    backends = await startBackends(['u20', 'u40', 'u80']);
    const utilization = [0.2, 0.4, 0.8];
    backends.forEach((b, i) => {
      b.backendMetrics = { cpuUtilization: utilization[i]!, rpsFractional: 100 };
    });
    client = newClient(`endpoints:${backends.map((b) => b.address).join(';')}`, CONFIG);
  });
  after(() => {
    client?.close();
    for (const b of backends) b.stop();
  });

  test('traffic converges to the inverse of the reported utilization (57 / 29 / 14 %)', async () => {
    // Until weights are known the policy rotates evenly: wait until a rebuild used all three weights.
    const deadline = Date.now() + 20_000;
    while (!traces.some((t) => /scheduler rebuilt over 3 endpoints: weights \[/.test(t))) {
      assert.ok(Date.now() < deadline, 'no weighted scheduler was built');
      await calls(client, 20);
    }
    const counts = tally(await calls(client, 1000));
    const share = (name: string) => (counts[name] ?? 0) / 1000;
    const want = { u20: 4 / 7, u40: 2 / 7, u80: 1 / 7 };
    for (const [name, expected] of Object.entries(want)) {
      assert.ok(
        Math.abs(share(name) - expected) <= 0.05,
        `${name}: ${share(name)} vs ${expected} (${JSON.stringify(counts)})`,
      );
    }
  });
});
