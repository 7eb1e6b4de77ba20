// The live view's metrics of a real grpc-js channel (lbtree.metrics channel option): the channel's page JSON
// shows the OpenTelemetry instruments lbtree records for it with the values the user's MeterProvider
// receives (read through the SDK's pull reader, compared at a moment when neither moves); a counter moves when
// a backend stops; without a MeterProvider the view still shows the metrics named. Real servers on loopback;
// every wait is for a condition.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type AdminServer, type ChannelSnapshot, startAdminServer } from '../../src/admin/index.js';
import { type Backend, newClient, startBackends, whoami } from '../../src/cli/loopback-backends.js';
import { liveChannels, METRICS_CHANNEL_OPTION, register } from '../../src/grpc-js/index.js';
import type { HistogramPointValue, InstrumentValues } from '../../src/metrics/index.js';
import { concurrentCalls } from '../support/concurrent-calls.js';
import { valuesAsSdk } from '../support/metric-values.js';
import { OtelMetrics } from '../support/otel-metrics.js';

const WRR_METRICS = [
  'grpc.lb.wrr.rr_fallback',
  'grpc.lb.wrr.endpoint_weight_not_yet_usable',
  'grpc.lb.wrr.endpoint_weight_stale',
  'grpc.lb.wrr.endpoint_weights',
];
const SUBCHANNEL_METRICS = [
  'grpc.subchannel.connection_attempts_succeeded',
  'grpc.subchannel.connection_attempts_failed',
  'grpc.subchannel.disconnections',
  'grpc.subchannel.open_connections',
];

async function snapshot(admin: AdminServer, id: string): Promise<ChannelSnapshot> {
  const response = await fetch(`${admin.url}channels/${id}.json`);
  assert.equal(response.status, 200);
  return (await response.json()) as ChannelSnapshot;
}

/** Fetches the channel's JSON until `done` holds for it (20 s deadline, naming the metrics seen last). */
async function pollMetrics(
  admin: AdminServer,
  id: string,
  what: string,
  done: (instruments: readonly InstrumentValues[]) => boolean,
  act: () => Promise<unknown> = () => new Promise((r) => setTimeout(r, 20)),
): Promise<readonly InstrumentValues[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { metrics } = await snapshot(admin, id);
    if (done(metrics.instruments)) return metrics.instruments;
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}; last metrics: ${JSON.stringify(metrics)}`);
    }
    await act();
  }
}

const total = (instruments: readonly InstrumentValues[], name: string): number =>
  (instruments.find((i) => i.name === name)?.points ?? []).reduce(
    (sum, p) => sum + ('value' in p ? p.value : p.count),
    0,
  );

function channelId(target: string): string {
  const channel = liveChannels.list().find((c) => c.target === target);
  assert.ok(channel, `the registry lists ${target}`);
  return channel.id;
}

describe('the live view shows the OpenTelemetry metrics of a real channel', () => {
  let backends: Backend[];
  let admin: AdminServer;
  const closers: (() => void)[] = [];
  before(async () => {
    register();
    backends = await startBackends(['u20', 'u40', 'u80']);
    admin = await startAdminServer({ port: 0, updateIntervalMs: 50 });
  });
  after(async () => {
    for (const close of closers) close();
    for (const b of backends) b.stop();
    await admin.close();
  });

  test('A78 WRR with ORCA backends: the JSON and the SDK reader agree on every instrument; a stopped backend moves grpc.subchannel.disconnections', async () => {
    const utilization = [0.2, 0.4, 0.8];
    backends.forEach((b, i) => {
      b.backendMetrics = { cpuUtilization: utilization[i]!, rpsFractional: 100 };
    });
    const otel = new OtelMetrics();
    const addresses = backends.map((b) => b.address);
    const client = newClient(
      `endpoints:${addresses.join(';')}`,
      [{ lbtree_weighted_round_robin: { blackoutPeriod: '0s', weightUpdatePeriod: '0.2s' } }],
      { [METRICS_CHANNEL_OPTION]: otel.options([...WRR_METRICS, ...SUBCHANNEL_METRICS]) },
    );
    closers.push(() => client.close());
    await whoami(client, { waitForReady: true, deadlineMs: 10_000 });
    const target = `endpoints:///${addresses.join(';')}`;
    const id = channelId(target);

    // A78: 100 qps over utilization 0.2 / 0.4 / 0.8 gives weights 500 / 250 / 125.
    await pollMetrics(
      admin,
      id,
      'a scheduler update with all three weights (max 500, min 125)',
      (m) => {
        const p = m.find((i) => i.name === 'grpc.lb.wrr.endpoint_weights')?.points[0] as
          | HistogramPointValue
          | undefined;
        return p !== undefined && p.max === 500 && p.buckets.counts[7] !== 0; // 125 is in (100, 250]
      },
      () => concurrentCalls(client, 20),
    );

    // One truth: the JSON read before and after the SDK's collection is the same, and equals it.
    let agreed = false;
    for (let attempt = 0; attempt < 200 && !agreed; attempt++) {
      const first = (await snapshot(admin, id)).metrics.instruments;
      const sdk = await otel.asValues();
      const second = (await snapshot(admin, id)).metrics.instruments;
      if (JSON.stringify(first) !== JSON.stringify(second)) continue; // a scheduler update came between
      assert.deepEqual(valuesAsSdk(first), sdk);
      assert.equal(first.find((i) => i.name === 'grpc.lb.wrr.endpoint_weights')?.unit, '{weight}');
      agreed = true;
    }
    assert.ok(agreed, 'two equal JSON readings around an SDK collection');
    const labels = (await snapshot(admin, id)).metrics.instruments.find(
      (i) => i.name === 'grpc.subchannel.open_connections',
    )!.points[0]!.labels;
    assert.deepEqual(labels, { 'grpc.target': target }, 'no backend service or locality without xDS');

    const [, , stopped] = backends as [Backend, Backend, Backend];
    const before = (await snapshot(admin, id)).metrics.instruments;
    assert.equal(total(before, 'grpc.subchannel.disconnections'), 0);
    assert.equal(total(before, 'grpc.subchannel.open_connections'), 3);
    stopped.stop();
    const afterStop = await pollMetrics(
      admin,
      id,
      'one disconnection',
      (m) => total(m, 'grpc.subchannel.disconnections') === 1,
    );
    assert.equal(total(afterStop, 'grpc.subchannel.open_connections'), 2);
  });

  test('without a MeterProvider: the metrics named in the options, and only those, are in the view', async () => {
    const [a, b] = backends as [Backend, Backend];
    const addresses = [a.address, b.address];
    const client = newClient(`endpoints:${addresses.join(';')}`, [{ lbtree_round_robin: {} }], {
      [METRICS_CHANNEL_OPTION]: { enableMetrics: ['grpc.subchannel.connection_attempts_succeeded'] },
    });
    closers.push(() => client.close());
    for (let i = 0; i < 4; i++) await whoami(client, { deadlineMs: 10_000 });
    const id = channelId(`endpoints:///${addresses.join(';')}`);
    const m = await pollMetrics(
      admin,
      id,
      'two successful connection attempts',
      (x) => total(x, 'grpc.subchannel.connection_attempts_succeeded') === 2,
    );
    assert.deepEqual(
      m.map((i) => i.name),
      ['grpc.subchannel.connection_attempts_succeeded'],
    );
  });
});
