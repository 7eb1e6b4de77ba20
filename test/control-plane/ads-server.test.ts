// The control plane's ADS bookkeeping (xDS protocol, state of the world: "ACK/NACK and resource type
// instance version", "When to send an update", "Resource updates", legacy wildcard), spoken to request by
// request over a real grpc-js stream on loopback.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { create, toBinary } from '@bufbuild/protobuf';
import {
  type AckRecord,
  CLUSTER_LOAD_ASSIGNMENT_TYPE_URL,
  CLUSTER_TYPE_URL,
  ControlPlane,
  type ControlPlaneEvent,
  cluster,
  clusterLoadAssignment,
  LISTENER_TYPE_URL,
  listener,
  ROUTE_CONFIGURATION_TYPE_URL,
  routeConfiguration,
} from '../../src/control-plane/index.js';
import { ClusterSchema } from '../../src/protos/gen/envoy/config/cluster/v3/cluster_pb.js';
import { parseBootstrap } from '../../src/xds/client/bootstrap.js';
import { AdsTestClient, namesIn } from '../support/ads-test-client.js';
import { until } from '../support/until.js';

const ROUTES = [{ routes: [{ cluster: 'c1' }] }];
const base = () => [
  listener('svc', { rds: 'svc-routes' }),
  listener('other', { rds: 'svc-routes' }),
  routeConfiguration('svc-routes', ROUTES),
  cluster({ name: 'c1' }),
  cluster({ name: 'c2' }),
  clusterLoadAssignment('c1', [{ zone: 'a', endpoints: ['127.0.0.1:1001'] }]),
  clusterLoadAssignment('c2', [{ zone: 'a', endpoints: ['127.0.0.1:1002'] }]),
];

