// lbtree's policies serving the trees the real @grpc/grpc-js-xds client generates (issue 9), against lbtree's
// control plane (ADS v3) on loopback and real grpc-js servers: a legacy ROUND_ROBIN cluster with weighted
// localities (cds → priority → xds_wrr_locality → weighted_target → round_robin) and a RING_HASH cluster
// under a route hash_policy (cds → priority → ring_hash). Each checks the traffic AND lbtree's trace lines,
// so it is lbtree's policies that ran, not grpc-js-xds's.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cp, rpcsUntil, servedByExactly, whoami, XdsHarness } from './grpc-js-xds-harness.js';

describe('lbtree policies under @grpc/grpc-js-xds: traffic (issue 9)', () => {
  const h = new XdsHarness();
  before(() => h.start(['a1', 'b1', 'r1', 'r2', 'r3']));
  after(() => h.close());

  test('ROUND_ROBIN cluster, localities weighted 1 : 3: 4,000 RPCs split 25 / 75 % (±5 points), none fails', async () => {
    const from = h.traceMark();
    h.publish(
      'rr',
      cp.xdsService({
        name: 'rr',
        clusters: [
          {
            name: 'rr-cluster',
            lbPolicy: 'ROUND_ROBIN',
            localities: [
              { zone: 'a', weight: 1, endpoints: [h.backends.a1!.address] },
              { zone: 'b', weight: 3, endpoints: [h.backends.b1!.address] },
            ],
          },
        ],
      }),
    );
    const client = h.channel('rr', 'rr-node');
    await rpcsUntil(client, servedByExactly(['a1', 'b1']));
    const counts: Record<string, number> = {};
    let failures = 0;
    // 4,000 RPCs, 200 in flight at a time.
    for (let batch = 0; batch < 20; batch++) {
      const names = await Promise.all(
        Array.from({ length: 200 }, () => whoami(client, { deadlineMs: 10_000 }).catch(() => null)),
      );
      for (const n of names) {
        if (n === null) failures++;
        else counts[n] = (counts[n] ?? 0) + 1;
      }
    }
    assert.equal(failures, 0, `failed RPCs: ${failures}`);
    const shareA = (counts.a1 ?? 0) / 4000;
    assert.ok(
      Math.abs(shareA - 0.25) <= 0.05,
      `locality a got ${(shareA * 100).toFixed(1)} %: ${JSON.stringify(counts)}`,
    );
    // lbtree's tree served it: its priority (the root grpc-js-xds's cds built) created lbtree's
    // xds_wrr_locality, which runs lbtree's weighted_target over lbtree's round_robin.
    const seen = h.lbtreeTraces(from);
    for (const policy of ['xds_wrr_locality_experimental', 'weighted_target_experimental', 'round_robin']) {
      assert.match(seen, new RegExp(`priority: child policy ${policy} created`), `lbtree's ${policy} ran`);
    }
    assert.deepEqual(h.plane.nacks, []);
  });

  test('RING_HASH cluster with a header hash_policy: 200 keys each stay on one backend', async () => {
    const from = h.traceMark();
    h.publish(
      'ring',
      cp.xdsService({
        name: 'ring',
        hashPolicy: [{ header: 'x-user' }],
        clusters: [
          {
            name: 'ring-cluster',
            lbPolicy: 'RING_HASH',
            ringHash: { minimumRingSize: 1024, maximumRingSize: 4096 },
            localities: [
              {
                zone: 'a',
                endpoints: [h.backends.r1!.address, h.backends.r2!.address, h.backends.r3!.address],
              },
            ],
          },
        ],
      }),
    );
    const client = h.channel('ring', 'ring-node');
    await rpcsUntil(client, (latest) => latest.length > 0);
    // Two passes over 200 keys (50 in flight): every key answers from the same backend both times.
    const home = new Map<string, string>();
    for (let pass = 0; pass < 2; pass++) {
      for (let k0 = 0; k0 < 200; k0 += 50) {
        const keys = Array.from({ length: 50 }, (_, i) => `user-${k0 + i}`);
        const names = await Promise.all(
          keys.map((key) => whoami(client, { waitForReady: true, headers: { 'x-user': key } })),
        );
        keys.forEach((key, i) => {
          const first = home.get(key);
          if (first === undefined) home.set(key, names[i]!);
          else assert.equal(names[i], first, `${key} moved from ${first} to ${names[i]}`);
        });
      }
    }
    const used = new Set(home.values());
    assert.equal(used.size, 3, `keys spread over every backend: ${[...used].join(', ')}`);
    assert.match(h.lbtreeTraces(from), /priority: child policy ring_hash_experimental created/);
    assert.deepEqual(h.plane.nacks, []);
  });
});
