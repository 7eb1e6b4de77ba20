// gRFC A47 (federation) and A71 (fallback) end to end (issue 23 §1, §2, §4): real grpc-js backends on loopback
// and lbtree's control plane in-process, several instances of it. Federation: authority a.example's Listener
// and routes on plane A name a cluster of authority b.example, whose Cluster and endpoints only plane B serves;
// lbtree's `xds://a.example/fed` and `xds:///fed` channels, then @grpc/grpc-js-xds on the same targets in a
// child process (./xds-federation-child.ts: grpc-js keeps one resolver per scheme), all without a failed call.
// Fallback: authority fb.example lists a primary that is down at start and a secondary; the secondary's
// resources serve, the primary's take over once it is up, and with the primary gone again the cached
// resources keep serving.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { ServiceError } from '@grpc/grpc-js';
import type { Backend, BackendClientType } from '../../src/cli/loopback-backends.js';
import type { ResourceJson } from '../../src/control-plane/index.js';
import type { XdsBootstrapJson } from '../../src/xds/client/bootstrap.js';
import { nodeScript } from '../support/child-node.js';
import {
  BackendClient,
  cp,
  grpc,
  rpcsUntil,
  servedByExactly,
  until,
  whoami,
} from '../support/xds-harness.js';

const { register } = await import('../../src/grpc-js/index.js');
const { startBackends } = await import('../../src/cli/loopback-backends.js');
const { pooledXdsClientScopes } = await import('../../src/grpc-js/xds-client-pool.js');

const NODE = 'lbtree-federation-e2e';
const GRPC_JS_XDS_NODE = 'grpc-js-xds-federation-e2e';

const LDS = 'envoy.config.listener.v3.Listener';
const RDS = 'envoy.config.route.v3.RouteConfiguration';
const CDS = 'envoy.config.cluster.v3.Cluster';
const EDS = 'envoy.config.endpoint.v3.ClusterLoadAssignment';

const name = (authority: string, type: string, id: string) => `xdstp://${authority}/${type}/${id}`;

/** A free loopback port, closed again: the primary's address while it is down. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const insecure = (uri: string) => ({
  server_uri: uri,
  channel_creds: [{ type: 'insecure' }],
  server_features: ['xds_v3'],
});

/** Listener → routes → cluster → endpoints of authority `authority`, the cluster's id `id`. */
function fallbackService(endpoint: string): ResourceJson[] {
  const a = 'fb.example';
  return [
    cp.listener(name(a, LDS, 'fb'), { rds: name(a, RDS, 'fb') }),
    cp.routeConfiguration(name(a, RDS, 'fb'), [{ routes: [{ cluster: name(a, CDS, 'fb') }] }]),
    cp.cluster({ name: name(a, CDS, 'fb'), edsServiceName: name(a, EDS, 'fb') }),
    cp.clusterLoadAssignment(name(a, EDS, 'fb'), [{ zone: 'z', endpoints: [endpoint] }]),
  ];
}

/** The dump of the lbtree xDS client of a channel target (A71: one per target). */
function dumpOf(scope: string) {
  const entry = pooledXdsClientScopes().find((e) => e.scope === scope);
  if (!entry) throw new Error(`no xDS client for ${scope}`);
  return entry.client.dump();
}

async function calls(
  client: BackendClientType,
  n: number,
): Promise<{ byBackend: Map<string, number>; failures: string[] }> {
  const byBackend = new Map<string, number>();
  const failures: string[] = [];
  for (let i = 0; i < n; i++) {
    try {
      const backend = await whoami(client, { waitForReady: true, deadlineMs: 10_000 });
      byBackend.set(backend, (byBackend.get(backend) ?? 0) + 1);
    } catch (e) {
      const err = e as ServiceError;
      failures.push(`${err.code}: ${err.details}`);
    }
  }
  return { byBackend, failures };
}