describe('control plane: ADS state-of-the-world bookkeeping', () => {
  const plane = new ControlPlane();
  let clients: AdsTestClient[] = [];
  const connect = (nodeId = 'test-node') => {
    const c = new AdsTestClient(plane.address, nodeId);
    clients.push(c);
    return c;
  };
  const events: ControlPlaneEvent[] = [];

  before(async () => {
    await plane.listen('127.0.0.1:0');
    plane.onEvent((e) => events.push(e));
  });
  beforeEach(() => {
    for (const c of clients) c.close();
    clients = [];
    plane.setResources(base());
  });
  after(async () => {
    for (const c of clients) c.close();
    await plane.close();
  });

  test('an empty first LDS / CDS name list is the wildcard: every listener, then the ACK is logged', async () => {
    const c = connect('node-wildcard');
    c.send({ typeUrl: LISTENER_TYPE_URL });
    const lds = await c.next();
    assert.equal(lds.typeUrl, LISTENER_TYPE_URL);
    assert.equal(lds.versionInfo, plane.version);
    assert.notEqual(lds.nonce, '');
    assert.deepEqual(namesIn(lds).sort(), ['other', 'svc']);
    c.ack(lds);
    const ack = await plane.waitForAck({ nodeId: 'node-wildcard', typeUrl: LISTENER_TYPE_URL });
    assert.deepEqual(
      { version: ack.version, nonce: ack.nonce, wildcard: ack.wildcard },
      { version: lds.versionInfo, nonce: lds.nonce, wildcard: true },
    );
    const [info] = plane.clients().filter((i) => i.nodeId === 'node-wildcard');
    const sub = info!.subscriptions.find((s) => s.typeUrl === LISTENER_TYPE_URL)!;
    assert.equal(sub.wildcard, true);
    assert.equal(sub.ackedVersion, plane.version);
  });

  test('xdstp: names (A47): a request in the normalised spelling finds a resource spelled with its parameters unsorted', async () => {
    const unsorted = 'xdstp://auth.example/envoy.config.cluster.v3.Cluster/c?z=1&a=2';
    plane.setResources([...base(), cluster({ name: unsorted, edsServiceName: 'c1' })]);
    const c = connect('node-xdstp');
    c.send({
      typeUrl: CLUSTER_TYPE_URL,
      resourceNames: ['xdstp://auth.example/envoy.config.cluster.v3.Cluster/c?a=2&z=1'],
    });
    const cds = await c.next();
    assert.deepEqual(namesIn(cds), [unsorted], 'served as the resource spells it');
    assert.throws(
      () =>
        plane.setResources([
          cluster({ name: unsorted, edsServiceName: 'c1' }),
          cluster({
            name: 'xdstp://auth.example/envoy.config.cluster.v3.Cluster/c?a=2&z=1',
            edsServiceName: 'c1',
          }),
        ]),
      /resources\[1\]: a second Cluster named/,
    );
  });

  test('named subscriptions get only those names; "*" asks for all', async () => {
    const c = connect();
    c.send({ typeUrl: CLUSTER_TYPE_URL, resourceNames: ['c2'] });
    assert.deepEqual(namesIn(await c.next()), ['c2']);
    c.send({ typeUrl: LISTENER_TYPE_URL, resourceNames: ['*'] });
    assert.deepEqual(namesIn(await c.next()).sort(), ['other', 'svc']);
  });

  test('RDS / EDS: a name that does not exist gets no response; one that appears later is pushed', async () => {
    const c = connect();
    c.send({ typeUrl: CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, resourceNames: ['missing'] });
    // The stream is ordered: had the EDS request been answered, that answer would come before this one.
    c.send({ typeUrl: CLUSTER_TYPE_URL, resourceNames: ['c1'] });
    const first = await c.next();
    assert.equal(first.typeUrl, CLUSTER_TYPE_URL);
    const version = plane.setResources([
      ...base(),
      clusterLoadAssignment('missing', [{ endpoints: ['127.0.0.1:9'] }]),
    ]);
    const pushed = [await c.next(), await c.next()];
    const eds = pushed.find((r) => r.typeUrl === CLUSTER_LOAD_ASSIGNMENT_TYPE_URL)!;
    assert.deepEqual(namesIn(eds), ['missing']);
    assert.equal(eds.versionInfo, version);
  });

  test('LDS: a subscribed name that does not exist is answered with an empty response (deleted)', async () => {
    const c = connect();
    c.send({ typeUrl: LISTENER_TYPE_URL, resourceNames: ['nope'] });
    const r = await c.next();
    assert.equal(r.typeUrl, LISTENER_TYPE_URL);
    assert.equal(r.resources.length, 0);
  });

  test('a subscribed name the set lacks is reported once per stream and name, however often it is asked for', async () => {
    const unknown = (nodeId: string) =>
      events.flatMap((e) =>
        e.kind === 'unknown-name' && e.nodeId === nodeId ? [[e.typeUrl, e.name, [...e.known].sort()]] : [],
      );
    const c = connect('node-unknown');
    c.send({ typeUrl: LISTENER_TYPE_URL, resourceNames: ['svc', 'nope'] });
    const r1 = await c.next();
    c.ack(r1, ['svc', 'nope']);
    c.send({ typeUrl: CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, resourceNames: ['gone'] });
    plane.setResources(base()); // a new version: asked for again
    const r2 = await c.next();
    assert.equal(r2.typeUrl, LISTENER_TYPE_URL);
    c.ack(r2, ['svc', 'nope']);
    await plane.waitForAck({ nodeId: 'node-unknown', version: r2.versionInfo });
    assert.deepEqual(unknown('node-unknown'), [
      [LISTENER_TYPE_URL, 'nope', ['other', 'svc']],
      [CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, 'gone', ['c1', 'c2']],
    ]);
    // Another stream is told on its own.
    const other = connect('node-unknown-2');
    other.send({ typeUrl: LISTENER_TYPE_URL, resourceNames: ['nope'] });
    await other.next();
    assert.deepEqual(unknown('node-unknown-2'), [[LISTENER_TYPE_URL, 'nope', ['other', 'svc']]]);
  });

  test('a NACK is logged with the client node, type, the rejected version and nonce, and the reason', async () => {
    const c = connect('node-nack');
    c.send({ typeUrl: CLUSTER_TYPE_URL, resourceNames: ['c1'] });
    const r = await c.next();
    c.nack(r, 'cluster c1: lb_policy: unsupported', '', ['c1']);
    const nack = await plane.waitForNack({ nodeId: 'node-nack' });
    assert.equal(nack.typeUrl, CLUSTER_TYPE_URL);
    assert.equal(nack.version, r.versionInfo);
    assert.equal(nack.nonce, r.nonce);
    assert.equal(nack.reason, 'cluster c1: lb_policy: unsupported');
    assert.equal(nack.keptVersion, '');
    assert.equal(plane.acks.filter((a) => a.nodeId === 'node-nack').length, 0);
  });

  test('setResources pushes the new version; a cluster removed from the set is left out (CDS deletion)', async () => {
    const c = connect();
    c.send({ typeUrl: CLUSTER_TYPE_URL });
    const first = await c.next();
    assert.deepEqual(namesIn(first).sort(), ['c1', 'c2']);
    c.ack(first);
    const version = plane.setResources(base().filter((r) => r.name !== 'c2'));
    const pushed = await c.next();
    assert.equal(pushed.versionInfo, version);
    assert.notEqual(pushed.nonce, first.nonce);
    assert.deepEqual(namesIn(pushed), ['c1']);
  });

  test('an answer carrying an older nonce is stale: ignored, not logged as an ACK', async () => {
    const c = connect('node-stale');
    c.send({ typeUrl: CLUSTER_TYPE_URL, resourceNames: ['c1'] });
    const r1 = await c.next();
    plane.setResources(base());
    const r2 = await c.next();
    c.ack(r1, ['c1']);
    await until(
      "the control plane's stale-nonce event for node-stale's ACK of the first response",
      () => events.some((e) => e.kind === 'stale' && e.nodeId === 'node-stale'),
      10_000,
      () =>
        `(node-stale's events: ${JSON.stringify(events.filter((e) => 'nodeId' in e && e.nodeId === 'node-stale'))})`,
    );
    c.ack(r2, ['c1']);
    const ack = await plane.waitForAck({ nodeId: 'node-stale' });
    assert.equal(ack.nonce, r2.nonce);
    assert.equal(plane.acks.filter((a) => a.nodeId === 'node-stale').length, 1);
  });

  test('an ACK that changes the names is answered; one that keeps them is not', async () => {
    const c = connect('node-names');
    c.send({ typeUrl: ROUTE_CONFIGURATION_TYPE_URL, resourceNames: ['svc-routes'] });
    const r1 = await c.next();
    c.ack(r1, ['svc-routes']); // same names: nothing to send
    c.send({ typeUrl: CLUSTER_TYPE_URL, resourceNames: ['c1'] });
    const cds = await c.next();
    assert.equal(cds.typeUrl, CLUSTER_TYPE_URL, 'no RDS response came before the CDS one');
    c.ack(cds, ['c1', 'c2']); // the ACK adds c2: answered with both
    const more = await c.next();
    assert.equal(more.typeUrl, CLUSTER_TYPE_URL);
    assert.deepEqual(namesIn(more).sort(), ['c1', 'c2']);
    assert.equal(more.versionInfo, cds.versionInfo);
  });

  test('legacy wildcard: once names were sent, an empty list unsubscribes (no more pushes)', async () => {
    const c = connect('node-legacy');
    c.send({ typeUrl: LISTENER_TYPE_URL });
    const all = await c.next();
    assert.equal(all.resources.length, 2);
    c.ack(all, ['svc']);
    const one = await c.next();
    assert.deepEqual(namesIn(one), ['svc']);
    const unsubscribed = new Promise<AckRecord>((resolve) =>
      plane.onEvent(
        (e) =>
          e.kind === 'ack' && e.ack.nodeId === 'node-legacy' && e.ack.nonce === one.nonce && resolve(e.ack),
      ),
    );
    c.ack(one, []);
    const unsubscribe = await unsubscribed;
    assert.deepEqual([unsubscribe.resourceNames, unsubscribe.wildcard], [[], false], 'logged as no wildcard');
    c.send({ typeUrl: CLUSTER_TYPE_URL, resourceNames: ['c1'] });
    await c.next();
    const sub = plane.clients().find((i) => i.nodeId === 'node-legacy')!.subscriptions;
    const lds = sub.find((s) => s.typeUrl === LISTENER_TYPE_URL)!;
    assert.deepEqual({ wildcard: lds.wildcard, names: lds.names }, { wildcard: false, names: [] });
    plane.setResources(base());
    const pushed = await c.next();
    assert.equal(pushed.typeUrl, CLUSTER_TYPE_URL, 'LDS is no longer pushed');
  });

  test('resources can be built messages or raw bytes, served as given', async () => {
    const raw = new Uint8Array([0xff, 0x01]);
    plane.setResources([
      create(ClusterSchema, { name: 'built' }),
      { typeUrl: CLUSTER_TYPE_URL, name: 'garbage', value: raw },
    ]);
    const c = connect();
    c.send({ typeUrl: CLUSTER_TYPE_URL, resourceNames: ['built', 'garbage'] });
    const r = await c.next();
    const values = r.resources.map((a) => [...a.value]);
    assert.deepEqual(values, [
      [...toBinary(ClusterSchema, create(ClusterSchema, { name: 'built' }))],
      [...raw],
    ]);
  });

  test('a bad resource list is rejected naming the entry, and the previous set keeps serving', () => {
    const before = plane.version;
    assert.throws(
      () => plane.setResources([...base(), { '@type': CLUSTER_TYPE_URL, name: 'x', lbPolicy: 'NOPE' }]),
      /resources\[7\] \(Cluster\): .*lb_policy|resources\[7\] \(Cluster\): .*NOPE/,
    );
    assert.throws(
      () => plane.setResources([{ name: 'no-type' } as never]),
      /resources\[0\]: "@type" is missing/,
    );
    assert.throws(
      () => plane.setResources([cluster({ name: 'dup' }), cluster({ name: 'dup' })]),
      /resources\[1\]: a second Cluster named "dup"/,
    );
    assert.throws(
      () => plane.setResources([{ '@type': 'type.googleapis.com/no.such.Type', name: 'x' }]),
      /resources\[0\]\["@type"\]: unknown message type "no.such.Type"/,
    );
    assert.throws(
      () => plane.setResources([cluster({ name: '' })]),
      /resources\[0\] \(Cluster\): name is empty/,
    );
    assert.equal(plane.version, before);
    assert.equal(plane.resources.ofType(CLUSTER_TYPE_URL).size, 2);
  });

  test('events: connected, sent, ack; disconnected when the client goes away', async () => {
    const c = connect('node-events');
    c.send({ typeUrl: CLUSTER_TYPE_URL, resourceNames: ['c1'] });
    c.ack(await c.next(), ['c1']);
    await plane.waitForAck({ nodeId: 'node-events' });
    c.close();
    await until("the control plane's disconnected event for node-events", () =>
      events.some((e) => e.kind === 'disconnected' && e.nodeId === 'node-events'),
    );
    assert.ok(!plane.clients().some((i) => i.nodeId === 'node-events'));
    const nodeOf = (e: ControlPlaneEvent) =>
      e.kind === 'ack' ? e.ack.nodeId : e.kind === 'nack' ? e.nack.nodeId : 'nodeId' in e ? e.nodeId : '';
    const kinds = events.filter((e) => nodeOf(e) === 'node-events').map((e) => e.kind);
    assert.deepEqual(kinds, ['sent', 'ack', 'disconnected']);
  });
});

