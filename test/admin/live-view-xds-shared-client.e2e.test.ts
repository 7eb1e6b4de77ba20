// The XdsClient's metrics (A78) on the page of every xds: channel it serves (issue 24 §2). Two real xds:
// channels of two targets share lbtree's xDS client (the plane's bootstrap has one server, so no target can
// fall back: one client, one ADS stream). A79: the client records through the first channel's recorder, under
// its grpc.target, as C-core labels a client's metrics with the target it was made for. Both pages show those
// series; a MeterProvider registered globally receives them once (no second series for the other target, no
// doubled count), and the SDK's reader agrees with both pages. lbtree's control plane, a NACKed Cluster.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type AdminServer, type ChannelSnapshot, startAdminServer } from '../../src/admin/index.js';
import type { ClusterSpec } from '../../src/control-plane/index.js';
import { liveChannels, register } from '../../src/grpc-js/index.js';
import type { InstrumentValues } from '../../src/metrics/index.js';
import { cp, LbtreeXdsHarness, rpcsUntil, servedByExactly } from '../support/lbtree-xds-harness.js';
import { valuesAsSdk } from '../support/metric-values.js';
import { OtelMetrics } from '../support/otel-metrics.js';

const XDS_CLIENT_METRICS = [
  'grpc.xds_client.connected',
  'grpc.xds_client.server_failure',
  'grpc.xds_client.resource_updates_valid',
  'grpc.xds_client.resource_updates_invalid',
  'grpc.xds_client.resources',
];
const CLUSTER = 'envoy.config.cluster.v3.Cluster';

async function snapshot(admin: AdminServer, id: string): Promise<ChannelSnapshot> {
  const response = await fetch(`${admin.url}channels/${id}.json`);
  assert.equal(response.status, 200);
  return (await response.json()) as ChannelSnapshot;
}

/** The XdsClient's instruments of a channel's page (the channel's own are left out). */
async function xdsClientMetrics(admin: AdminServer, id: string): Promise<InstrumentValues[]> {
  const { metrics } = await snapshot(admin, id);
  return metrics.instruments.filter((i) => i.name.startsWith('grpc.xds_client.'));
}

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const points = (instruments: readonly InstrumentValues[], name: string) =>
  instruments.find((i) => i.name === name)?.points ?? [];

function channelId(target: string): string {
  const listed = liveChannels.list().filter((c) => c.target === target);
  assert.equal(listed.length, 1, `the registry lists ${target} once`);
  return listed[0]!.id;
}

describe('the XdsClient metrics of a client shared by two xds: channels of two targets', () => {
  const h = new LbtreeXdsHarness('lbtree-shared-client-metrics');
  const otel = new OtelMetrics();
  let admin: AdminServer;
  before(async () => {
    await h.start(['x1'], () => register({ metrics: otel.options(XDS_CLIENT_METRICS) }));
    admin = await startAdminServer({ port: 0 });
  });
  after(async () => {
    await admin.close();
    await h.close();
  });

  const service = (name: string, cluster: Omit<ClusterSpec, 'name'> = {}) => [
    cp.listener(name, { rds: `${name}-routes` }),
    cp.routeConfiguration(`${name}-routes`, [{ routes: [{ cluster: name }] }]),
    cp.cluster({ name, edsServiceName: `${name}-eds`, ...cluster }),
    cp.clusterLoadAssignment(`${name}-eds`, [{ zone: 'a', endpoints: [h.backend('x1').address] }]),
  ];

  test('A78 / A79: both pages show the client series under the first channel’s target; the SDK has them once, equal', async () => {
    h.publish('alpha', service('alpha'));
    h.publish('beta', service('beta'));
    // alpha first: its recorder is the one the client records through.
    const alpha = h.channel('alpha');
    await rpcsUntil(alpha, servedByExactly(['x1']), { window: 3 });
    const beta = h.channel('beta');
    await rpcsUntil(beta, servedByExactly(['x1']), { window: 3 });
    const alphaId = channelId('xds:///alpha');
    const betaId = channelId('xds:///beta');

    const bad = h.publish(
      'alpha',
      service('alpha', { lbPolicy: 'RING_HASH', ringHash: { minimumRingSize: 4096, maximumRingSize: 1024 } }),
    );
    await h.plane.waitForNack({ nodeId: h.nodeId, typeUrl: cp.CLUSTER_TYPE_URL, version: bad });

    const nackedCluster = {
      labels: {
        'grpc.target': 'xds:///alpha',
        'grpc.xds.server': h.plane.address,
        'grpc.xds.resource_type': CLUSTER,
      },
      value: 1,
    };
    for (const [id, name] of [
      [alphaId, 'alpha'],
      [betaId, 'beta'],
    ] as const) {
      const seen = await until(
        `the NACKed Cluster counted on ${name}'s page`,
        () => xdsClientMetrics(admin, id),
        (m) => points(m, 'grpc.xds_client.resource_updates_invalid').length > 0,
      );
      assert.deepEqual(points(seen, 'grpc.xds_client.resource_updates_invalid'), [nackedCluster], name);
      assert.deepEqual(
        points(seen, 'grpc.xds_client.connected'),
        [{ labels: { 'grpc.target': 'xds:///alpha', 'grpc.xds.server': h.plane.address }, value: 1 }],
        name,
      );
      assert.equal(
        points(seen, 'grpc.xds_client.resources').find(
          (p) => p.labels['grpc.xds.cache_state'] === 'nacked_but_cached',
        )?.labels['grpc.xds.resource_type'],
        CLUSTER,
        `${name}: alpha's Cluster is NACKed, its last good version cached`,
      );
    }

    // One truth: alpha's page read before and after the SDK's collection and beta's page all equal the SDK.
    // Nothing moves once the NACK is counted; a reading that differs is read again.
    let agreed = false;
    for (let attempt = 0; attempt < 200 && !agreed; attempt++) {
      const first = await xdsClientMetrics(admin, alphaId);
      const sdk = await otel.asValues();
      const onBeta = await xdsClientMetrics(admin, betaId);
      const second = await xdsClientMetrics(admin, alphaId);
      if (JSON.stringify(first) !== JSON.stringify(second)) continue;
      assert.deepEqual(onBeta, first, "beta's page shows the client series alpha's shows");
      assert.deepEqual(valuesAsSdk(first), sdk);
      agreed = true;
    }
    assert.ok(agreed, 'two equal readings of the page around an SDK collection');
    // Counted once: the SDK has one series per label set, all under alpha's target, the NACK counted 1.
    const sdk = await otel.asValues();
    for (const name of XDS_CLIENT_METRICS) {
      for (const p of (sdk.get(name)?.points ?? []) as { labels: Record<string, string> }[]) {
        assert.equal(p.labels['grpc.target'], 'xds:///alpha', `${name} ${JSON.stringify(p)}`);
      }
    }
    assert.deepEqual(sdk.get('grpc.xds_client.resource_updates_invalid')?.points, [nackedCluster]);
  });
});
