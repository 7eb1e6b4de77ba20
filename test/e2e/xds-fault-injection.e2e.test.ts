// A33 fault injection end to end (issue 22 §1 / §5): lbtree's control plane serves resources shaped as istiod's
// grpcgen output (./../support/istiod-grpcgen.ts: listener `HOST:PORT` with [HTTPFault{}, router], route and
// cluster `outbound|PORT||HOST`, EDS with a locality and istio metadata), a VirtualService-style fault arrives
// as the route's typed_per_filter_config (A39), real grpc-js servers answer, and grpc-js channels on lbtree's
// `xds:` resolver make the calls. The abort statuses name lbtree's filter instance, which shows lbtree's filter
// ran. The 50 % abort is also run with @grpc/grpc-js-xds, in a child process (grpc-js keeps one `xds:`
// resolver and one set of xDS policy names per process), against the same control plane.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BackendClientType } from '../../src/cli/loopback-backends.js';
import { httpFault } from '../../src/control-plane/builders.js';
import { processActiveFaults } from '../../src/xds/resolver/fault-injection.js';
import { runWithGrpcEnv } from '../support/grpc-env-child.js';
import { ISTIO_FAULT_FILTER, istiodService } from '../support/istiod-grpcgen.js';
import { cp, grpc, LbtreeXdsHarness, until, whoami } from '../support/lbtree-xds-harness.js';

const HOST = 'echo.default.svc.cluster.local';
const PORT = 8080;
const SERVICE = `${HOST}:${PORT}`;
const CALLS = 1000;
/** Calls in flight at once. */
const CONCURRENCY = 50;
const LBTREE_DETAILS = `fault injected by the HTTP filter "${ISTIO_FAULT_FILTER}"`;

interface Outcome {
  /** gRPC status code (0: OK). */
  readonly code: number;
  readonly details: string;
  readonly ms: number;
}

async function call(
  client: BackendClientType,
  headers: Record<string, string> = {},
  deadlineMs = 10_000,
): Promise<Outcome> {
  const start = performance.now();
  try {
    await whoami(client, { waitForReady: true, deadlineMs, headers });
    return { code: grpc.status.OK, details: '', ms: performance.now() - start };
  } catch (e) {
    const err = e as { code: number; details: string };
    return { code: err.code, details: err.details, ms: performance.now() - start };
  }
}

/** `n` calls, CONCURRENCY at a time: how many ended with each code. */
async function countCodes(client: BackendClientType, n: number, headers: Record<string, string> = {}) {
  const counts = new Map<number, number>();
  const details = new Set<string>();
  for (let sent = 0; sent < n; sent += CONCURRENCY) {
    const batch = Math.min(CONCURRENCY, n - sent);
    const outcomes = await Promise.all(Array.from({ length: batch }, () => call(client, headers)));
    for (const o of outcomes) {
      counts.set(o.code, (counts.get(o.code) ?? 0) + 1);
      if (o.code !== grpc.status.OK) details.add(o.details);
    }
  }
  return { counts, details };
}

/** Calls until one ends as `wanted` says (the channel took the new config); rejects after `deadlineMs`. */
async function untilCall(
  what: string,
  client: BackendClientType,
  wanted: (o: Outcome) => boolean,
  headers: Record<string, string> = {},
  deadlineMs = 15_000,
): Promise<void> {
  const start = Date.now();
  let last: Outcome | undefined;
  while (Date.now() - start < deadlineMs) {
    last = await call(client, headers);
    if (wanted(last)) return;
  }
  throw new Error(`timed out waiting for ${what} (last call: ${JSON.stringify(last)})`);
}

