// A78's XdsClient metrics and A94's xDS labels end to end: lbtree's xds: resolver on grpc-js against lbtree's
// control plane, with a MeterProvider registered globally (`register({ metrics })`); a NACK and a control-plane
// restart, read through the OpenTelemetry SDK. Runs in its own process (grpc-js keeps one resolver per scheme).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import {
  type Backend,
  BackendClient,
  type BackendClientType,
  startBackends,
  whoami,
} from '../../src/cli/loopback-backends.js';
import {
  CLUSTER_TYPE_URL,
  ControlPlane,
  type ResourceJson,
  xdsService,
} from '../../src/control-plane/index.js';
import { register } from '../../src/grpc-js/index.js';
import { type CollectedMetric, OtelMetrics, sumOf } from '../support/otel-metrics.js';

const NODE = 'lbtree-xds-metrics';
const CLUSTER_TYPE = 'envoy.config.cluster.v3.Cluster';

async function eventually(
  otel: OtelMetrics,
  what: string,
  check: (m: Map<string, CollectedMetric>) => boolean,
  deadlineMs = 20_000,
): Promise<Map<string, CollectedMetric>> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const m = await otel.collect();
    if (check(m)) return m;
    if (Date.now() > end) {
      const seen = [...m.values()].map(
        (x) => `${x.name}=${JSON.stringify(x.points.map((p) => [p.attributes, p.value]))}`,
      );
      throw new Error(`timed out waiting for ${what}; saw ${seen.join(' ')}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('XdsClient metrics on an xds: channel (A78), with A94 labels from the xDS tree', () => {
  const plane = new ControlPlane();
  const otel = new OtelMetrics();
  const clients: BackendClientType[] = [];
  let backend: Backend;
  let serverUri: string;

  before(async () => {
    [backend] = (await startBackends(['x1'])) as [Backend];
    await plane.listen('127.0.0.1:0');
    const bootstrap = plane.bootstrap({ nodeId: NODE });
    serverUri = bootstrap.xds_servers[0]!.server_uri;
    register({
      xds: { bootstrap },
      metrics: otel.options([
        'grpc.xds_client.connected',
        'grpc.xds_client.server_failure',
        'grpc.xds_client.resource_updates_valid',
        'grpc.xds_client.resource_updates_invalid',
        'grpc.xds_client.resources',
        'grpc.subchannel.connection_attempts_succeeded',
      ]),
    });
  });
  after(async () => {
    for (const c of clients) c.close();
    backend.stop();
    await plane.close();
  });

  const service = (): ResourceJson[] =>
    xdsService({
      name: 'svc',
      clusters: [{ name: 'svc-cluster', localities: [{ zone: 'zone-a', endpoints: [backend.address] }] }],
    });

  test('valid updates, a NACK (invalid, nacked_but_cached), a control-plane restart (connected 1 → 0 → 1, one server failure)', async () => {
    plane.setResources(service());
    const c = new BackendClient('xds:///svc', grpc.credentials.createInsecure());
    clients.push(c);
    assert.equal(await whoami(c, { waitForReady: true, deadlineMs: 15_000 }), 'x1');

    let m = await eventually(
      otel,
      'four acked resources',
      (x) => sumOf(x.get('grpc.xds_client.resources'), { 'grpc.xds.cache_state': 'acked' }) === 4,
    );
    const valid = m.get('grpc.xds_client.resource_updates_valid')!;
    assert.equal(sumOf(valid, { 'grpc.xds.resource_type': CLUSTER_TYPE }), 1);
    assert.ok(
      valid.points.every(
        (p) => p.attributes['grpc.target'] === 'xds:///svc' && p.attributes['grpc.xds.server'] === serverUri,
      ),
      JSON.stringify(valid.points),
    );
    assert.equal(sumOf(m.get('grpc.xds_client.connected'), { 'grpc.xds.server': serverUri }), 1);
    // A94: the subchannel's labels come from the xDS tree (cds's backend service, the endpoint's locality).
    const attempt = m.get('grpc.subchannel.connection_attempts_succeeded')!.points[0]!;
    assert.equal(attempt.attributes['grpc.lb.backend_service'], 'svc-cluster');
    assert.match(
      String(attempt.attributes['grpc.lb.locality']),
      /^\{region=".*", zone="zone-a", sub_zone=".*"\}$/,
    );

    // A NACK of the Cluster: the cached version keeps serving.
    const bad = service().map((r) => (r['@type'] === CLUSTER_TYPE_URL ? { ...r, lbPolicy: 'MAGLEV' } : r));
    const version = plane.setResources(bad);
    await plane.waitForNack({ nodeId: NODE, typeUrl: CLUSTER_TYPE_URL, version });
    m = await eventually(
      otel,
      'the NACKed Cluster',
      (x) =>
        sumOf(x.get('grpc.xds_client.resources'), {
          'grpc.xds.cache_state': 'nacked_but_cached',
          'grpc.xds.resource_type': CLUSTER_TYPE,
        }) === 1,
    );
    assert.equal(
      sumOf(m.get('grpc.xds_client.resource_updates_invalid'), { 'grpc.xds.resource_type': CLUSTER_TYPE }),
      1,
    );
    assert.equal(await whoami(c, { deadlineMs: 5000 }), 'x1');

    // The control plane goes away: the reconnection fails before any response.
    const port = plane.port;
    await plane.close();
    m = await eventually(otel, 'connected 0', (x) => sumOf(x.get('grpc.xds_client.connected')) === 0);
    assert.equal(sumOf(m.get('grpc.xds_client.server_failure'), { 'grpc.xds.server': serverUri }), 1);
    assert.equal(await whoami(c, { deadlineMs: 5000 }), 'x1', 'the cached resources keep serving');

    await plane.listen(`127.0.0.1:${port}`);
    plane.setResources(service());
    m = await eventually(
      otel,
      'connected 1 again',
      (x) => sumOf(x.get('grpc.xds_client.connected')) === 1,
      30_000,
    );
    assert.equal(sumOf(m.get('grpc.xds_client.server_failure')), 1);
    await eventually(
      otel,
      'the Cluster acked again',
      (x) =>
        sumOf(x.get('grpc.xds_client.resources'), {
          'grpc.xds.cache_state': 'acked',
          'grpc.xds.resource_type': CLUSTER_TYPE,
        }) === 1,
    );
  });
});
