// A78 / A91 / A94 metrics from real grpc-js channels, read through the OpenTelemetry SDK the user plugs in with
// the `lbtree.metrics` channel option: each test waits for the values it checks, never for time to pass.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type * as Grpc from '@grpc/grpc-js';
import {
  type Backend,
  type BackendClientType,
  Blackhole,
  newClient,
  startBackends,
  whoami,
} from '../../src/cli/loopback-backends.js';
import { METRICS_CHANNEL_OPTION, metricsChannelOption, register } from '../../src/grpc-js/index.js';
import { concurrentCalls } from '../support/concurrent-calls.js';
import { type CollectedMetric, OtelMetrics, sumOf } from '../support/otel-metrics.js';

/** Collects until `check` holds on the collected metrics; rejects with `what` and the last values seen. */
async function eventually(
  otel: OtelMetrics,
  what: string,
  check: (m: Map<string, CollectedMetric>) => boolean,
  act: () => Promise<unknown> = () => new Promise((r) => setTimeout(r, 20)),
  deadlineMs = 20_000,
): Promise<Map<string, CollectedMetric>> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const m = await otel.collect();
    if (check(m)) return m;
    if (Date.now() > end) {
      const seen = [...m.values()].map(
        (x) => `${x.name}=${JSON.stringify(x.points.map((p) => [p.attributes, p.value]))}`,
      );
      throw new Error(`timed out waiting for ${what}; saw ${seen.join(' ')}`);
    }
    await act();
  }
}

const endpointsTarget = (addresses: readonly string[]) => `endpoints:///${addresses.join(';')}`;