/** The child's program: grpc-js-xds's `xds:` resolver, CALLS calls, the count per code as JSON. */
const GRPC_JS_XDS_CHILD = `
import { createRequire } from 'node:module';
const require = createRequire(process.cwd() + '/');
const grpc = require('@grpc/grpc-js');
require('@grpc/grpc-js-xds').register();
const pass = (b) => b;
const Client = grpc.makeGenericClientConstructor({ whoami: { path: '/lbtree.test.Backend/Whoami',
  requestStream: false, responseStream: false, requestSerialize: pass, requestDeserialize: pass,
  responseSerialize: pass, responseDeserialize: pass } }, 'Backend');
const client = new Client('xds:///${SERVICE}', grpc.credentials.createInsecure());
const one = () => new Promise((resolve) => client.whoami(Buffer.alloc(0),
  new grpc.Metadata({ waitForReady: true }), { deadline: Date.now() + 10000 },
  (e) => resolve(e ? e.code + ' ' + e.details : '0')));
const counts = {};
for (let sent = 0; sent < ${CALLS}; sent += ${CONCURRENCY}) {
  for (const r of await Promise.all(Array.from({ length: ${CONCURRENCY} }, one))) counts[r] = (counts[r] ?? 0) + 1;
}
console.log(JSON.stringify(counts));
client.close();
process.exit(0);
`;

