/**
 * Connect storms (issue 10): n endpoints turning READY one after another, each delivered before the next (a
 * real channel at start-up), then failing one after another (an outage). Every level of the tree must do
 * O(n) (or O(n log n)) work in total, not rebuild a picker over every READY child per report. The work is
 * counted, not timed: `workMeter` adds up the children every policy loop visits, so the test is
 * deterministic. Quadratic work grows 16-fold from n to 4n; linear work 4-fold.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { workMeter } from '../../src/core/index.js';
import { xxh64 } from '../../src/hash/xxh64.js';
import { RING_SIZE_CAP_ARG } from '../../src/policies/index.js';
import { type PlainEndpoint, Simulation } from '../../src/sim/index.js';

const address = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:80`;
const RR = [{ round_robin: {} }];

interface StormCase {
  readonly name: string;
  config(n: number): unknown;
  endpoint(i: number): PlainEndpoint;
  /** ring_hash connects only where picks land (A42): each endpoint is asked for by a pick. */
  readonly lazy?: boolean;
}

const CASES: readonly StormCase[] = [
  { name: 'round_robin (A61 petiole)', config: () => RR, endpoint: (i) => ({ addresses: [address(i)] }) },
  {
    name: 'least_request_experimental (A48, A61 petiole)',
    config: () => [{ least_request_experimental: {} }],
    endpoint: (i) => ({ addresses: [address(i)] }),
  },
  {
    name: 'ring_hash_experimental (A42 lazy connections, A61)',
    config: (n) => [{ ring_hash_experimental: { minRingSize: 2 * n, maxRingSize: 2 * n } }],
    endpoint: (i) => ({ addresses: [address(i)] }),
    lazy: true,
  },
  {
    name: 'weighted_target_experimental (A28), one target per endpoint',
    config: (n) => [
      {
        weighted_target_experimental: {
          targets: Object.fromEntries(
            Array.from({ length: n }, (_, i) => [`t${i}`, { weight: 1 + (i % 3), childPolicy: RR }]),
          ),
        },
      },
    ],
    endpoint: (i) => ({ addresses: [address(i)], attributes: { path: [`t${i}`] } }),
  },
  {
    name: 'xds_wrr_locality_experimental (A52), one locality per endpoint',
    config: () => [{ xds_wrr_locality_experimental: { childPolicy: RR } }],
    endpoint: (i) => ({
      addresses: [address(i)],
      attributes: { locality: `l${i}`, localityWeight: 1 + (i % 3) },
    }),
  },
  {
    name: 'xDS tree: priority (A56) -> xds_wrr_locality -> weighted_target -> round_robin, one locality',
    config: () => [
      {
        priority_experimental: {
          children: { p0: { config: [{ xds_wrr_locality_experimental: { childPolicy: RR } }] } },
          priorities: ['p0'],
        },
      },
    ],
    endpoint: (i) => ({
      addresses: [address(i)],
      attributes: { path: ['p0'], locality: 'l0', localityWeight: 1 },
    }),
  },
];

/** Children visited by the whole tree for the first update, the connect storm and the failure storm. */
function stormWork(c: StormCase, n: number): number {
  const sim = new Simulation();
  const endpoints = Array.from({ length: n }, (_, i) => c.endpoint(i));
  // Eager policies connect everything at once: endpoint i's connection completes at i + 1 ms, one per turn.
  for (let i = 0; i < n; i++) sim.script(address(i), { connectAfterMs: c.lazy ? 1 : i + 1 });
  const before = workMeter.visits;
  const attributes = c.lazy ? { [RING_SIZE_CAP_ARG]: 2 * n } : undefined;
  assert.equal(sim.update(endpoints, c.config(n), attributes), true);
  for (let i = 0; i < n; i++) {
    // A pick whose hash is the endpoint's ring entry (Envoy's `<key>_0`) asks for its connection.
    if (c.lazy) sim.pick({ hash: xxh64(`${address(i)}_0`) });
    sim.advance(1);
    assert.equal(sim.subchannel(address(i)).state, 'READY', `${address(i)} connected`);
    assert.equal(sim.state, 'READY');
  }
  for (let i = 0; i < n; i++) {
    sim.subchannel(address(i)).setState('TRANSIENT_FAILURE');
    sim.flush();
  }
  assert.notEqual(sim.state, 'READY');
  const work = workMeter.visits - before;
  sim.destroy();
  return work;
}

describe('connect storms cost O(n) at every level (issue 10; A61 petiole aggregation, A28, A56)', () => {
  for (const c of CASES) {
    test(`${c.name}: n endpoints READY then failed one at a time does O(n) work`, () => {
      const small = stormWork(c, 500);
      const large = stormWork(c, 2000);
      // Linear: x4 (x4.4 allows for log factors); a rebuild over every READY child per report: x16.
      assert.ok(large / small < 4.4 * 1.1, `work grew x${(large / small).toFixed(2)} for x4 endpoints`);
      assert.ok(large < 40 * 2000, `${large} visits for 2000 endpoints`);
    });
  }
});

describe('exitIdle on a connected tree is O(1) (grpc-js calls it on every RPC)', () => {
  // A61 "Petiole policies": a petiole asks an IDLE child to reconnect as soon as it reports IDLE, so with no
  // IDLE child exitIdle has nothing to do; grpc-js's channel calls exitIdle down the tree before every call.
  for (const c of CASES.filter((k) => !k.lazy)) {
    test(`${c.name}: 1,000 exitIdle calls over 2,000 READY endpoints visit no endpoint`, () => {
      const sim = new Simulation();
      const n = 2000;
      for (let i = 0; i < n; i++) sim.script(address(i), { connectAfterMs: 1 });
      assert.equal(
        sim.update(
          Array.from({ length: n }, (_, i) => c.endpoint(i)),
          c.config(n),
        ),
        true,
      );
      sim.advance(1);
      assert.equal(sim.state, 'READY');
      const before = workMeter.visits;
      for (let k = 0; k < 1000; k++) sim.exitIdle();
      const perCall = (workMeter.visits - before) / 1000;
      // Parents with one child per endpoint (weighted_target, wrr_locality here) still visit their children.
      const parentsPerEndpoint = c.name.startsWith('weighted_target') || c.name.startsWith('xds_wrr') ? n : 0;
      assert.ok(perCall <= parentsPerEndpoint + 2, `${perCall} visits per exitIdle`);
      sim.destroy();
    });
  }
});
