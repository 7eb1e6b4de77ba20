// lbtree's control plane serving a client lbtree did not write: the real @grpc/grpc-js-xds resolves
// `xds:///svc` through it (LDS → RDS → CDS → EDS), ACKs every resource, and routes RPCs to real grpc-js
// servers on loopback; an endpoint update moves the traffic; an invalid cluster is NACKed with grpc-js-xds's
// reason in `nacks`, and the last good cluster keeps serving. (This file runs in its own process, as every
// node:test file does: grpc-js-xds registers itself into grpc-js once per process.)
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import {
  type Backend,
  BackendClient,
  type BackendClientType,
  startBackends,
} from '../../src/cli/loopback-backends.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE_URL,
  CLUSTER_TYPE_URL,
  ControlPlane,
  cluster,
  LISTENER_TYPE_URL,
  ROUTE_CONFIGURATION_TYPE_URL,
  xdsService,
} from '../../src/control-plane/index.js';
import { rpcsUntil, servedByExactly } from '../support/rpc-window.js';

const NODE = 'grpc-js-xds-e2e';
const ALL_TYPES = [
  LISTENER_TYPE_URL,
  ROUTE_CONFIGURATION_TYPE_URL,
  CLUSTER_TYPE_URL,
  CLUSTER_LOAD_ASSIGNMENT_TYPE_URL,
];

describe('@grpc/grpc-js-xds against lbtree control-plane (ADS v3, state of the world)', () => {
  const plane = new ControlPlane();
  let backends: Backend[];
  let client: BackendClientType;
  const service = (endpoints: readonly Backend[]) =>
    xdsService({
      name: 'svc',
      clusters: [{ name: 'c1', localities: [{ zone: 'a', endpoints: endpoints.map((b) => b.address) }] }],
    });

  before(async () => {
    backends = await startBackends(['a1', 'a2', 'b1']);
    const [a1, a2] = backends as [Backend, Backend, Backend];
    plane.setResources(service([a1, a2]));
    await plane.listen('127.0.0.1:0');
    // grpc-js-xds reads the bootstrap when its first xds: channel starts.
    process.env.GRPC_XDS_BOOTSTRAP_CONFIG = JSON.stringify(plane.bootstrap({ nodeId: NODE }));
    createRequire(import.meta.url)('@grpc/grpc-js-xds').register();
    client = new BackendClient('xds:///svc', grpc.credentials.createInsecure());
  });
  after(async () => {
    client?.close();
    for (const b of backends) b.stop();
    await plane.close();
  });

  test('every resource is ACKed, none NACKed, and RPCs reach the EDS endpoints', async () => {
    const version = plane.version;
    await rpcsUntil(client, servedByExactly(['a1', 'a2']));
    for (const typeUrl of ALL_TYPES) {
      const ack = await plane.waitForAck({ nodeId: NODE, typeUrl, version });
      assert.equal(ack.version, version);
    }
    assert.deepEqual(plane.nacks, []);
    const [info] = plane.clients().filter((c) => c.nodeId === NODE);
    assert.ok(info, 'grpc-js-xds is connected under its bootstrap node id');
    assert.deepEqual(
      info.subscriptions.map((s) => [s.typeUrl, s.names, s.ackedVersion]).sort(),
      [
        [CLUSTER_TYPE_URL, ['c1'], version],
        [CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, ['c1'], version],
        [ROUTE_CONFIGURATION_TYPE_URL, ['svc-routes'], version],
        [LISTENER_TYPE_URL, ['svc'], version],
      ].sort(),
    );
  });

  test('a new endpoint set is pushed, ACKed, and moves the traffic', async () => {
    const b1 = backends[2]!;
    const version = plane.setResources(service([b1]));
    await plane.waitForAck({ nodeId: NODE, typeUrl: CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, version });
    await rpcsUntil(client, servedByExactly(['b1']));
    assert.deepEqual(plane.nacks, []);
  });

  test('an invalid cluster is NACKed with the reason; the last good cluster keeps serving', async () => {
    const b1 = backends[2]!;
    const resources = service([b1]).map((r) =>
      r['@type'] === CLUSTER_TYPE_URL ? cluster({ name: 'c1', fields: { lbPolicy: 'MAGLEV' } }) : r,
    );
    const version = plane.setResources(resources);
    const nack = await plane.waitForNack({ nodeId: NODE, typeUrl: CLUSTER_TYPE_URL, version });
    assert.match(nack.reason, /lb_policy/);
    assert.match(nack.reason, /MAGLEV/);
    assert.deepEqual(
      plane.nacks.map((n) => [n.nodeId, n.typeUrl, n.version]),
      [[NODE, CLUSTER_TYPE_URL, version]],
    );
    // The other types of that version are fine and ACKed.
    await plane.waitForAck({ nodeId: NODE, typeUrl: LISTENER_TYPE_URL, version });
    await rpcsUntil(client, servedByExactly(['b1']), { window: 10 });
  });
});
