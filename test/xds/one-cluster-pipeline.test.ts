// One cluster pipeline (A37 / A74 / A75): the same Cluster + ClusterLoadAssignment bytes, once the way an xds:
// channel sees them (the xDS client's decoders, the dependency manager's XdsConfig, the cds policy) and once
// through clusterToTree (what lbtree simulate runs), give the same tree below cds and the same picks.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { StatusOr } from '../../src/core/index.js';
import { defaultRegistry } from '../../src/policies/index.js';
import { Simulation } from '../../src/sim/index.js';
import { registerXdsPolicies } from '../../src/xds/balancer/index.js';
import {
  clusterResourceType,
  clusterToTree,
  encodeCluster,
  encodeClusterLoadAssignment,
  endpointResourceType,
  XDS_CONFIG_ATTRIBUTE,
  type XdsConfig,
} from '../../src/xds/index.js';
import { XdsDependencyManager } from '../../src/xds/resolver/dependency-manager.js';
import { resolveXdsOptions } from '../../src/xds/resources/xds-options.js';
import { routeTo } from '../support/xds-routes.js';
import { FAKE_TYPES, FakeXdsWatcher } from './fake-xds-watcher.js';

const CLUSTER = {
  name: 'backend',
  type: 'EDS',
  edsClusterConfig: { edsConfig: { ads: {} }, serviceName: 'backend-eds' },
  lbPolicy: 'ROUND_ROBIN',
  circuitBreakers: { thresholds: [{ priority: 'DEFAULT', maxRequests: 50 }] },
  outlierDetection: { interval: '10s', successRateMinimumHosts: 3 },
};

const socket = (address: string) => ({
  endpoint: { address: { socketAddress: { address, portValue: 80 } } },
});
const ASSIGNMENT = {
  clusterName: 'backend-eds',
  endpoints: [
    {
      locality: { zone: 'a' },
      loadBalancingWeight: 3,
      lbEndpoints: [socket('10.0.0.1'), socket('10.0.0.2')],
    },
    { locality: { zone: 'b' }, loadBalancingWeight: 1, lbEndpoints: [socket('10.0.1.1')] },
    { locality: { zone: 'c' }, loadBalancingWeight: 1, priority: 1, lbEndpoints: [socket('10.1.0.1')] },
  ],
  policy: { dropOverloads: [{ category: 'lb', dropPercentage: { numerator: 5, denominator: 'HUNDRED' } }] },
};
const ADDRESSES = ['10.0.0.1:80', '10.0.0.2:80', '10.0.1.1:80', '10.1.0.1:80'];

function decoded<T>(result: { ok: true; value: T } | { ok: false; error: string }): T {
  if (!result.ok) assert.fail(`NACK: ${result.error}`);
  return result.value;
}

/** The channel's path: the client's decoders → the dependency manager's XdsConfig. */
function channelConfig(clusterBytes: Uint8Array, assignmentBytes: Uint8Array): XdsConfig {
  const context = resolveXdsOptions();
  const watcher = new FakeXdsWatcher();
  const updates: StatusOr<XdsConfig>[] = [];
  new XdsDependencyManager({
    watcher,
    types: FAKE_TYPES,
    listenerName: 'svc',
    authority: 'svc',
    dns: { resolve: () => Promise.reject(new Error('no DNS in this test')) },
    onUpdate: (c) => updates.push(c),
  });
  watcher.set(FAKE_TYPES.listener, 'svc', {
    name: 'svc',
    routeSource: {
      kind: 'inline',
      routeConfig: {
        name: 'routes',
        virtualHosts: [
          {
            name: 'vh',
            domains: ['*'],
            routes: [routeTo('backend')],
            filterOverrides: new Map(),
          },
        ],
      },
    },
    httpFilters: [],
    maxStreamDurationMs: undefined,
  } as never);
  watcher.set(FAKE_TYPES.cluster, 'backend', decoded(clusterResourceType.decode(clusterBytes, context)));
  watcher.set(
    FAKE_TYPES.endpoint,
    'backend-eds',
    decoded(endpointResourceType.decode(assignmentBytes, context)),
  );
  const last = updates.at(-1);
  assert.ok(last?.ok, `the dependency manager gave no config: ${JSON.stringify(last)}`);
  return last.value;
}

