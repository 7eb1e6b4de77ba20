// Calls made while an xds: channel's resolution fails (A88: a NACKed Listener with nothing cached) and that
// wait for it (wait-for-ready) are routed once a good Listener arrives — and then get their route's per-call
// treatment as calls routed by the config selector do: A33 faults (abort, delay), the A31 route timeout (a
// delay longer than it ends the call with DEADLINE_EXCEEDED) and the A44 retry policy (grpc-js retries the
// UNAVAILABLE attempt on another pick). lbtree's control plane, real grpc-js servers, lbtree's resolver.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ServiceError } from '@grpc/grpc-js';
import type { BackendClientType } from '../../src/cli/loopback-backends.js';
import { faultFilter } from '../../src/control-plane/builders.js';
import type { ResourceJson } from '../../src/control-plane/index.js';
import { cp, grpc, LbtreeXdsHarness } from '../support/lbtree-xds-harness.js';

type Json = Record<string, unknown>;

const UNAVAILABLE = grpc.status.UNAVAILABLE;

interface Outcome {
  readonly code: number;
  readonly details: string;
  readonly ms: number;
}

/** One call; `deadlineMs` undefined sends no deadline at all. */
function call(
  client: BackendClientType,
  options: { waitForReady: boolean; deadlineMs?: number },
): Promise<Outcome> {
  const start = performance.now();
  return new Promise((resolve) => {
    const metadata = new grpc.Metadata({ waitForReady: options.waitForReady });
    const pass = (b: Buffer) => b;
    client.makeUnaryRequest(
      '/lbtree.test.Backend/Whoami',
      pass,
      pass,
      Buffer.alloc(0),
      metadata,
      options.deadlineMs === undefined ? {} : { deadline: Date.now() + options.deadlineMs },
      (e: ServiceError | null) =>
        resolve({ code: e?.code ?? 0, details: e?.details ?? '', ms: performance.now() - start }),
    );
  });
}

