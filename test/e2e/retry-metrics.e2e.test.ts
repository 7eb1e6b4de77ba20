// gRFC A96 (retry metrics) end to end: a real grpc-js server fails the first N attempts of each call with
// UNAVAILABLE (N from a request header; the attempt number from the grpc-previous-rpc-attempts header grpc-js
// sends on retries and hedges), and grpc-js retries: on an xds: channel, with the A44 retry policy lbtree's control
// plane serves; on an endpoints: channel, with a retry or hedging policy in a plain service config. The values are
// read back through the OpenTelemetry SDK the user plugs in.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type * as Grpc from '@grpc/grpc-js';
import { type CollectedMetric, OtelMetrics } from '../support/otel-metrics.js';

const { BackendClient, cp, grpc, LbtreeXdsHarness, whoami } = await import(
  '../support/lbtree-xds-harness.js'
);
const { WHOAMI_SERVICE } = await import('../../src/cli/loopback-backends.js');
const { METRICS_CHANNEL_OPTION, metricsChannelOption } = await import('../../src/grpc-js/index.js');

const A96 = [
  'grpc.client.call.retries',
  'grpc.client.call.transparent_retries',
  'grpc.client.call.hedges',
  'grpc.client.call.retry_delay',
];
const SERVICE = 'retry-metrics';
const TARGET = `xds:///${SERVICE}`;
const LABELS = { 'grpc.method': 'lbtree.test.Backend/Whoami', 'grpc.target': TARGET };
/** How long the server takes to fail an attempt: time with an attempt active, which is no retry delay. */
const FAIL_AFTER_MS = 300;

/** A grpc-js server failing the first `x-fail-attempts` attempts of each call, each after `x-fail-delay-ms`. */
class FlakyServer {
  readonly server = new grpc.Server();
  /**
   * Attempts that reached it, by their grpc-previous-rpc-attempts (absent: 0), per call (its x-call-id): a hedge of an
   * earlier call may still arrive while a later call runs.
   */
  private readonly attempts = new Map<string, number[]>();
  port = 0;

  /** The attempts of the call with this x-call-id, in the order they arrived. */
  attemptsOf(callId: string): number[] {
    return this.attempts.get(callId) ?? [];
  }

  async start(): Promise<this> {
    this.server.addService(WHOAMI_SERVICE, {
      whoami: (call: Grpc.ServerUnaryCall<Buffer, Buffer>, callback: Grpc.sendUnaryData<Buffer>) => {
        const previous = Number(call.metadata.get('grpc-previous-rpc-attempts')[0] ?? 0);
        const callId = String(call.metadata.get('x-call-id')[0] ?? '');
        const attempts = this.attempts.get(callId) ?? [];
        attempts.push(previous);
        this.attempts.set(callId, attempts);
        const failures = Number(call.metadata.get('x-fail-attempts')[0] ?? 0);
        if (previous >= failures) return callback(null, Buffer.from('flaky'));
        const delay = Number(call.metadata.get('x-fail-delay-ms')[0] ?? 0);
        setTimeout(() => callback({ code: grpc.status.UNAVAILABLE, details: 'not yet' }), delay);
      },
    });
    this.port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, port) =>
        e ? reject(e) : resolve(port),
      ),
    );
    return this;
  }
}

/** The one histogram point of `name` with these labels: its count and sum (undefined: nothing recorded). */
function histogram(m: Map<string, CollectedMetric>, name: string, labels: Record<string, string> = LABELS) {
  const metric = m.get(name);
  if (metric === undefined || metric.points.length === 0) return undefined;
  assert.equal(metric.points.length, 1, `${name}: one point`);
  const p = metric.points[0]!;
  assert.deepEqual(p.attributes, labels, `${name}'s labels`);
  return { count: p.histogram!.count, sum: p.histogram!.sum! };
}