/** A simulation whose registry records the LB config cds hands its child. */
function recordingSimulation(): { sim: Simulation; childConfigs: unknown[] } {
  const registry = registerXdsPolicies(defaultRegistry().clone());
  const childConfigs: unknown[] = [];
  const parse = registry.parseLbConfigList.bind(registry);
  registry.parseLbConfigList = (json: unknown, path?: string) => {
    if (path === '$.cluster(backend)') childConfigs.push(structuredClone(json));
    return parse(json, path);
  };
  const sim = new Simulation({ seed: 7, registry });
  for (const a of ADDRESSES) sim.script(a, { connectAfterMs: 1 });
  return { sim, childConfigs };
}

function picks(sim: Simulation, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const p = sim.pick();
    out.push(
      p.type === 'complete' ? p.address : p.type === 'drop' ? `drop:${JSON.stringify(p.dropReason)}` : p.type,
    );
  }
  return out;
}

describe('one cluster pipeline: an xds: channel and lbtree simulate run the same tree (A37, A74, A75)', () => {
  test('the same Cluster + ClusterLoadAssignment: the same config below cds, the same endpoints, the same picks', () => {
    const clusterBytes = encodeCluster(CLUSTER);
    const assignmentBytes = encodeClusterLoadAssignment(ASSIGNMENT);

    const channel = recordingSimulation();
    const config = channelConfig(clusterBytes, assignmentBytes);
    assert.ok(
      channel.sim.update([], [{ cds_experimental: { cluster: 'backend' } }], {
        [XDS_CONFIG_ATTRIBUTE]: config,
      }),
      channel.sim.lastConfigError?.message,
    );
    channel.sim.advance(5);

    const tree = clusterToTree(clusterBytes, assignmentBytes);
    assert.equal(channel.childConfigs.length, 1);
    assert.deepEqual(tree.config, channel.childConfigs[0], 'the tree below cds is the same');
    // The layers a channel runs are all there: outlier_detection → priority → cluster_impl → override_host.
    const text = JSON.stringify(tree.config);
    for (const layer of [
      'outlier_detection_experimental',
      'priority_experimental',
      'xds_cluster_impl_experimental',
      'xds_override_host_experimental',
      'xds_wrr_locality_experimental',
    ])
      assert.ok(text.includes(layer), `${layer} in ${text}`);

    const simulated = recordingSimulation();
    assert.ok(
      simulated.sim.update(tree.endpoints, tree.config, tree.attributes),
      simulated.sim.lastConfigError?.message,
    );
    simulated.sim.advance(5);
    assert.equal(simulated.sim.state, 'READY');
    assert.equal(channel.sim.state, 'READY');
    assert.deepEqual(
      [...simulated.sim.subchannels.keys()].sort(),
      [...channel.sim.subchannels.keys()].sort(),
      'the same connections',
    );
    const fromChannel = picks(channel.sim, 4000);
    const fromSimulator = picks(simulated.sim, 4000);
    assert.deepEqual(fromSimulator, fromChannel, 'the same picks, drops included');
    // A37: drop_overloads (5 % "lb") act in both: Binomial(4000, 0.05), mean 200, sd 13.8.
    const drops = fromSimulator.filter((p) => p === 'drop:{"category":"lb"}').length;
    assert.ok(drops > 145 && drops < 255, `${drops} drops`);
    // Priority 1 (10.1.0.1) takes nothing while priority 0 is READY; zone a : zone b is 3 : 1.
    assert.equal(fromSimulator.filter((p) => p === '10.1.0.1:80').length, 0);
    const zoneA = fromSimulator.filter((p) => p.startsWith('10.0.0.')).length;
    const zoneB = fromSimulator.filter((p) => p.startsWith('10.0.1.')).length;
    assert.ok(Math.abs(zoneA / (zoneA + zoneB) - 0.75) < 0.03, `zone a ${zoneA}, zone b ${zoneB}`);
  });
});
