// The live view of a real xds: channel (lbtree's resolver, lbtree's control plane over ADS, grpc-js servers on
// loopback): the tree below xds_cluster_manager, and beside it the CSDS view of the channel's xDS client (A40):
// each resource the channel's XdsConfig uses, ACKED with its version, then a Cluster NACKED with the reason
// while the last good version keeps serving (A88), and the server the resources came from.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type AdminServer, type ChannelSnapshot, startAdminServer } from '../../src/admin/index.js';
import type { ClusterSpec } from '../../src/control-plane/index.js';
import { liveChannels, METRICS_CHANNEL_OPTION } from '../../src/grpc-js/index.js';
import { cp, LbtreeXdsHarness, rpcsUntil, servedByExactly } from '../support/lbtree-xds-harness.js';

async function snapshotUntil(
  url: string,
  what: string,
  done: (s: ChannelSnapshot) => boolean,
): Promise<ChannelSnapshot> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const snap = (await (await fetch(url)).json()) as ChannelSnapshot;
    if (done(snap)) return snap;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last xDS view: ${JSON.stringify(snap.xds)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the live view of an xds: channel', () => {
  const h = new LbtreeXdsHarness('lbtree-admin-e2e');
  let admin: AdminServer;
  before(async () => {
    await h.start(['x1']);
    admin = await startAdminServer({ port: 0 });
  });
  after(async () => {
    await admin.close();
    await h.close();
  });

  test('A40 / A88: the tree below xds_cluster_manager, its resources ACKED with their versions, then a NACKed Cluster with its reason; the server is named', async () => {
    const x1 = h.backend('x1');
    const resources = (cluster: Omit<ClusterSpec, 'name'> = {}) => [
      cp.listener('admin', { rds: 'admin-routes' }),
      cp.routeConfiguration('admin-routes', [{ routes: [{ cluster: 'admin' }] }]),
      cp.cluster({ name: 'admin', edsServiceName: 'admin-eds', ...cluster }),
      cp.clusterLoadAssignment('admin-eds', [{ zone: 'a', endpoints: [x1.address] }]),
    ];
    const good = h.publish('admin', resources());
    // The view's metrics without a MeterProvider: the XdsClient's (A78), which record through this channel.
    const c = h.channel('admin', {
      [METRICS_CHANNEL_OPTION]: {
        enableMetrics: ['grpc.xds_client.connected', 'grpc.xds_client.resource_updates_invalid'],
      },
    });
    await rpcsUntil(c, servedByExactly(['x1']), { window: 3 });
    const channel = liveChannels.list().find((ch) => ch.target === 'xds:///admin');
    assert.ok(channel, 'the registry lists xds:///admin');
    const url = `${admin.url}channels/${channel.id}.json`;

    const acked = await snapshotUntil(url, 'the four resources ACKED', (s) =>
      ['Listener', 'RouteConfiguration', 'Cluster', 'ClusterLoadAssignment'].every((type) =>
        s.xds?.resources.some((r) => r.type === type && r.usedByChannel && r.status === 'ACKED'),
      ),
    );
    assert.equal(acked.tree?.policy, 'xds_cluster_manager_experimental');
    assert.equal(acked.tree?.state, 'READY');
    assert.equal(acked.tree?.children?.[0]?.node.policy, 'cds_experimental');
    assert.equal(acked.xds?.server, h.plane.address);
    assert.equal(acked.xds?.stream, 'connected');
    const cluster = acked.xds?.resources.find((r) => r.type === 'Cluster' && r.name === 'admin');
    assert.equal(cluster?.version, good);
    assert.equal(cluster?.server, h.plane.address, 'the server that sent it');
    assert.equal(cluster?.error, null);

    const bad = h.publish(
      'admin',
      resources({ lbPolicy: 'RING_HASH', ringHash: { minimumRingSize: 4096, maximumRingSize: 1024 } }),
    );
    const nacked = await snapshotUntil(
      url,
      'the Cluster NACKED',
      (s) =>
        s.xds?.resources.some((r) => r.type === 'Cluster' && r.name === 'admin' && r.status === 'NACKED') ===
        true,
    );
    const rejected = nacked.xds?.resources.find((r) => r.type === 'Cluster' && r.name === 'admin');
    // A88: the last good version stays in use, and the NACK says which version and why.
    assert.equal(rejected?.version, good);
    assert.equal(rejected?.error?.version, bad);
    assert.match(
      rejected?.error?.details ?? '',
      /ring_hash_lb_config\.minimum_ring_size: 4096 is greater than maximum_ring_size/,
    );
    assert.equal(nacked.tree?.state, 'READY');

    // A78 in the view: the NACKed Cluster counted invalid under its server and type; the stream's gauge at 1.
    const counted = await snapshotUntil(url, 'one invalid Cluster counted', (s) =>
      s.metrics.instruments.some(
        (i) => i.name === 'grpc.xds_client.resource_updates_invalid' && i.points.length > 0,
      ),
    );
    const invalid = counted.metrics.instruments.find(
      (i) => i.name === 'grpc.xds_client.resource_updates_invalid',
    );
    assert.deepEqual(invalid?.points, [
      {
        labels: {
          'grpc.target': 'xds:///admin',
          'grpc.xds.server': h.plane.address,
          'grpc.xds.resource_type': 'envoy.config.cluster.v3.Cluster',
        },
        value: 1,
      },
    ]);
    const connected = counted.metrics.instruments.find((i) => i.name === 'grpc.xds_client.connected');
    assert.deepEqual(connected?.points, [
      { labels: { 'grpc.target': 'xds:///admin', 'grpc.xds.server': h.plane.address }, value: 1 },
    ]);
  });
});
