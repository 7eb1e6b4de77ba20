import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { xxh64 } from '../../src/hash/index.js';
import { PF_WEIGHTED_SHUFFLING_ENV } from '../../src/policies/index.js';
import { Simulation, seededRandom } from '../../src/sim/index.js';
import { endpointWeightUq1_31, multiplyUq1_31, toUq1_31 } from '../../src/xds/balancer/normalized-weight.js';
import { clusterToTreeFromJson } from '../../src/xds/index.js';
import { CHI2_999, chiSquare } from '../support/stats.js';
import { assignment, edsCluster, type LocalitySpec } from './helpers.js';

const saved = process.env[PF_WEIGHTED_SHUFFLING_ENV];
afterEach(() => {
  if (saved === undefined) delete process.env[PF_WEIGHTED_SHUFFLING_ENV];
  else process.env[PF_WEIGHTED_SHUFFLING_ENV] = saved;
});

/** The A42 example: locality 1 (weight 3) holds A (2) and B (1); locality 2 (weight 2) holds C (3), D (1). */
const A42_EXAMPLE: LocalitySpec[] = [
  {
    zone: '1',
    weight: 3,
    endpoints: [
      { address: '10.0.0.1', weight: 2 },
      { address: '10.0.0.2', weight: 1 },
    ],
  },
  {
    zone: '2',
    weight: 2,
    endpoints: [
      { address: '10.0.0.3', weight: 3 },
      { address: '10.0.0.4', weight: 1 },
    ],
  },
];

function weights(localities: readonly LocalitySpec[], options: { normalizedWeights?: boolean } = {}) {
  const tree = clusterToTreeFromJson(edsCluster({ lbPolicy: 'RING_HASH' }), assignment(localities), options);
  return tree.endpoints.map((e) => [e.addresses[0], e.attributes.weight]);
}

describe('A113 "CDS LB Policy changes": normalized endpoint weights in UQ1.31', () => {
  test('the A42 example: (locality share × endpoint share) × 2^31, each step rounded down', () => {
    // locality 1: floor(3 × 2^31 / 5) = 1288490188; locality 2: floor(2 × 2^31 / 5) = 858993459.
    // A: floor(1288490188 × floor(2 × 2^31 / 3) / 2^31) = 858993458, and so on.
    assert.deepEqual(weights(A42_EXAMPLE, { normalizedWeights: true }), [
      ['10.0.0.1:80', 858_993_458],
      ['10.0.0.2:80', 429_496_728],
      ['10.0.0.3:80', 644_245_094],
      ['10.0.0.4:80', 214_748_364],
    ]);
  });

  test('GRPC_EXPERIMENTAL_PF_WEIGHTED_SHUFFLING: unset is on, "false" gives A42\'s raw product', () => {
    delete process.env[PF_WEIGHTED_SHUFFLING_ENV];
    assert.equal(weights(A42_EXAMPLE)[0]![1], 858_993_458);
    process.env[PF_WEIGHTED_SHUFFLING_ENV] = 'false';
    assert.deepEqual(weights(A42_EXAMPLE), [
      ['10.0.0.1:80', 6],
      ['10.0.0.2:80', 3],
      ['10.0.0.3:80', 6],
      ['10.0.0.4:80', 2],
    ]);
  });

  test('normalized within each priority: a lone locality of priority 1 is 1.0 whatever its weight', () => {
    const got = weights(
      [
        { zone: 'a', weight: 1, endpoints: ['10.0.0.1', '10.0.0.2'] },
        { zone: 'b', weight: 9, endpoints: ['10.0.0.3'] },
        { zone: 'c', priority: 1, weight: 7, endpoints: ['10.0.0.4'] },
      ],
      { normalizedWeights: true },
    );
    // a: floor(2^31 / 10) = 214748364, halved: floor(214748364 × 2^30 / 2^31) = 107374182.
    assert.deepEqual(got, [
      ['10.0.0.1:80', 107_374_182],
      ['10.0.0.2:80', 107_374_182],
      ['10.0.0.3:80', 1_932_735_283],
      ['10.0.0.4:80', 2 ** 31],
    ]);
  });

  test('a product that rounds down to 0 becomes 1; the smallest non-zero product stays 1', () => {
    // Locality weights 1 and 2^32 - 2 (the uint32 sum limit): floor(2^31 / (2^32 - 1)) = 0, so its endpoint is 1.
    const got = weights(
      [
        { zone: 'tiny', weight: 1, endpoints: ['10.0.0.1'] },
        { zone: 'huge', weight: 0xffff_fffe, endpoints: ['10.0.0.2'] },
      ],
      { normalizedWeights: true },
    );
    assert.deepEqual(got, [
      ['10.0.0.1:80', 1],
      ['10.0.0.2:80', 2_147_483_647],
    ]);
    assert.equal(multiplyUq1_31(0, 2 ** 31), 0);
    assert.equal(endpointWeightUq1_31(0, 2 ** 31), 1);
    assert.equal(multiplyUq1_31(1, 2 ** 31), 1); // 2^-31 × 1.0: exactly representable
    assert.equal(multiplyUq1_31(1, 2 ** 30), 0); // 2^-31 × 0.5 rounds down
  });

  test('the fixed-point steps are exact for all of uint32 (checked against BigInt)', () => {
    const random = seededRandom(2026);
    const u32 = () => Math.floor(random() * 0x1_0000_0000);
    for (let i = 0; i < 20_000; i++) {
      // Sums of EDS endpoint weights may pass 2^32 (each weight is a uint32).
      const denominator = 1 + Math.floor(random() * (i % 2 === 0 ? 0x40_0000 : 2 ** 40));
      const numerator = 1 + Math.floor(random() * denominator);
      assert.equal(
        toUq1_31(numerator, denominator),
        Number((BigInt(numerator) << 31n) / BigInt(denominator)),
        `${numerator}/${denominator}`,
      );
      const a = Math.min(u32(), 2 ** 31);
      const b = Math.min(u32(), 2 ** 31);
      assert.equal(multiplyUq1_31(a, b), Number((BigInt(a) * BigInt(b)) >> 31n), `${a}×${b}`);
    }
    assert.equal(toUq1_31(1, 1), 2 ** 31);
    assert.equal(multiplyUq1_31(2 ** 31, 2 ** 31), 2 ** 31);
  });
});