describe('A33 fault injection on an istiod-shaped xds: channel (lbtree control plane, real grpc-js servers)', () => {
  const h = new LbtreeXdsHarness('lbtree-fault-e2e');
  let client: BackendClientType;
  const service = (routeFilterConfig?: Record<string, unknown>) =>
    istiodService({
      host: HOST,
      port: PORT,
      endpoints: [h.backend('e1').address, h.backend('e2').address],
      ...(routeFilterConfig !== undefined ? { routeFilterConfig } : {}),
    });
  const withFault = (fault: Parameters<typeof httpFault>[0]) =>
    service({ [ISTIO_FAULT_FILTER]: httpFault(fault) });

  before(async () => {
    await h.start(['e1', 'e2']);
    client = h.channel(SERVICE);
  });
  after(() => h.close());

  test("istiod's listener (HTTPFault{}, router; neither optional) is ACKed; without a fault no call fails", async () => {
    const version = h.publish(SERVICE, service());
    // The channel resolves (and its xDS client subscribes) with its first call.
    const { counts } = await countCodes(client, 200);
    await h.plane.waitForAck({ nodeId: h.nodeId, typeUrl: cp.LISTENER_TYPE_URL, version });
    assert.deepEqual([...counts], [[grpc.status.OK, 200]]);
    assert.ok(h.backend('e1').served > 0 && h.backend('e2').served > 0, 'round robin over both endpoints');
  });

  test('"RPC abort injection": grpc_status ABORTED at 50 % → 50 % ± 6 of 1,000 calls fail with ABORTED', async () => {
    await h.publishAcked(
      SERVICE,
      withFault({ abort: { grpcStatus: grpc.status.ABORTED, percentage: { numerator: 50 } } }),
      cp.ROUTE_CONFIGURATION_TYPE_URL,
    );
    await untilCall('the first injected abort', client, (o) => o.code === grpc.status.ABORTED);
    const { counts, details } = await countCodes(client, CALLS);
    const aborted = counts.get(grpc.status.ABORTED) ?? 0;
    assert.equal(aborted + (counts.get(grpc.status.OK) ?? 0), CALLS, `only OK and ABORTED: ${[...counts]}`);
    assert.ok(aborted >= 440 && aborted <= 560, `${aborted} of ${CALLS} aborted`);
    assert.deepEqual([...details], [LBTREE_DETAILS]);
    console.log(`lbtree: ${aborted} of ${CALLS} calls aborted with ABORTED`);

    // The same scenario with @grpc/grpc-js-xds: the same codes in the same band.
    const child = await runWithGrpcEnv(GRPC_JS_XDS_CHILD, {
      GRPC_XDS_BOOTSTRAP_CONFIG: JSON.stringify(h.plane.bootstrap({ nodeId: 'grpc-js-xds-fault-e2e' })),
    });
    assert.equal(child.status, 0, child.stderr);
    const theirs = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Record<string, number>;
    const theirAborted = theirs[`${grpc.status.ABORTED} Fault injected`] ?? 0;
    assert.equal(theirAborted + (theirs['0'] ?? 0), CALLS, `grpc-js-xds: ${child.stdout}`);
    assert.ok(theirAborted >= 440 && theirAborted <= 560, `grpc-js-xds: ${theirAborted} of ${CALLS} aborted`);
    console.log(`grpc-js-xds: ${theirAborted} of ${CALLS} calls aborted with ABORTED`);
  });

  test('"Header matching": header_abort takes the code from x-envoy-fault-abort-grpc-request / -abort-request', async () => {
    await h.publishAcked(
      SERVICE,
      withFault({ abort: { header: true, percentage: { numerator: 100 } } }),
      cp.ROUTE_CONFIGURATION_TYPE_URL,
    );
    const grpcHeader = { 'x-envoy-fault-abort-grpc-request': '3' };
    await untilCall('the header abort', client, (o) => o.code === grpc.status.INVALID_ARGUMENT, grpcHeader);
    assert.deepEqual(
      [...(await countCodes(client, 50, grpcHeader)).counts],
      [[grpc.status.INVALID_ARGUMENT, 50]],
    );
    const httpHeader = { 'x-envoy-fault-abort-request': '503' };
    const byHttp = await countCodes(client, 50, httpHeader);
    assert.deepEqual([...byHttp.counts], [[grpc.status.UNAVAILABLE, 50]]);
    assert.deepEqual([...byHttp.details], [`${LBTREE_DETAILS} (HTTP 503)`]);
    // Without the header, or with a 0 % percentage header, no call is aborted.
    assert.deepEqual([...(await countCodes(client, 50)).counts], [[grpc.status.OK, 50]]);
    const none = { ...grpcHeader, 'x-envoy-fault-abort-request-percentage': '0' };
    assert.deepEqual([...(await countCodes(client, 50, none)).counts], [[grpc.status.OK, 50]]);
  });

  test('"RPC delay injection": a fixed 200 ms delay before the call starts; a 100 ms deadline ends it unsent', async () => {
    await h.publishAcked(
      SERVICE,
      withFault({ delay: { fixedMs: 200, percentage: { numerator: 100 } } }),
      cp.ROUTE_CONFIGURATION_TYPE_URL,
    );
    await untilCall('the first delayed call', client, (o) => o.code === grpc.status.OK && o.ms >= 200);
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => call(client)));
    for (const o of outcomes) {
      assert.equal(o.code, grpc.status.OK);
      assert.ok(o.ms >= 200, `a delayed call took ${o.ms.toFixed(1)} ms`);
    }
    const served = () => h.backend('e1').served + h.backend('e2').served;
    const before = served();
    const cut = await call(client, {}, 100);
    assert.equal(cut.code, grpc.status.DEADLINE_EXCEEDED);
    // The delay ended with the call: the fault is no longer active…
    assert.equal(processActiveFaults.active, 0);
    // …and the call never starts: a delayed call made after it ends after the cut call's delay would have, and
    // the servers saw that one call only.
    assert.equal((await call(client)).code, grpc.status.OK);
    assert.equal(served(), before + 1);
  });

  test('"Maximum active faults": max_active_faults 1 delays one of 10 concurrent calls by 4 s, the others go at once', async () => {
    await h.publishAcked(
      SERVICE,
      withFault({ delay: { fixedMs: 4000, percentage: { numerator: 100 } }, maxActiveFaults: 1 }),
      cp.ROUTE_CONFIGURATION_TYPE_URL,
    );
    await untilCall('the first delayed call', client, (o) => o.code === grpc.status.OK && o.ms >= 4000);
    let answered = 0;
    const calls = Array.from({ length: 10 }, () =>
      call(client).then((o) => {
        answered++;
        return o;
      }),
    );
    await until(
      '9 of the 10 calls answered',
      () => answered === 9,
      3800,
      () => `${answered} answered`,
    );
    assert.equal(processActiveFaults.active, 1, 'the one delayed call is the one active fault');
    const outcomes = await Promise.all(calls);
    assert.deepEqual(
      outcomes.map((o) => o.code),
      Array(10).fill(grpc.status.OK),
    );
    assert.equal(outcomes.filter((o) => o.ms >= 4000).length, 1);
    assert.equal(processActiveFaults.active, 0);
  });
});
