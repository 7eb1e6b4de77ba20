// The dependency manager over lbtree's real XdsClient with two in-memory servers (A47 federation): every
// resource that names another may name it with an xdstp: name of any authority of the bootstrap — the RDS name
// in the Listener, the route's cluster, an aggregate cluster's children, the EDS service name — and each is
// fetched from its own authority's server, in virtual time.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  aggregateCluster,
  CLUSTER_LOAD_ASSIGNMENT_TYPE_URL,
  CLUSTER_TYPE_URL,
  cluster,
  clusterLoadAssignment,
  LISTENER_TYPE_URL,
  listener,
  type ResourceJson,
  ResourceSet,
  ROUTE_CONFIGURATION_TYPE_URL,
  routeConfiguration,
} from '../../src/control-plane/index.js';
import { Code, type StatusOr } from '../../src/core/index.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { parseBootstrap } from '../../src/xds/client/bootstrap.js';
import { XdsClient } from '../../src/xds/client/xds-client.js';
import { XdsDependencyManager } from '../../src/xds/resolver/dependency-manager.js';
import type { XdsConfig } from '../../src/xds/xds-config.js';
import { FakeAdsServers } from './client/fake-ads.js';
import { REAL_RESOURCE_TYPES } from './client/real-client-over-fake-ads.js';

const name = (authority: string, type: string, id: string) =>
  `xdstp://${authority}/envoy.config.${type}/${id}`;
const LDS = (a: string, id: string) => name(a, 'listener.v3.Listener', id);
const RDS = (a: string, id: string) => name(a, 'route.v3.RouteConfiguration', id);
const CDS = (a: string, id: string) => name(a, 'cluster.v3.Cluster', id);
const EDS = (a: string, id: string) => name(a, 'endpoint.v3.ClusterLoadAssignment', id);

function setup(routeCluster: string) {
  const clock = new VirtualClock();
  const servers = new FakeAdsServers();
  const insecure = [{ type: 'insecure' }];
  const client = new XdsClient({
    bootstrap: parseBootstrap({
      xds_servers: [{ server_uri: 'cp-a:1', channel_creds: insecure }],
      authorities: { a: {}, b: { xds_servers: [{ server_uri: 'cp-b:1', channel_creds: insecure }] } },
      node: { id: 'node-1' },
    }),
    transport: servers.factory,
    clock,
    federation: true,
  });
  const updates: StatusOr<XdsConfig>[] = [];
  new XdsDependencyManager({
    watcher: client,
    types: REAL_RESOURCE_TYPES,
    listenerName: LDS('a', 'svc'),
    authority: 'svc',
    dns: { resolve: async () => [] },
    onUpdate: (u) => updates.push(u),
  });
  let version = 0;
  /** The server `uri` answers one type's subscription with these resources (its stream connected first). */
  const respond = (uri: string, typeUrl: string, resources: ResourceJson[]) => {
    clock.runDue();
    const stream = servers.stream(uri);
    if (stream.requests.length > 0 && !connected.has(uri)) {
      stream.connect();
      connected.add(uri);
    }
    const set = ResourceSet.build(String(++version), resources);
    stream.respond(
      typeUrl,
      String(version),
      [...set.ofType(typeUrl).values()].map((r) => r.any),
    );
    clock.runDue();
  };
  const connected = new Set<string>();
  respond('cp-a:1', LISTENER_TYPE_URL, [listener(LDS('a', 'svc'), { rds: RDS('a', 'routes') })]);
  respond('cp-a:1', ROUTE_CONFIGURATION_TYPE_URL, [
    routeConfiguration(RDS('a', 'routes'), [{ routes: [{ cluster: routeCluster }] }]),
  ]);
  return { clock, servers, client, updates, respond };
}

describe('XdsDependencyManager with xdstp: names across two authorities (A47)', () => {
  test('route (authority a) → aggregate cluster (b) → leaves in b and a → EDS by xdstp: service names: one complete config', () => {
    const env = setup(CDS('b', 'agg'));
    assert.deepEqual(env.servers.stream('cp-b:1').lastOf(CLUSTER_TYPE_URL).resourceNames, [CDS('b', 'agg')]);
    env.respond('cp-b:1', CLUSTER_TYPE_URL, [
      aggregateCluster(CDS('b', 'agg'), [CDS('b', 'leaf'), CDS('a', 'leaf')]),
      cluster({ name: CDS('b', 'leaf'), edsServiceName: EDS('b', 'leaf') }),
    ]);
    env.respond('cp-a:1', CLUSTER_TYPE_URL, [
      cluster({ name: CDS('a', 'leaf'), edsServiceName: EDS('a', 'leaf') }),
    ]);
    assert.deepEqual(
      env.servers.stream('cp-a:1').lastOf(CLUSTER_TYPE_URL).resourceNames,
      [CDS('a', 'leaf')],
      "a's leaf is asked of a's server only",
    );
    env.respond('cp-b:1', CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, [
      clusterLoadAssignment(EDS('b', 'leaf'), [{ zone: 'z', endpoints: ['10.0.0.1:80'] }]),
    ]);
    assert.equal(env.updates.length, 0, "a's endpoints are not known yet: no torn config");
    env.respond('cp-a:1', CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, [
      clusterLoadAssignment(EDS('a', 'leaf'), [{ zone: 'z', endpoints: ['10.0.0.2:80'] }]),
    ]);
    const config = env.updates.at(-1);
    assert.ok(config?.ok);
    const agg = config.value.clusters.get(CDS('b', 'agg'));
    assert.ok(agg?.ok && agg.value.children.kind === 'aggregate');
    assert.deepEqual(agg.value.children.leafClusters, [CDS('b', 'leaf'), CDS('a', 'leaf')]);
    for (const leaf of [CDS('b', 'leaf'), CDS('a', 'leaf')]) {
      const c = config.value.clusters.get(leaf);
      assert.ok(c?.ok && c.value.children.kind === 'endpoints', leaf);
      assert.equal(c.value.children.endpoints?.priorities[0]?.[0]?.endpoints.length, 1, leaf);
    }
    assert.equal(env.client.serverOf(REAL_RESOURCE_TYPES.cluster, CDS('a', 'leaf'))?.serverUri, 'cp-a:1');
    assert.equal(env.client.serverOf(REAL_RESOURCE_TYPES.cluster, CDS('b', 'agg'))?.serverUri, 'cp-b:1');
  });

  test('a route naming a malformed xdstp: cluster, or one of an authority the bootstrap lacks: that cluster fails UNAVAILABLE (A88 data plane status), naming it', () => {
    for (const [bad, text] of [
      [
        'xdstp://b/envoy.config.cluster.v3.Cluster',
        /xdstp name "xdstp:\/\/b\/envoy.config.cluster.v3.Cluster"/,
      ],
      [CDS('nowhere', 'c'), /authority "nowhere" is not in the bootstrap's "authorities"/],
    ] as const) {
      const env = setup(bad);
      env.clock.runDue();
      const config = env.updates.at(-1);
      assert.ok(config?.ok, bad);
      const entry = config.value.clusters.get(bad);
      assert.ok(entry && !entry.ok, bad);
      assert.equal(entry.status.code, Code.UNAVAILABLE, bad);
      assert.match(entry.status.details, text);
    }
  });
});
