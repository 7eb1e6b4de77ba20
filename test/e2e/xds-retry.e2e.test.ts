// gRFC A44 (xDS-configured retries) end to end (issue 22 §2, §5): lbtree's control plane serves retry policies,
// real grpc-js servers answer (the "bad" ones always with UNAVAILABLE), and calls go through lbtree's `xds:`
// resolver, whose config selector hands grpc-js the route's retry policy. Then @grpc/grpc-js-xds runs the same
// calls in a child process (./xds-retry-child.ts; grpc-js keeps one resolver per scheme, and this process has
// lbtree's) and must give the same outcome counts. Calls are sent one after another, so round robin over an
// ok and a bad backend alternates exactly: a retried attempt is a new pick, which lands on the other backend.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { ClusterSpec, ResourceJson } from '../../src/control-plane/index.js';
import { findClusterCallStats } from '../../src/xds/balancer/cluster-call-stats.js';
import { nodeScript } from '../support/child-node.js';
import { BackendClient, cp, grpc, LbtreeXdsHarness, until, whoami } from '../support/lbtree-xds-harness.js';
import { describeFailure, type RetryStep, runStep, type StepOutcome } from './xds-retry-plan.js';

const UNAVAILABLE = 14;

type RetryPolicyJson = Record<string, unknown>;

/** A44 retry_policy as proto3 JSON; backoff 1 ms / 4 ms by default keeps a 5-attempt call short. */
const retryPolicy = (
  retryOn: string,
  numRetries?: number,
  backOff = ['0.001s', '0.004s'],
): RetryPolicyJson => ({
  retryOn,
  ...(numRetries !== undefined ? { numRetries } : {}),
  retryBackOff: { baseInterval: backOff[0], maxInterval: backOff[1] },
});

/** Listener `name` → RouteConfiguration → cluster `name` → its endpoints; retry policies where given. */
function service(
  name: string,
  endpoints: string[],
  policies: { virtualHost?: RetryPolicyJson; route?: RetryPolicyJson; warmUpRoute?: RetryPolicyJson },
  clusterFields: Omit<ClusterSpec, 'name'> = {},
): ResourceJson[] {
  const toCluster = (policy?: RetryPolicyJson) => ({
    cluster: name,
    ...(policy ? { retryPolicy: policy } : {}),
  });
  return [
    cp.listener(name, { rds: `${name}-routes` }),
    cp.routeConfiguration(`${name}-routes`, [
      {
        name: `${name}-vh`,
        ...(policies.virtualHost ? { retryPolicy: policies.virtualHost } : {}),
        routes: [
          { headers: [{ name: 'x-warmup', presentMatch: true }], ...toCluster(policies.warmUpRoute) },
          toCluster(policies.route),
        ],
      },
    ]),
    cp.cluster({ name, ...clusterFields }),
    cp.clusterLoadAssignment(name, [{ zone: 'a', endpoints }]),
  ];
}

/** The A6 cap through A44: num_retries N → min(N + 1, 5) attempts per call. */
const CAPS = [
  { numRetries: 3, attempts: 4 },
  { numRetries: 4, attempts: 5 },
  { numRetries: 10, attempts: 5 },
] as const;
const CAP_CALLS = 10;

const STEPS = {
  retry: { service: 'retry', warmUp: 'header', calls: 200 },
  plain: { service: 'plain', warmUp: 'plain', calls: 200 },
  off: { service: 'off', warmUp: 'plain', calls: 200, enableRetries: 0 },
  ...Object.fromEntries(
    CAPS.map(({ numRetries }) => [
      `cap${numRetries}`,
      { service: `cap${numRetries}`, warmUp: 'none', calls: CAP_CALLS },
    ]),
  ),
} as const satisfies Record<string, RetryStep>;
type StepName = keyof typeof STEPS;

/** Runs every step on @grpc/grpc-js-xds in a child process; its outcomes by step. */
function runOnGrpcJsXds(bootstrap: unknown): Promise<Record<StepName, StepOutcome>> {
  const names = Object.keys(STEPS) as StepName[];
  const plan = JSON.stringify({ bootstrap, steps: names.map((n) => STEPS[n]) });
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      nodeScript('test/e2e/xds-retry-child.ts', plan),
      { encoding: 'utf8', timeout: 120_000 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`grpc-js-xds child failed: ${error.message}\n${stderr}`));
        const outcomes = JSON.parse(stdout.trim().split('\n').at(-1)!) as StepOutcome[];
        resolve(Object.fromEntries(names.map((n, i) => [n, outcomes[i]!])) as Record<StepName, StepOutcome>);
      },
    );
  });
}

/** "About half": 200 calls alternating between an ok and a bad backend. */
function assertAboutHalfFail(outcome: StepOutcome, failing: string): void {
  assert.ok(
    outcome.failures.length >= 80 && outcome.failures.length <= 120,
    `${outcome.failures.length} of 200 failed`,
  );
  assert.equal(outcome.served + outcome.failures.length, 200);
  assert.ok(
    outcome.failures.every((f) => f === `${UNAVAILABLE}: ${failing} is failing`),
    outcome.failures[0],
  );
}

