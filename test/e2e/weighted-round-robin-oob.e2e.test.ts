import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Backend, BackendClientType } from '../../src/cli/loopback-backends.js';

// grpc-js comes from traced-grpc (GRPC_TRACE set before it loads); its trace lines show
// lbtree's weighted_round_robin built a weighted scheduler.
const { traces } = await import('../support/traced-grpc.js');
const { newClient, startBackends } = await import('../../src/cli/loopback-backends.js');
const { concurrentCalls: calls } = await import('../support/concurrent-calls.js');
const { register } = await import('../../src/grpc-js/index.js');
const { tally } = await import('../support/sim-picks.js');

const CONFIG = [
  {
    lbtree_weighted_round_robin: {
      blackoutPeriod: '0s',
      weightUpdatePeriod: '0.1s',
      enableOobLoadReport: true,
      oobReportingPeriod: '0.1s',
    },
  },
];

describe('weighted_round_robin on a real grpc-js channel with out-of-band ORCA reports (A58, A51)', () => {
  let backends: Backend[];
  let client: BackendClientType;
  before(async () => {
    register();
    backends = await startBackends(['u20', 'u40', 'u80']);
    const utilization = [0.2, 0.4, 0.8];
    // Only the ORCA service reports load: no per-call trailers, so any weighting comes from the streams.
    backends.forEach((b, i) => {
      b.orca.set({ applicationUtilization: utilization[i]!, rpsFractional: 100 });
    });
    client = newClient(`endpoints:${backends.map((b) => b.address).join(';')}`, CONFIG);
  });
  after(() => {
    client?.close();
    for (const b of backends) b.stop();
  });

  test('each connection runs one StreamCoreMetrics call, and traffic converges to 57 / 29 / 14 %', async () => {
    const deadline = Date.now() + 20_000;
    // A rebuild whose three weights are all known (non-zero).
    const weighted = () =>
      traces.some((t) =>
        /scheduler rebuilt over 3 endpoints: weights \[[1-9][\d.]*, [1-9][\d.]*, [1-9][\d.]*\]/.test(t),
      );
    while (!weighted() || backends.some((b) => b.orca.openStreams === 0)) {
      assert.ok(
        Date.now() < deadline,
        `no weighted scheduler or no ORCA stream: ${traces.slice(-3).join('\n')}`,
      );
      await calls(client, 20);
    }
    for (const b of backends) {
      assert.equal(b.orca.openStreams, 1, `${b.name}: one ORCA stream on its one connection`);
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