describe('xDS federation (A47) and fallback (A71) against several lbtree control planes', () => {
  const planeA = new cp.ControlPlane();
  const planeB = new cp.ControlPlane();
  const primary = new cp.ControlPlane();
  const secondary = new cp.ControlPlane();
  let primaryPort = 0;
  let backends: Record<string, Backend> = {};
  let bootstrap: XdsBootstrapJson;
  const clients: BackendClientType[] = [];
  const channel = (target: string) => {
    const c = new BackendClient(target, grpc.credentials.createInsecure(), {
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 500,
    });
    clients.push(c);
    return c;
  };

  before(async () => {
    const list = await startBackends(['f1', 'f2', 'p1', 's1']);
    backends = Object.fromEntries(list.map((b) => [b.name, b]));
    await planeA.listen('127.0.0.1:0');
    await planeB.listen('127.0.0.1:0');
    await secondary.listen('127.0.0.1:0');
    primaryPort = await freePort();
    // Plane A: a.example's listener and routes; the route names a cluster of b.example (context parameters in
    // another order than plane B spells them: both are one resource, A47 "normalized").
    planeA.setResources([
      cp.listener(name('a.example', LDS, 'fed'), { rds: name('a.example', RDS, 'fed-routes') }),
      cp.routeConfiguration(name('a.example', RDS, 'fed-routes'), [
        { routes: [{ cluster: `${name('b.example', CDS, 'fed-cluster')}?zone=1&env=e2e` }] },
      ]),
    ]);
    planeB.setResources([
      cp.cluster({
        name: `${name('b.example', CDS, 'fed-cluster')}?env=e2e&zone=1`,
        edsServiceName: name('b.example', EDS, 'fed-endpoints'),
      }),
      cp.clusterLoadAssignment(name('b.example', EDS, 'fed-endpoints'), [
        { zone: 'z', endpoints: [backends.f1!.address, backends.f2!.address] },
      ]),
    ]);
    primary.setResources(fallbackService(backends.p1!.address));
    secondary.setResources(fallbackService(backends.s1!.address));
    bootstrap = {
      xds_servers: [insecure(planeA.address)],
      node: { id: NODE, locality: {} },
      client_default_listener_resource_name_template: `xdstp://a.example/${LDS}/%s`,
      authorities: {
        'a.example': {},
        'b.example': { xds_servers: [insecure(planeB.address)] },
        'fb.example': { xds_servers: [insecure(`127.0.0.1:${primaryPort}`), insecure(secondary.address)] },
      },
    };
    register({ xds: { bootstrap } });
  });
  after(async () => {
    for (const c of clients) c.close();
    for (const b of Object.values(backends)) b.stop();
    await Promise.all([planeA.close(), planeB.close(), primary.close(), secondary.close()]);
  });

  test('xds://a.example/fed: the route on plane A names a cluster only plane B serves; 200 calls, 0 failures', async () => {
    const c = channel('xds://a.example/fed');
    const result = await calls(c, 200);
    assert.deepEqual(result.failures, []);
    assert.deepEqual([...result.byBackend.keys()].sort(), ['f1', 'f2']);
    await planeA.waitForAck({ nodeId: NODE, typeUrl: cp.ROUTE_CONFIGURATION_TYPE_URL });
    await planeB.waitForAck({ nodeId: NODE, typeUrl: cp.CLUSTER_LOAD_ASSIGNMENT_TYPE_URL });
    const dump = dumpOf('xds://a.example/fed');
    const from = Object.fromEntries(dump.resources.map((r) => [r.name, [r.authority, r.server, r.status]]));
    assert.deepEqual(from[name('a.example', LDS, 'fed')], ['a.example', planeA.address, 'ACKED']);
    assert.deepEqual(from[`${name('b.example', CDS, 'fed-cluster')}?env=e2e&zone=1`], [
      'b.example',
      planeB.address,
      'ACKED',
    ]);
    assert.deepEqual(from[name('b.example', EDS, 'fed-endpoints')], ['b.example', planeB.address, 'ACKED']);
    assert.deepEqual(dump.servers.map((s) => s.serverUri).sort(), [planeA.address, planeB.address].sort());
  });

  test('xds:///fed: the top-level xdstp: template names the same listener; 100 calls, 0 failures', async () => {
    const result = await calls(channel('xds:///fed'), 100);
    assert.deepEqual(result.failures, []);
    assert.deepEqual([...result.byBackend.keys()].sort(), ['f1', 'f2']);
    const dump = dumpOf('xds:///fed');
    assert.ok(dump.resources.some((r) => r.name === name('a.example', LDS, 'fed') && r.status === 'ACKED'));
  });

  test('an authority the bootstrap lacks fails the channel with UNAVAILABLE naming it (A47)', async () => {
    await assert.rejects(
      whoami(channel('xds://nowhere.example/fed'), { deadlineMs: 5000 }),
      (e: ServiceError) => {
        assert.equal(e.code, grpc.status.UNAVAILABLE);
        assert.match(e.details, /xDS authority "nowhere.example" is not in the bootstrap's "authorities"/);
        return true;
      },
    );
  });

  test('@grpc/grpc-js-xds on the same targets and control planes: 0 failures too', async () => {
    const plan = JSON.stringify({
      bootstrap: { ...bootstrap, node: { id: GRPC_JS_XDS_NODE, locality: {} } },
      targets: ['xds://a.example/fed', 'xds:///fed'],
      calls: 100,
    });
    const results = await new Promise<
      { target: string; byBackend: Record<string, number>; failures: string[] }[]
    >((resolve, reject) => {
      execFile(
        process.execPath,
        nodeScript('test/e2e/xds-federation-child.ts', plan),
        { encoding: 'utf8', timeout: 120_000 },
        (error, stdout, stderr) => {
          if (error) return reject(new Error(`grpc-js-xds child failed: ${error.message}\n${stderr}`));
          resolve(JSON.parse(stdout.trim().split('\n').at(-1)!));
        },
      );
    });
    for (const r of results) {
      assert.deepEqual(r.failures, [], r.target);
      assert.deepEqual(Object.keys(r.byBackend).sort(), ['f1', 'f2'], r.target);
    }
    await planeB.waitForAck({ nodeId: GRPC_JS_XDS_NODE, typeUrl: cp.CLUSTER_LOAD_ASSIGNMENT_TYPE_URL });
  });

  test('A71: primary down at start → the secondary serves; primary up → back on it within 30 s; primary gone with everything cached → nothing fails', async () => {
    const target = 'xds://fb.example/fb';
    const c = channel(target);
    await rpcsUntil(c, servedByExactly(['s1']), { deadlineMs: 20_000 });
    let dump = dumpOf(target);
    const authority = dump.authorities.find((a) => a.name === 'fb.example')!;
    assert.equal(authority.active, secondary.address, 'fell back to the secondary');
    assert.ok(dump.resources.every((r) => r.server === secondary.address));

    await primary.listen(`127.0.0.1:${primaryPort}`);
    const primaryUri = `127.0.0.1:${primaryPort}`;
    await until(
      'the client back on the primary',
      () => dumpOf(target).authorities.find((a) => a.name === 'fb.example')?.active === primaryUri,
      30_000,
      () => JSON.stringify(dumpOf(target).authorities),
    );
    await rpcsUntil(c, servedByExactly(['p1']), { deadlineMs: 10_000 });
    dump = dumpOf(target);
    assert.ok(
      dump.servers.every((s) => s.serverUri !== secondary.address),
      'the secondary stream is dropped once the primary delivered',
    );

    await primary.close();
    await until(
      'the primary stream down',
      () => dumpOf(target).servers[0]?.connectivityError !== undefined,
      15_000,
    );
    const result = await calls(c, 100);
    assert.deepEqual(result.failures, []);
    assert.deepEqual(
      [...result.byBackend.keys()],
      ['p1'],
      'the cached resources of the primary keep serving',
    );
    assert.equal(
      dumpOf(target).authorities.find((a) => a.name === 'fb.example')?.active,
      primaryUri,
      'no fallback: everything is cached',
    );
  });
});