describe("A44 xDS retries: lbtree's xds: channels, then @grpc/grpc-js-xds, against lbtree's control plane", () => {
  const h = new LbtreeXdsHarness('lbtree-xds-retry-e2e');
  const failing = ['bad-retry', 'bad-plain', 'bad-off', ...CAPS.map((c) => `dead${c.numRetries}`), 'bad-cb'];
  const lbtree = {} as Record<StepName, StepOutcome>;
  /** How many calls each backend answered or failed (every attempt that reached it). */
  const attempts = (name: string) => h.backend(name).served + h.backend(name).failed;

  before(async () => {
    await h.start(['ok', 'slow', ...failing]);
    for (const name of failing) {
      h.backend(name).failEvery = 1;
      h.backend(name).failCode = grpc.status.UNAVAILABLE;
    }
    const ok = h.backend('ok').address;
    h.publish('retry-e2e', [
      // The virtual host's policy; the warm-up route's own policy retries nothing gRPC supports, and hides it.
      ...service('retry', [ok, h.backend('bad-retry').address], {
        virtualHost: retryPolicy('unavailable', 1),
        warmUpRoute: retryPolicy('reset,5xx'),
      }),
      ...service('plain', [ok, h.backend('bad-plain').address], {}),
      ...service('off', [ok, h.backend('bad-off').address], { route: retryPolicy('unavailable', 1) }),
      ...CAPS.flatMap(({ numRetries }) =>
        service(`cap${numRetries}`, [h.backend(`dead${numRetries}`).address], {
          route: retryPolicy('cancelled,unavailable', numRetries),
        }),
      ),
      // Circuit breaking: one call at a time; a retry waits 2.4–3.6 s (3 s with A6's ±20 % jitter): long enough for a
      // second call to take the slot first on a loaded machine (at 1 s it lost that race once).
      ...service(
        'cb',
        [h.backend('bad-cb').address, h.backend('slow').address],
        { route: retryPolicy('unavailable', 2, ['3s', '3s']) },
        { maxRequests: 1 },
      ),
    ]);
  });
  after(() => h.close());

  /** Runs a step on an lbtree channel; `beforeCounting` runs after its warm-up. */
  const run = async (
    name: StepName,
    beforeCounting: () => void = () => {},
    options: Record<string, number> = {},
  ) => {
    const step: RetryStep = STEPS[name];
    const client =
      Object.keys(options).length === 0
        ? h.channel(step.service)
        : new BackendClient(`xds:///${step.service}`, grpc.credentials.createInsecure(), options);
    try {
      lbtree[name] = await runStep(
        step,
        (headers) => whoami(client, { waitForReady: true, deadlineMs: 10_000, headers }),
        beforeCounting,
      );
    } finally {
      if (Object.keys(options).length > 0) client.close();
    }
    return lbtree[name];
  };

  test("A44: retry_on unavailable (the virtual host's policy, num_retries 1): 200 calls, none fails; the failing backend saw the attempts, each a new pick counted by xds_cluster_impl", async () => {
    let okBefore = 0;
    let badBefore = 0;
    let issuedBefore = 0;
    const outcome = await run('retry', () => {
      okBefore = attempts('ok');
      badBefore = attempts('bad-retry');
      // Every attempt goes through the cluster's xds_cluster_impl pick: counted when it starts, ended when done.
      issuedBefore = findClusterCallStats('retry', 'retry')?.issued ?? 0;
    });
    assert.deepEqual(outcome.failures, []);
    assert.equal(outcome.served, 200);
    const bad = attempts('bad-retry') - badBefore;
    assert.equal(attempts('ok') - okBefore, 200, 'every call was answered by ok, once');
    assert.ok(bad >= 1 && bad <= 200, `bad-retry saw ${bad} attempts (at most one per call: num_retries 1)`);
    const stats = findClusterCallStats('retry', 'retry');
    assert.ok(stats, "the cluster's call stats");
    assert.equal(stats.issued - issuedBefore, 200 + bad, 'each attempt counted as a call of the cluster');
    assert.equal(stats.inFlight, 0, 'every attempt ended');
  });

  test('A44: without a retry policy about half of 200 calls fail with UNAVAILABLE', async () => {
    assertAboutHalfFail(await run('plain'), 'bad-plain');
  });

  test('A44 "If the application disables retries": grpc.enable_retries 0 leaves the route\'s policy unused, about half fail', async () => {
    let badBefore = 0;
    const outcome = await run('off', () => (badBefore = attempts('bad-off')), { 'grpc.enable_retries': 0 });
    assertAboutHalfFail(outcome, 'bad-off');
    assert.equal(attempts('bad-off') - badBefore, outcome.failures.length, 'one attempt per failed call');
  });

  test('A44 / A6: num_retries 3 → 4 attempts per call, 4 → 5, 10 → 5 (maxAttempts above 5 is treated as 5)', async () => {
    for (const { numRetries, attempts: expected } of CAPS) {
      const dead = `dead${numRetries}`;
      const before = attempts(dead);
      const outcome = await run(`cap${numRetries}` as StepName);
      assert.equal(outcome.served, 0);
      assert.deepEqual(outcome.failures, Array(CAP_CALLS).fill(`${UNAVAILABLE}: ${dead} is failing`));
      assert.equal(attempts(dead) - before, CAP_CALLS * expected, `num_retries ${numRetries}`);
      const stats = findClusterCallStats(`cap${numRetries}`, `cap${numRetries}`);
      assert.equal(stats?.inFlight, 0);
    }
  });

  test("A44 / A27 circuit breaking: a retried attempt is a new pick that max_requests counts; with the cluster's one slot taken it is dropped, and a drop is not retried", async () => {
    const [bad, slow] = [h.backend('bad-cb'), h.backend('slow')];
    const c = h.channel('cb');
    const call = (headers: Record<string, string> = {}) =>
      whoami(c, { waitForReady: true, deadlineMs: 10_000, headers });
    // On the route that does not retry, until both backends were seen and the last answer came from slow:
    // round robin's next pick is bad-cb.
    let failed = false;
    let last = '';
    const deadline = Date.now() + 15_000;
    while (!(failed && last === 'slow')) {
      assert.ok(Date.now() < deadline, 'warm-up: both backends in the rotation');
      try {
        last = await call({ 'x-warmup': '1' });
      } catch {
        failed = true;
        last = 'bad-cb';
      }
    }
    slow.hold();
    const badBefore = attempts('bad-cb');
    const stats = findClusterCallStats('cb', 'cb');
    assert.ok(stats, "the cluster's call stats");
    const dropsBefore = stats.uncategorizedDrops;
    const retried = call().then(() => 'answered', describeFailure);
    await until('the first attempt to fail on bad-cb', () => attempts('bad-cb') === badBefore + 1, 5_000);
    // The server counts the attempt before the client sees it end: until then it holds the cluster's slot.
    await until('the first attempt to end on the client', () => stats.inFlight === 0, 5_000);
    // During the retry's backoff another call takes the only slot: round robin sends it to slow, which holds it.
    const held = call({ 'x-warmup': '1' });
    await until('slow to hold the call', () => slow.waiting === 1, 5_000);
    await until(
      'the retry to be dropped by circuit breaking',
      () => stats.uncategorizedDrops > dropsBefore,
      5_000,
    );
    // The slot is free again: had the drop been retried (num_retries 2 leaves one more attempt), that attempt
    // would reach bad-cb, round robin's next pick.
    slow.release();
    assert.equal(await held, 'slow');
    assert.equal(
      await retried,
      `${UNAVAILABLE}: cluster cb: circuit breaking, 1 requests in flight`,
      'the call ends with the drop',
    );
    assert.equal(
      attempts('bad-cb'),
      badBefore + 1,
      'the dropped retry reached no backend, and was not retried',
    );
    assert.equal(bad.failed, attempts('bad-cb'));
    assert.equal(stats.uncategorizedDrops, dropsBefore + 1);
    assert.equal(stats.inFlight, 0);
  });

  test('@grpc/grpc-js-xds on the same resources gives the same outcome counts (and the same attempts)', async () => {
    const before = Object.fromEntries(failing.map((n) => [n, attempts(n)]));
    const other = await runOnGrpcJsXds(h.plane.bootstrap({ nodeId: 'grpc-js-xds-retry-e2e' }));
    const seen = (n: string) => attempts(n) - before[n]!;
    assert.deepEqual(other.retry.failures, [], 'retry: none fails');
    assert.equal(other.retry.served, lbtree.retry.served);
    // Each failed call of the warm-up was one attempt on the bad backend, before the counted calls.
    const badRetry = seen('bad-retry') - other.retry.warmUpFailures;
    assert.ok(badRetry >= 1 && badRetry <= 200, `bad-retry saw ${badRetry} counted attempts`);
    assertAboutHalfFail(other.plain, 'bad-plain');
    assertAboutHalfFail(other.off, 'bad-off');
    assert.equal(
      seen('bad-off') - other.off.warmUpFailures,
      other.off.failures.length,
      'one attempt per failed call',
    );
    for (const { numRetries, attempts: expected } of CAPS) {
      const name = `cap${numRetries}` as StepName;
      assert.deepEqual(other[name], lbtree[name], name);
      assert.equal(seen(`dead${numRetries}`), CAP_CALLS * expected, `grpc-js-xds num_retries ${numRetries}`);
    }
    const counts = (o: Record<StepName, StepOutcome>) =>
      Object.fromEntries(Object.entries(o).map(([n, v]) => [n, [v.served, v.failures.length]]));
    // Both alternate exactly, so even the half-failing counts agree within one call.
    for (const n of ['plain', 'off'] as const) {
      assert.ok(
        Math.abs(other[n].failures.length - lbtree[n].failures.length) <= 1,
        `${JSON.stringify(counts(other))} vs ${JSON.stringify(counts(lbtree))}`,
      );
    }
    assert.deepEqual(h.plane.nacks, []);
  });
});