describe('metrics on real grpc-js channels (lbtree.metrics channel option)', () => {
  const clients: BackendClientType[] = [];
  const cleanups: (() => void)[] = [];
  before(() => register());
  after(() => {
    for (const c of clients) c.close();
    for (const f of cleanups) f();
  });

  test('A78 WRR: backends reporting utilization 0.2 / 0.4 / 0.8 at 100 qps give weights 500 / 250 / 125', async () => {
    const backends = await startBackends(['u20', 'u40', 'u80']);
    cleanups.push(() => {
      for (const b of backends) b.stop();
    });
    const utilization = [0.2, 0.4, 0.8];
    backends.forEach((b, i) => {
      b.backendMetrics = { cpuUtilization: utilization[i]!, rpsFractional: 100 };
    });
    const otel = new OtelMetrics();
    const addresses = backends.map((b) => b.address);
    const client = newClient(
      `endpoints:${addresses.join(';')}`,
      [{ lbtree_weighted_round_robin: { blackoutPeriod: '0s', weightUpdatePeriod: '0.1s' } }],
      {
        [METRICS_CHANNEL_OPTION]: metricsChannelOption(
          otel.options([
            'grpc.lb.wrr.rr_fallback',
            'grpc.lb.wrr.endpoint_weight_not_yet_usable',
            'grpc.lb.wrr.endpoint_weight_stale',
            'grpc.lb.wrr.endpoint_weights',
          ]),
        ),
      },
    );
    clients.push(client);
    // Before the first reports the scheduler falls back to round robin with no usable weight. Once all three
    // are known every update records 500 + 250 + 125: wait for a window of calls whose updates all did.
    const weightsOf = (x: Map<string, CollectedMetric>) => x.get('grpc.lb.wrr.endpoint_weights')?.points[0];
    let before = await otel.collect();
    const m = await eventually(
      otel,
      'scheduler updates with all three weights',
      (x) => {
        const [a, b] = [weightsOf(before)?.histogram, weightsOf(x)?.histogram];
        const count = (b?.count ?? 0) - (a?.count ?? 0);
        const sum = (b?.sum ?? 0) - (a?.sum ?? 0);
        const steady = count >= 3 && Math.abs(sum - (875 * count) / 3) < 1e-6;
        if (!steady) before = x;
        return steady;
      },
      () => concurrentCalls(client, 20),
    );
    const weights = weightsOf(m)!;
    assert.deepEqual(weights.attributes, {
      'grpc.target': endpointsTarget(addresses),
      'grpc.lb.locality': '',
    });
    assert.equal(weights.histogram!.max, 500);
    assert.ok(sumOf(m.get('grpc.lb.wrr.rr_fallback')) >= 1, 'the first update had no weight');
    assert.ok(sumOf(m.get('grpc.lb.wrr.endpoint_weight_not_yet_usable')) >= 3);
    assert.equal(sumOf(m.get('grpc.lb.wrr.endpoint_weight_stale')), 0);
    // Those steady updates did not fall back.
    assert.equal(sumOf(m.get('grpc.lb.wrr.rr_fallback')), sumOf(before.get('grpc.lb.wrr.rr_fallback')));
  });

  test('A61 Happy Eyeballs with a hanging address: one successful attempt (pick_first and subchannel), none failed; then one disconnection', async () => {
    const blackhole = await new Blackhole('127.0.0.1').start();
    const [good] = (await startBackends(['good'])) as [Backend];
    cleanups.push(
      () => blackhole.stop(),
      () => good.stop(),
    );
    const otel = new OtelMetrics();
    const target = `endpoints:${blackhole.address},${good.address}`;
    const client = newClient(target, [{ lbtree_pick_first: {} }], {
      [METRICS_CHANNEL_OPTION]: otel.options([
        'grpc.lb.pick_first.connection_attempts_succeeded',
        'grpc.lb.pick_first.connection_attempts_failed',
        'grpc.lb.pick_first.disconnections',
        'grpc.subchannel.connection_attempts_succeeded',
        'grpc.subchannel.connection_attempts_failed',
        'grpc.subchannel.disconnections',
        'grpc.subchannel.open_connections',
      ]),
    });
    clients.push(client);
    assert.equal(await whoami(client, { waitForReady: true, deadlineMs: 5000 }), 'good');
    let m = await otel.collect();
    const canonical = `endpoints:///${blackhole.address},${good.address}`;
    assert.equal(
      sumOf(m.get('grpc.lb.pick_first.connection_attempts_succeeded'), { 'grpc.target': canonical }),
      1,
    );
    assert.equal(sumOf(m.get('grpc.lb.pick_first.connection_attempts_failed')), 0);
    assert.equal(sumOf(m.get('grpc.subchannel.connection_attempts_succeeded')), 1);
    assert.equal(sumOf(m.get('grpc.subchannel.connection_attempts_failed')), 0);
    assert.equal(sumOf(m.get('grpc.subchannel.open_connections')), 1);

    good.stop();
    m = await eventually(
      otel,
      'the disconnection',
      (x) => sumOf(x.get('grpc.lb.pick_first.disconnections')) === 1,
    );
    assert.equal(sumOf(m.get('grpc.subchannel.disconnections')), 1);
    assert.equal(sumOf(m.get('grpc.subchannel.open_connections')), 0);
  });

  test('A91: a server failing half its calls is ejected: ejections_enforced{failure_percentage}', async () => {
    const backends = await startBackends(['a', 'b', 'c']);
    cleanups.push(() => {
      for (const b of backends) b.stop();
    });
    backends[1]!.failEvery = 2;
    const otel = new OtelMetrics();
    const client = newClient(
      `endpoints:${backends.map((b) => b.address).join(';')}`,
      [
        {
          outlier_detection_experimental: {
            interval: '1s',
            baseEjectionTime: '30s',
            maxEjectionPercent: 34,
            failurePercentageEjection: { threshold: 30, minimumHosts: 3, requestVolume: 5 },
            childPolicy: [{ round_robin: {} }],
          },
        },
      ],
      {
        [METRICS_CHANNEL_OPTION]: otel.options([
          'grpc.lb.outlier_detection.ejections_enforced',
          'grpc.lb.outlier_detection.ejections_unenforced',
        ]),
      },
    );
    clients.push(client);
    const rpcs = () =>
      Promise.all(
        Array.from({ length: 6 }, () =>
          whoami(client, { waitForReady: true }).catch((e: Grpc.ServiceError) => `error:${e.code}`),
        ),
      );
    const m = await eventually(
      otel,
      'an enforced ejection',
      (x) => sumOf(x.get('grpc.lb.outlier_detection.ejections_enforced')) >= 1,
      rpcs,
    );
    assert.deepEqual(m.get('grpc.lb.outlier_detection.ejections_enforced')!.points[0]!.attributes, {
      'grpc.target': endpointsTarget(backends.map((b) => b.address)),
      'grpc.lb.outlier_detection.detection_method': 'failure_percentage',
    });
    assert.equal(sumOf(m.get('grpc.lb.outlier_detection.ejections_unenforced')), 0);
  });

  test('a MeterProvider that throws: the channel serves, the error is logged once', async () => {
    const [backend] = (await startBackends(['solo'])) as [Backend];
    cleanups.push(() => backend.stop());
    const client = newClient(`endpoints:${backend.address}`, [{ lbtree_pick_first: {} }], {
      [METRICS_CHANNEL_OPTION]: {
        meterProvider: {
          getMeter: () => {
            throw new Error('no exporter');
          },
        },
        enableMetrics: ['grpc.lb.pick_first.connection_attempts_succeeded'],
      },
    });
    clients.push(client);
    const errors: string[] = [];
    const original = console.error;
    console.error = (message: string) => errors.push(String(message));
    try {
      for (let i = 0; i < 3; i++)
        assert.equal(await whoami(client, { waitForReady: true, deadlineMs: 5000 }), 'solo');
    } finally {
      console.error = original;
    }
    assert.equal(
      errors.filter((e) => /MeterProvider given for metrics threw.*no exporter/s.test(e)).length,
      1,
    );
  });
});