describe("A96 retry metrics on lbtree's xds: channels (A44 retry policy from lbtree's control plane)", () => {
  const h = new LbtreeXdsHarness('lbtree-retry-metrics-e2e');
  const flaky = new FlakyServer();
  const otel = new OtelMetrics();
  /** A second MeterProvider, on which only a metric of another gRFC is named. */
  const otherOtel = new OtelMetrics();
  const clients: InstanceType<typeof BackendClient>[] = [];
  let client: InstanceType<typeof BackendClient>;

  /** Listener `name` → one route, with A44's retry policy, to the cluster of the flaky server. */
  const service = (name: string) => [
    cp.listener(name, { rds: `${name}-routes` }),
    cp.routeConfiguration(`${name}-routes`, [
      {
        name: `${name}-vh`,
        routes: [
          {
            cluster: name,
            // A44: 3 retries (4 attempts), backoff 100 ms doubling (A44's multiplier is 2) up to 1 s.
            retryPolicy: {
              retryOn: 'unavailable',
              numRetries: 3,
              retryBackOff: { baseInterval: '0.1s', maxInterval: '1s' },
            },
          },
        ],
      },
    ]),
    cp.cluster({ name }),
    cp.clusterLoadAssignment(name, [{ zone: 'a', endpoints: [`127.0.0.1:${flaky.port}`] }]),
  ];

  before(async () => {
    await h.start([]);
    await flaky.start();
    h.publish(SERVICE, service(SERVICE));
    const channel = (options: Grpc.ChannelOptions) => {
      const c = new BackendClient(TARGET, grpc.credentials.createInsecure(), options);
      clients.push(c);
      return c;
    };
    client = channel({ [METRICS_CHANNEL_OPTION]: metricsChannelOption(otel.options(A96)) });
    // Warm up: resolution and connection, one attempt.
    assert.equal(await call(client, 0), 'flaky');
  });
  after(async () => {
    for (const c of clients) c.close();
    flaky.server.forceShutdown();
    await h.close();
  });

  const call = (c: InstanceType<typeof BackendClient>, failures: number, callId = '') =>
    whoami(c, {
      waitForReady: true,
      deadlineMs: 20_000,
      headers: {
        'x-fail-attempts': String(failures),
        'x-fail-delay-ms': String(FAIL_AFTER_MS),
        'x-call-id': callId,
      },
    });

  test('A96 "If there were no retries, 0 is not reported": a call answered at its first attempt records none of the four', async () => {
    const m = await otel.collect();
    for (const name of A96) assert.equal(histogram(m, name), undefined, name);
  });

  test("A96 grpc.client.call.retries / retry_delay: a call failing 2 attempts records retries 2 and a delay within 2 backoffs (100 ms, 200 ms × grpc-js's jitter 0.8–1.2), not the failed attempts' 2 × 300 ms", async (t) => {
    assert.equal(await call(client, 2, 'retried'), 'flaky');
    assert.deepEqual(
      flaky.attemptsOf('retried'),
      [0, 1, 2],
      'the server saw the original attempt and 2 retries',
    );
    const m = await otel.collect();
    assert.deepEqual(histogram(m, 'grpc.client.call.retries'), { count: 1, sum: 2 });
    const delay = histogram(m, 'grpc.client.call.retry_delay')!;
    t.diagnostic(`retry_delay ${delay.sum.toFixed(4)} s`);
    assert.equal(delay.count, 1);
    // grpc-js waits backoff × [0.8, 1.2]: 0.08–0.12 s, then 0.16–0.24 s. Below: a timer runs no earlier than
    // asked (less a few ms of event-loop time); above: the attempts (300 ms each to fail) are not delay.
    assert.ok(delay.sum >= 0.24 - 0.01, `retry_delay ${delay.sum} s ≥ 0.23 s`);
    assert.ok(
      delay.sum <= 0.36 + 0.2,
      `retry_delay ${delay.sum} s ≤ 0.56 s (with the attempts it would be ≥ 0.84 s)`,
    );
    assert.equal(histogram(m, 'grpc.client.call.transparent_retries'), undefined);
    assert.equal(histogram(m, 'grpc.client.call.hedges'), undefined, 'xDS configures no hedging (A44)');
  });

  test('A44 num_retries 3 caps a call failing every attempt at 4 attempts: it fails UNAVAILABLE and records retries 3', async () => {
    await assert.rejects(
      call(client, 10, 'capped'),
      (e: Grpc.ServiceError) => e.code === grpc.status.UNAVAILABLE,
    );
    assert.deepEqual(flaky.attemptsOf('capped'), [0, 1, 2, 3]);
    const m = await otel.collect();
    const retries = histogram(m, 'grpc.client.call.retries')!;
    assert.deepEqual(retries, { count: 2, sum: 2 + 3 });
    // A96's recommended buckets [1, 2, 3, 4, 5]: one call in (1, 2], one in (2, 3].
    const point = m.get('grpc.client.call.retries')!.points[0]!.histogram!;
    assert.deepEqual(point.buckets.boundaries, [1, 2, 3, 4, 5]);
    assert.deepEqual(point.buckets.counts, [0, 1, 1, 0, 0, 0]);
    const delay = histogram(m, 'grpc.client.call.retry_delay')!;
    // This call's backoffs: 100, 200, 400 ms × 0.8–1.2, i.e. 0.56–0.84 s, added to the first call's 0.24–0.36 s.
    assert.equal(delay.count, 2);
    assert.ok(delay.sum >= 0.8 - 0.02 && delay.sum <= 1.2 + 0.4, `retry_delay sum ${delay.sum} s`);
  });

  test('A79: a channel whose MeterProvider names no A96 metric records none, though its calls retry', async () => {
    const other = new BackendClient(TARGET, grpc.credentials.createInsecure(), {
      [METRICS_CHANNEL_OPTION]: metricsChannelOption(otherOtel.options(['grpc.lb.wrr.rr_fallback'])),
    });
    clients.push(other);
    assert.equal(await call(other, 1, 'other-provider'), 'flaky');
    assert.deepEqual(flaky.attemptsOf('other-provider'), [0, 1]);
    const m = await otherOtel.collect();
    for (const name of A96) assert.equal(m.get(name), undefined, name);
  });

  test('A88 + A96: a call that waited out a resolution error is routed when sent, and traced: failing 1 attempt, it records retries 1', async () => {
    const name = 'retry-metrics-deferred';
    const deferredOtel = new OtelMetrics();
    // A Listener without an api_listener: NACKed with nothing cached, so the channel's resolution fails.
    h.publish(name, [{ '@type': cp.LISTENER_TYPE_URL, name }]);
    const deferred = new BackendClient(`xds:///${name}`, grpc.credentials.createInsecure(), {
      [METRICS_CHANNEL_OPTION]: metricsChannelOption(deferredOtel.options(A96)),
    });
    clients.push(deferred);
    for (;;) {
      const error = await whoami(deferred, { deadlineMs: 5000 }).then(
        () => assert.fail('a call succeeded before the Listener was good'),
        (e: Grpc.ServiceError) => e,
      );
      if (error.code === grpc.status.UNAVAILABLE && error.details.includes(`NACK of Listener "${name}"`))
        break;
      await new Promise((r) => setTimeout(r, 10));
    }
    // Selected while the resolution fails: lbtree's config selector leaves the route to the call's send.
    const waiting = call(deferred, 1, 'deferred');
    h.publish(name, service(name));
    assert.equal(await waiting, 'flaky');
    assert.deepEqual(flaky.attemptsOf('deferred'), [0, 1], 'the server saw the original attempt and 1 retry');
    const m = await deferredOtel.collect();
    const labels = { ...LABELS, 'grpc.target': `xds:///${name}` };
    assert.deepEqual(histogram(m, 'grpc.client.call.retries', labels), { count: 1, sum: 1 });
    assert.equal(histogram(m, 'grpc.client.call.retry_delay', labels)?.count, 1);
    assert.equal(histogram(m, 'grpc.client.call.transparent_retries', labels), undefined);
  });
});