/** Share of 20,000 request hashes (xxh64 of fixed probe names) that land on each address. */
function ringShares(normalizedWeights: boolean): Record<string, number> {
  // Locality a (weight 1) has one endpoint; locality b (weight 1) has three.
  const tree = clusterToTreeFromJson(
    edsCluster({ lbPolicy: 'RING_HASH' }),
    assignment([
      { zone: 'a', endpoints: ['10.0.0.1'] },
      { zone: 'b', endpoints: ['10.0.0.2', '10.0.0.3', '10.0.0.4'] },
    ]),
    { normalizedWeights },
  );
  const sim = new Simulation();
  for (const e of tree.endpoints) sim.script(e.addresses[0]!, { connectAfterMs: 1 });
  sim.update(tree.endpoints, tree.config, tree.attributes);
  const counts: Record<string, number> = {};
  const probes = 20_000;
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < probes; i++) {
      const pick = sim.pick({ hash: xxh64(`probe-${i}`) });
      if (round === 1) {
        assert.equal(pick.type, 'complete');
        if (pick.type === 'complete') counts[pick.address] = (counts[pick.address] ?? 0) + 1;
      }
    }
    sim.advance(10); // the first round's picks asked the endpoints to connect
  }
  return Object.fromEntries(Object.entries(counts).map(([k, c]) => [k, c / probes]));
}

describe('A113 in ring_hash: the ring follows the normalized product', () => {
  test('two localities of weight 1 holding 1 and 3 endpoints: 1/2 and 1/6 each (A42 rule: 1/4 each)', () => {
    // Ring of 1024..4096 entries: a share of the hash space is within ±0.03 of its weight's share (≥ 3 σ).
    const on = ringShares(true);
    assert.ok(Math.abs(on['10.0.0.1:80']! - 1 / 2) < 0.03, JSON.stringify(on));
    for (const k of ['10.0.0.2:80', '10.0.0.3:80', '10.0.0.4:80'])
      assert.ok(Math.abs(on[k]! - 1 / 6) < 0.03, JSON.stringify(on));
    const off = ringShares(false);
    for (const k of ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80', '10.0.0.4:80'])
      assert.ok(Math.abs(off[k]! - 1 / 4) < 0.03, JSON.stringify(off));
  });
});

describe('A113 end to end: pick_first under cds with shuffle_address_list', () => {
  test('over 10,000 channels the first endpoint follows locality share × endpoint share (chi-square < 16.27)', () => {
    const pickFirst = {
      loadBalancingPolicy: {
        policies: [
          {
            typedExtensionConfig: {
              name: 'pf',
              typedConfig: {
                '@type':
                  'type.googleapis.com/envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst',
                shuffleAddressList: true,
              },
            },
          },
        ],
      },
    };
    // Locality a (weight 3): one endpoint; locality b (weight 1): endpoints of weight 1, 1 and 2.
    // Shares: 3/4, then 1/4 × (1/4, 1/4, 1/2).
    const tree = clusterToTreeFromJson(
      edsCluster(pickFirst),
      assignment([
        { zone: 'a', weight: 3, endpoints: ['10.0.0.1'] },
        {
          zone: 'b',
          weight: 1,
          endpoints: ['10.0.0.2', '10.0.0.3', { address: '10.0.0.4', weight: 2 }],
        },
      ]),
      { normalizedWeights: true },
    );
    delete process.env[PF_WEIGHTED_SHUFFLING_ENV];
    const keys = ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80', '10.0.0.4:80'];
    const counts = keys.map(() => 0);
    for (let seed = 1; seed <= 10_000; seed++) {
      const sim = new Simulation({ seed });
      sim.update(tree.endpoints, tree.config, tree.attributes);
      const first = [...sim.subchannels.values()].find((s) => s.connectionRequests > 0)!.key;
      counts[keys.indexOf(first)]!++;
    }
    const expected = [12, 1, 1, 2];
    const stat = chiSquare(counts, expected);
    assert.ok(stat < CHI2_999[3]!, `chi-square ${stat.toFixed(2)} against 12:1:1:2 (counts ${counts})`);
  });
});