describe('control plane: close and listen again (a restart)', () => {
  test('close() ends the streams; listening again on the same port serves a new stream', async () => {
    const plane = new ControlPlane({ resources: base() });
    const port = await plane.listen('127.0.0.1:0');
    const c1 = new AdsTestClient(plane.address);
    c1.send({ typeUrl: CLUSTER_TYPE_URL });
    await c1.next();
    await plane.close();
    const status = await c1.ended();
    assert.notEqual(status.code, 0);
    assert.equal(await plane.listen(`127.0.0.1:${port}`), port);
    const c2 = new AdsTestClient(plane.address);
    c2.send({ typeUrl: CLUSTER_TYPE_URL });
    assert.equal((await c2.next()).versionInfo, '1');
    c1.close();
    c2.close();
    await plane.close();
  });

  test('bootstrapFor: an insecure xds_server on the port and the node id', () => {
    const b = ControlPlane.bootstrapFor(18000, { nodeId: 'n1' });
    assert.deepEqual(b, {
      xds_servers: [
        { server_uri: '127.0.0.1:18000', channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] },
      ],
      node: { id: 'n1', locality: {} },
    });
    assert.equal(ControlPlane.bootstrapFor('0.0.0.0:5').xds_servers[0]!.server_uri, '127.0.0.1:5');
  });

  test("bootstrapFor writes the JSON form lbtree's xDS client reads (one XdsBootstrap type, parsed from it)", () => {
    const json = ControlPlane.bootstrapFor('[::]:7', {
      nodeId: 'n2',
      nodeCluster: 'c2',
      locality: { zone: 'z1', sub_zone: 's1' },
      serverFeatures: ['ignore_resource_deletion'],
    });
    const b = parseBootstrap(json);
    assert.equal(b.xdsServers[0]!.serverUri, '[::1]:7');
    assert.deepEqual(b.xdsServers[0]!.channelCredentials, { type: 'insecure' });
    assert.equal(b.xdsServers[0]!.ignoreResourceDeletion, true);
    assert.deepEqual(b.node, {
      id: 'n2',
      cluster: 'c2',
      locality: { region: '', zone: 'z1', subZone: 's1' },
    });
  });
});