describe('A96 retry metrics on endpoints: channels with lbtree_round_robin and a plain service config', () => {
  const flaky = new FlakyServer();
  const clients: InstanceType<typeof BackendClient>[] = [];
  let target = '';
  let labels: Record<string, string> = {};

  before(async () => {
    await flaky.start();
    target = `endpoints:///127.0.0.1:${flaky.port}`;
    labels = { 'grpc.method': 'lbtree.test.Backend/Whoami', 'grpc.target': target };
  });
  after(() => {
    for (const c of clients) c.close();
    flaky.server.forceShutdown();
  });

  /** A channel to the flaky server whose service config gives the Backend service `policy`. */
  const channel = (otel: OtelMetrics, policy: object, enable = A96) => {
    const c = new BackendClient(target, grpc.credentials.createInsecure(), {
      'grpc.service_config': JSON.stringify({
        loadBalancingConfig: [{ lbtree_round_robin: {} }],
        methodConfig: [{ name: [{ service: 'lbtree.test.Backend' }], ...policy }],
      }),
      [METRICS_CHANNEL_OPTION]: metricsChannelOption(otel.options(enable)),
    });
    clients.push(c);
    return c;
  };
  const call = (c: InstanceType<typeof BackendClient>, failures: number, callId = '') =>
    whoami(c, {
      waitForReady: true,
      deadlineMs: 20_000,
      headers: {
        'x-fail-attempts': String(failures),
        'x-fail-delay-ms': String(FAIL_AFTER_MS),
        'x-call-id': callId,
      },
    });

  test("A6 retryPolicy (initialBackoff 0.1s, multiplier 2): a call failing 2 attempts records retries 2 and a delay within grpc-js's backoff bounds; a call without retries adds nothing", async (t) => {
    const otel = new OtelMetrics();
    const c = channel(otel, {
      retryPolicy: {
        maxAttempts: 4,
        initialBackoff: '0.1s',
        maxBackoff: '1s',
        backoffMultiplier: 2,
        retryableStatusCodes: ['UNAVAILABLE'],
      },
    });
    assert.equal(await call(c, 0), 'flaky');
    let m = await otel.collect();
    for (const name of A96) assert.equal(histogram(m, name, labels), undefined, name);
    assert.equal(await call(c, 2, 'a6-retried'), 'flaky');
    assert.deepEqual(flaky.attemptsOf('a6-retried'), [0, 1, 2]);
    m = await otel.collect();
    assert.deepEqual(histogram(m, 'grpc.client.call.retries', labels), { count: 1, sum: 2 });
    const delay = histogram(m, 'grpc.client.call.retry_delay', labels)!;
    t.diagnostic(`retry_delay ${delay.sum.toFixed(4)} s`);
    assert.ok(delay.sum >= 0.24 - 0.01 && delay.sum <= 0.36 + 0.2, `retry_delay ${delay.sum} s`);
    assert.equal(histogram(m, 'grpc.client.call.hedges', labels), undefined);
    assert.equal(await call(c, 0), 'flaky');
    m = await otel.collect();
    assert.equal(histogram(m, 'grpc.client.call.retries', labels)?.count, 1, 'no retries: not reported');
  });

  test('A6 hedgingPolicy (3 attempts, 50 ms apart): the third attempt answers while the first two still wait to fail: hedges 2, retry_delay 0 (an attempt was always active)', async () => {
    const otel = new OtelMetrics();
    const c = channel(otel, {
      hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.05s', nonFatalStatusCodes: ['UNAVAILABLE'] },
    });
    // The warm-up call may hedge too, while the channel connects: the retried call is read as a difference.
    assert.equal(await call(c, 0), 'flaky');
    const before = await otel.collect();
    const none = { count: 0, sum: 0 };
    const hedgesBefore = histogram(before, 'grpc.client.call.hedges', labels) ?? none;
    const delayBefore = histogram(before, 'grpc.client.call.retry_delay', labels) ?? none;
    assert.equal(await call(c, 2, 'a6-hedged'), 'flaky');
    assert.deepEqual(flaky.attemptsOf('a6-hedged'), [0, 1, 2]);
    const m = await otel.collect();
    assert.deepEqual(histogram(m, 'grpc.client.call.hedges', labels), {
      count: hedgesBefore.count + 1,
      sum: hedgesBefore.sum + 2,
    });
    assert.deepEqual(histogram(m, 'grpc.client.call.retry_delay', labels), {
      count: delayBefore.count + 1,
      sum: delayBefore.sum,
    });
    assert.equal(histogram(m, 'grpc.client.call.retries', labels), undefined);
    assert.equal(histogram(m, 'grpc.client.call.transparent_retries', labels), undefined);
  });

  test('A79: enabled only when named: the same retried call on a channel naming only retries records retries alone', async () => {
    const otel = new OtelMetrics();
    const c = channel(
      otel,
      {
        retryPolicy: {
          maxAttempts: 4,
          initialBackoff: '0.01s',
          maxBackoff: '0.01s',
          backoffMultiplier: 1,
          retryableStatusCodes: ['UNAVAILABLE'],
        },
      },
      ['grpc.client.call.retries'],
    );
    assert.equal(await call(c, 1), 'flaky');
    const m = await otel.collect();
    assert.deepEqual(histogram(m, 'grpc.client.call.retries', labels), { count: 1, sum: 1 });
    assert.equal(m.get('grpc.client.call.retry_delay'), undefined);
  });
});