describe('A88 + A31/A33/A44: calls that waited out a resolution error get their route’s timeout, faults and retries', () => {
  const h = new LbtreeXdsHarness('lbtree-deferred-route');

  before(() => h.start(['good', 'flaky', 'held']));
  after(() => h.close());

  /** Listener `name` (with the fault filter `fault`, if any) → one route to the cluster of `endpoints`. */
  function service(name: string, endpoints: string[], route: Json, fault?: Json): ResourceJson[] {
    return [
      cp.listener(name, { rds: `${name}-routes` }, fault === undefined ? {} : { httpFilters: [fault] }),
      {
        '@type': cp.ROUTE_CONFIGURATION_TYPE_URL,
        name: `${name}-routes`,
        virtualHosts: [
          {
            name: `${name}-vh`,
            domains: ['*'],
            routes: [{ match: { prefix: '' }, route: { cluster: name, ...route } }],
          },
        ],
      },
      cp.cluster({ name }),
      cp.clusterLoadAssignment(name, [{ zone: 'a', endpoints }]),
    ];
  }

  /**
   * A channel to `name` whose Listener is NACKed (nothing cached: the resolution fails), checked by a call
   * that is not wait-for-ready failing with UNAVAILABLE and the NACK reason; then `n` wait-for-ready calls
   * start, which wait.
   */
  async function waitingCalls(
    name: string,
    n: number,
    deadlineMs?: number,
  ): Promise<{ client: BackendClientType; calls: Promise<Outcome>[] }> {
    h.publish(name, [{ '@type': cp.LISTENER_TYPE_URL, name }]);
    const client = h.channel(name);
    for (;;) {
      const o = await call(client, { waitForReady: false, deadlineMs: 5000 });
      if (o.code === UNAVAILABLE && o.details.includes(`NACK of Listener "${name}"`)) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const calls = Array.from({ length: n }, () =>
      call(client, { waitForReady: true, ...(deadlineMs !== undefined && { deadlineMs }) }),
    );
    return { client, calls };
  }

  test('A33 abort: the waiting calls fail with the route’s injected status', async () => {
    const { calls } = await waitingCalls('deferred-abort', 5, 10_000);
    h.publish(
      'deferred-abort',
      service(
        'deferred-abort',
        [h.backend('good').address],
        {},
        faultFilter({ abort: { grpcStatus: grpc.status.ABORTED, percentage: { numerator: 100 } } }),
      ),
    );
    for (const o of await Promise.all(calls)) {
      assert.equal(o.code, grpc.status.ABORTED, o.details);
      assert.match(o.details, /fault injected by the HTTP filter "envoy.filters.http.fault"/);
    }
  });

  test('A33 delay within the A31 timeout: the calls start 200 ms after routing and are served', async () => {
    const { calls } = await waitingCalls('deferred-delay', 3, 10_000);
    const routedAt = performance.now();
    h.publish(
      'deferred-delay',
      service(
        'deferred-delay',
        [h.backend('good').address],
        { maxStreamDuration: { maxStreamDuration: '5s' } },
        faultFilter({ delay: { fixedMs: 200, percentage: { numerator: 100 } } }),
      ),
    );
    for (const o of await Promise.all(calls)) assert.equal(o.code, grpc.status.OK, o.details);
    assert.ok(performance.now() - routedAt >= 200, 'the delay ran');
  });

  test('A31: a 2 s fault delay under a 300 ms route timeout ends the calls with DEADLINE_EXCEEDED, unsent', async () => {
    const { calls } = await waitingCalls('deferred-timeout', 3, 10_000);
    const served = h.backend('good').served;
    const routedAt = performance.now();
    h.publish(
      'deferred-timeout',
      service(
        'deferred-timeout',
        [h.backend('good').address],
        { maxStreamDuration: { maxStreamDuration: '0.300s' } },
        faultFilter({ delay: { fixedMs: 2000, percentage: { numerator: 100 } } }),
      ),
    );
    for (const o of await Promise.all(calls)) {
      assert.equal(o.code, grpc.status.DEADLINE_EXCEEDED, o.details);
    }
    const took = performance.now() - routedAt;
    assert.ok(took >= 300 && took < 1900, `ended ${took.toFixed(0)} ms after the route arrived`);
    assert.equal(h.backend('good').served, served, 'no call reached the server');
  });

  test('A31: a call without a deadline to a server that never answers ends after the route timeout (grpc-timeout)', {
    timeout: 15_000,
  }, async () => {
    const held = h.backend('held');
    held.hold();
    const { calls } = await waitingCalls('deferred-held', 1);
    h.publish(
      'deferred-held',
      service('deferred-held', [held.address], { maxStreamDuration: { maxStreamDuration: '0.300s' } }),
    );
    const [o] = await Promise.all(calls);
    assert.equal(o!.code, grpc.status.DEADLINE_EXCEEDED, o!.details);
    held.release();
  });

  test('A44: with retry_on unavailable, a waiting call whose first attempt gets UNAVAILABLE is retried and served; without the policy it fails', async () => {
    const flaky = h.backend('flaky');
    // Every second call fails with UNAVAILABLE, and the next one to arrive is such a call.
    flaky.failEvery = 2;
    flaky.failCode = UNAVAILABLE;
    const nextFails = () => {
      if ((flaky.served + flaky.failed) % 2 === 0) flaky.served++;
    };
    const retried = await waitingCalls('deferred-retry', 1, 10_000);
    nextFails();
    const failedBefore = flaky.failed;
    const retryPolicy = {
      retryOn: 'unavailable',
      numRetries: 1,
      retryBackOff: { baseInterval: '0.001s', maxInterval: '0.004s' },
    };
    h.publish('deferred-retry', service('deferred-retry', [flaky.address], { retryPolicy }));
    const [served] = await Promise.all(retried.calls);
    assert.equal(served!.code, grpc.status.OK, served!.details);
    assert.equal(flaky.failed, failedBefore + 1, 'the first attempt failed with UNAVAILABLE and was retried');

    const plain = await waitingCalls('deferred-no-retry', 1, 10_000);
    nextFails();
    h.publish('deferred-no-retry', service('deferred-no-retry', [flaky.address], {}));
    const [failed] = await Promise.all(plain.calls);
    assert.equal(failed!.code, UNAVAILABLE);
    assert.equal(failed!.details, 'flaky is failing');
  });
});
