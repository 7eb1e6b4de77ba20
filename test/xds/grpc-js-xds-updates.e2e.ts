// lbtree's policies under the real @grpc/grpc-js-xds client as the control plane changes things (issue 9):
// priority failover and back, a custom policy selected by TypedStruct and then wrapped in WrrLocality (A52),
// and invalid ring_hash configs, NACKed with their JSON path (or, on the legacy lb_policy path grpc-js-xds
// ACKs without asking the registry, refused by the channel while the last good config keeps serving).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type * as Grpc from '@grpc/grpc-js';
import type { Backend } from '../../src/cli/loopback-backends.js';
import type { ResourceJson } from '../../src/control-plane/index.js';
import { registerPolicy } from '../../src/policies/index.js';
import { cp, grpc, rpcsUntil, servedByExactly, whoami, XdsHarness } from './grpc-js-xds-harness.js';
import { customLeastRequest } from './helpers.js';

const custom = customLeastRequest('test.CustomLeastRequest');

describe('lbtree policies under @grpc/grpc-js-xds: updates and invalid configs (issue 9)', () => {
  const h = new XdsHarness();
  before(() => h.start(['p0', 'p1', 'c1', 'c2', 'h1', 'h2'], () => registerPolicy(custom.factory)));
  after(() => h.close());

  test('priority failover and back (A56): priority 1 serves while priority 0 is down', async () => {
    const from = h.traceMark();
    const { p0, p1 } = h.backends as { p0: Backend; p1: Backend };
    h.publish(
      'prio',
      cp.xdsService({
        name: 'prio',
        clusters: [
          {
            name: 'prio-cluster',
            localities: [
              { zone: 'a', priority: 0, endpoints: [p0.address] },
              { zone: 'b', priority: 1, endpoints: [p1.address] },
            ],
          },
        ],
      }),
    );
    const client = h.channel('prio', 'prio-node');
    await rpcsUntil(client, servedByExactly(['p0']));
    await p0.drain();
    await rpcsUntil(client, servedByExactly(['p1']), { deadlineMs: 30_000 });
    await p0.start();
    await rpcsUntil(client, servedByExactly(['p0']), { deadlineMs: 30_000 });
    const seen = h.lbtreeTraces(from);
    assert.match(seen, /priority: child cluster=prio-cluster, child_number=\d+ reported TRANSIENT_FAILURE/);
    assert.match(seen, /priority: creating child cluster=prio-cluster, child_number=1/);
  });

  test('a custom policy by TypedStruct, then wrapped in WrrLocality: the second update is applied (A52)', async () => {
    const from = h.traceMark();
    const { c1, c2 } = h.backends as { c1: Backend; c2: Backend };
    const resources = (policy: ResourceJson) =>
      cp.xdsService({
        name: 'custom',
        clusters: [
          {
            name: 'custom-cluster',
            loadBalancingPolicy: [policy],
            localities: [
              { zone: 'a', endpoints: [c1.address] },
              { zone: 'b', endpoints: [c2.address] },
            ],
          },
        ],
      });
    const typedStruct = cp.lbPolicies.custom('type.googleapis.com/test.CustomLeastRequest', {
      choiceCount: 3,
    });
    h.publish('custom', resources(typedStruct));
    const client = h.channel('custom', 'custom-node');
    await rpcsUntil(client, servedByExactly(['c1', 'c2']));
    const before = custom.instances;
    assert.ok(before >= 1, 'the custom policy runs as the priority child');
    assert.match(h.lbtreeTraces(from), /priority: child policy test\.CustomLeastRequest created/);

    const mark = h.traceMark();
    const version = h.publish('custom', resources(cp.lbPolicies.wrrLocality(typedStruct)));
    await h.plane.waitForAck({ nodeId: 'custom-node', typeUrl: cp.CLUSTER_TYPE_URL, version });
    // Applied: lbtree's xds_wrr_locality now runs one custom instance per locality under weighted_target.
    await rpcsUntil(
      client,
      (latest) =>
        servedByExactly(['c1', 'c2'])(latest) &&
        h.lbtreeTraces(mark).includes('child policy xds_wrr_locality_experimental created') &&
        custom.instances >= before + 2,
    );
    assert.deepEqual(custom.configs.at(-1), { choiceCount: 3 });
    assert.deepEqual(h.plane.nacks, []);
  });

  test('an invalid ring_hash config is NACKed with its JSON path; the channel keeps its last good config', async () => {
    const { h1, h2 } = h.backends as { h1: Backend; h2: Backend };
    const resources = (cluster: Partial<Parameters<typeof cp.xdsService>[0]['clusters'][number]>) =>
      cp.xdsService({
        name: 'bad',
        hashPolicy: [{ header: 'x-user' }],
        clusters: [
          {
            name: 'bad-cluster',
            localities: [{ zone: 'a', endpoints: [h1.address, h2.address] }],
            ...cluster,
          },
        ],
      });
    h.publish(
      'bad',
      resources({
        loadBalancingPolicy: [cp.lbPolicies.ringHash({ minimumRingSize: 16, maximumRingSize: 64 })],
      }),
    );
    const client = h.channel('bad', 'bad-node');
    const headers = { 'x-user': 'alice' };
    await rpcsUntil(client, (latest) => latest.length > 0, { headers });

    for (const [ring, reason] of [
      [
        { minimumRingSize: 128, maximumRingSize: 64 },
        /\$\.ring_hash\.max_ring_size: maxRingSize \(64\) is smaller than minRingSize \(128\)/,
      ],
      [
        { minimumRingSize: 16, maximumRingSize: 8_388_609 },
        /\$\.ring_hash\.max_ring_size: 8388609 is out of range/,
      ],
      [{ minimumRingSize: 0, maximumRingSize: 64 }, /\$\.ring_hash\.min_ring_size: 0 is out of range/],
    ] as const) {
      const version = h.publish('bad', resources({ loadBalancingPolicy: [cp.lbPolicies.ringHash(ring)] }));
      const nack = await h.plane.waitForNack({ nodeId: 'bad-node', typeUrl: cp.CLUSTER_TYPE_URL, version });
      assert.match(nack.reason, reason);
      // Still served by the last good config.
      await rpcsUntil(client, (latest) => latest.length > 0, { headers, window: 5 });
    }
    // Wrapped in WrrLocality, the child's error is NACKed too.
    const wrapped = h.publish(
      'bad',
      resources({
        loadBalancingPolicy: [cp.lbPolicies.wrrLocality(cp.lbPolicies.ringHash({ minimumRingSize: 0 }))],
      }),
    );
    const nack = await h.plane.waitForNack({
      nodeId: 'bad-node',
      typeUrl: cp.CLUSTER_TYPE_URL,
      version: wrapped,
    });
    assert.match(
      nack.reason,
      /\$\.xds_wrr_locality\.child_policy\[0\]\.ring_hash\.min_ring_size: 0 is out of range/,
    );

    // The legacy lb_policy: RING_HASH path: grpc-js-xds converts it without asking the registry, so it is
    // ACKed; the running channel keeps serving and a new channel fails at once, naming the field.
    const legacy = h.publish(
      'bad',
      resources({ lbPolicy: 'RING_HASH', ringHash: { minimumRingSize: 128, maximumRingSize: 64 } }),
    );
    await h.plane.waitForAck({ nodeId: 'bad-node', typeUrl: cp.CLUSTER_TYPE_URL, version: legacy });
    const served = await rpcsUntil(client, (latest) => latest.length === 20, { headers });
    assert.equal(served.length, 20);
    const fresh = h.channel('bad', 'bad-node-2');
    const start = Date.now();
    await assert.rejects(whoami(fresh, { headers, deadlineMs: 10_000 }), (e: Grpc.ServiceError) => {
      assert.equal(e.code, grpc.status.UNAVAILABLE);
      assert.match(
        e.details,
        /ring_hash\.max_ring_size: maxRingSize \(64\) is smaller than minRingSize \(128\)/,
      );
      return true;
    });
    assert.ok(Date.now() - start < 5_000, 'failed at once, not at the deadline');
    const ack = await h.plane.waitForAck({
      nodeId: 'bad-node-2',
      typeUrl: cp.CLUSTER_TYPE_URL,
      version: legacy,
    });
    assert.equal(ack.version, legacy);
  });
});
