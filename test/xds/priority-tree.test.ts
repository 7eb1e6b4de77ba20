import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Simulation } from '../../src/sim/index.js';
import { PriorityChildNamer } from '../../src/xds/balancer/priority-tree.js';
import {
  clusterToTree,
  clusterToTreeFromJson,
  encodeCluster,
  encodeClusterLoadAssignment,
  XDS_HEALTH_STATUS,
  XdsClusterTreeGenerator,
  XdsResourceError,
} from '../../src/xds/index.js';
import { assignment, edsCluster, type LocalitySpec, zoneKey } from './helpers.js';

describe('A56 "LB Policy Configuration": priority child names stay stable across updates', () => {
  test('a priority takes the name of the first of its localities that had one; new names never reuse numbers', () => {
    const namer = new PriorityChildNamer();
    assert.deepEqual(namer.assign([['L1'], ['L2'], ['L3']]), [
      'priority-0-0',
      'priority-0-1',
      'priority-0-2',
    ]);
    assert.deepEqual(namer.assign([['L1'], ['L2'], ['L3']]), [
      'priority-0-0',
      'priority-0-1',
      'priority-0-2',
    ]);
    // Two priorities merged: the merged one keeps the first name it finds.
    assert.deepEqual(namer.assign([['L1', 'L2'], ['L3']]), ['priority-0-0', 'priority-0-2']);
    // A priority split off and a new locality: fresh names continue from 3.
    assert.deepEqual(namer.assign([['L1'], ['L4']]), ['priority-0-0', 'priority-0-3']);
    // Everything moves down a priority: each locality's child moves with it.
    assert.deepEqual(namer.assign([['L5'], ['L1'], ['L4']]), [
      'priority-0-4',
      'priority-0-0',
      'priority-0-3',
    ]);
  });

  test('a name already taken by a higher priority is not lent twice', () => {
    const namer = new PriorityChildNamer('c-');
    assert.deepEqual(namer.assign([['A', 'B']]), ['c-0']);
    // A and B (both of child c-0) split: the first keeps c-0, the second needs a new name.
    assert.deepEqual(namer.assign([['A'], ['B']]), ['c-0', 'c-1']);
    // The localities that matter are those of the previous update only.
    assert.deepEqual(namer.assign([['C']]), ['c-2']);
    assert.deepEqual(namer.assign([['A']]), ['c-3']);
  });

  test('the generator keeps names across EDS updates that move localities between priorities', () => {
    const generator = new XdsClusterTreeGenerator();
    const cluster = encodeCluster(edsCluster());
    const update = (localities: LocalitySpec[]) =>
      generator.update(cluster, encodeClusterLoadAssignment(assignment(localities))).childNames;
    assert.deepEqual(
      update([
        { zone: 'a', endpoints: ['10.0.0.1'] },
        { zone: 'b', priority: 1, endpoints: ['10.0.0.2'] },
      ]),
      ['priority-0-0', 'priority-0-1'],
    );
    // All of priority 0's localities removed and replaced by priority 1's: priority 1's child moves up.
    assert.deepEqual(
      update([
        { zone: 'b', endpoints: ['10.0.0.2'] },
        { zone: 'c', priority: 1, endpoints: ['10.0.0.3'] },
      ]),
      ['priority-0-1', 'priority-0-2'],
    );
    // A failed update changes nothing.
    assert.throws(() => update([{ zone: 'z', priority: 3, endpoints: ['10.0.0.9'] }]), XdsResourceError);
    assert.deepEqual(update([{ zone: 'c', endpoints: ['10.0.0.3'] }]), ['priority-0-2']);
  });
});

describe('cluster resolver config generation (A42 / A52)', () => {
  test('one priority_experimental child per priority, each running the cluster LB policy; paths name the child', () => {
    const tree = clusterToTreeFromJson(
      edsCluster({ lbPolicy: 'RING_HASH' }),
      assignment([
        { zone: 'a', weight: 3, endpoints: ['10.0.0.1'] },
        { zone: 'b', priority: 1, weight: 2, endpoints: [{ address: '10.0.0.2', hashKey: 'h2' }] },
      ]),
    );
    // A37 / A55: each priority runs xds_cluster_impl over xds_override_host over the cluster's policy, as cds
    // builds it on a channel.
    const child = [
      {
        xds_cluster_impl_experimental: {
          clusterName: 'cluster-a',
          childPolicy: [
            {
              xds_override_host_experimental: {
                clusterName: 'cluster-a',
                childPolicy: [{ ring_hash_experimental: { minRingSize: 1024, maxRingSize: 8_388_608 } }],
              },
            },
          ],
        },
      },
    ];
    assert.deepEqual(tree.config, [
      {
        priority_experimental: {
          children: {
            'priority-0-0': { config: child, ignoreReresolutionRequests: true },
            'priority-0-1': { config: child, ignoreReresolutionRequests: true },
          },
          priorities: ['priority-0-0', 'priority-0-1'],
        },
      },
    ]);
    assert.deepEqual(tree.endpoints, [
      {
        addresses: ['10.0.0.1:80'],
        // A113: the only endpoint of its priority's only locality weighs 1.0 in UQ1.31.
        attributes: { path: ['priority-0-0'], weight: 2 ** 31, locality: zoneKey('a'), localityWeight: 3 },
      },
      {
        addresses: ['10.0.0.2:80'],
        attributes: {
          path: ['priority-0-1'],
          weight: 2 ** 31,
          locality: zoneKey('b'),
          localityWeight: 2,
          hashKey: 'h2',
        },
      },
    ]);
  });

  test('A42 "Change Child Policy Config Generation": endpoint weight × locality weight (A113 switch off)', () => {
    // The gRFC's example: locality 1 (weight 3) holds A (2) and B (1); locality 2 (weight 2) holds C (3), D (1).
    const tree = clusterToTreeFromJson(
      edsCluster({ lbPolicy: 'RING_HASH' }),
      assignment([
        {
          zone: '1',
          weight: 3,
          endpoints: [
            { address: '10.0.0.1', weight: 2 },
            { address: '10.0.0.2', weight: 1 },
          ],
        },
        {
          zone: '2',
          weight: 2,
          endpoints: [
            { address: '10.0.0.3', weight: 3 },
            { address: '10.0.0.4', weight: 1 },
          ],
        },
      ]),
      { normalizedWeights: false },
    );
    assert.deepEqual(
      tree.endpoints.map((e) => [e.addresses[0], e.attributes.weight]),
      [
        ['10.0.0.1:80', 6],
        ['10.0.0.2:80', 3],
        ['10.0.0.3:80', 6],
        ['10.0.0.4:80', 2],
      ],
    );
  });

  test('A61: an endpoint with additional addresses stays one endpoint', () => {
    const tree = clusterToTreeFromJson(
      edsCluster(),
      assignment([{ zone: 'a', endpoints: [{ address: '10.0.0.1', additional: ['fd00::1'] }] }]),
    );
    assert.deepEqual(tree.endpoints[0]!.addresses, ['10.0.0.1:80', '[fd00::1]:80']);
  });

  test('no localities give an empty priority list (the priority policy reports TRANSIENT_FAILURE)', () => {
    const tree = clusterToTreeFromJson(edsCluster(), { clusterName: 'cluster-a' });
    assert.deepEqual(tree.config, [{ priority_experimental: { children: {}, priorities: [] } }]);
    const sim = new Simulation();
    sim.update(tree.endpoints, tree.config);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
  });

  test('errors name the resource: a ClusterLoadAssignment for another cluster, an invalid Cluster', () => {
    assert.throws(
      () => clusterToTreeFromJson(edsCluster(), assignment([], 'cluster-b')),
      (e: Error) =>
        e instanceof XdsResourceError &&
        e.message ===
          'ClusterLoadAssignment: cluster_name: the ClusterLoadAssignment is for "cluster-b", but cluster "cluster-a" asks EDS for "cluster-a"',
    );
    assert.throws(
      () =>
        clusterToTree(
          encodeCluster(edsCluster({ lbPolicy: 'MAGLEV' })),
          encodeClusterLoadAssignment(assignment([])),
        ),
      /^XdsResourceError: Cluster: lb_policy: unsupported value MAGLEV$/,
    );
    assert.throws(
      () =>
        clusterToTreeFromJson(
          edsCluster(),
          assignment([{ zone: 'a', priority: 1, endpoints: ['10.0.0.1'] }]),
        ),
      /^XdsResourceError: ClusterLoadAssignment: endpoints\[0\]\.priority: /,
    );
  });

  test('JSON input errors name the JSON path; unknown fields can be skipped', () => {
    assert.throws(
      () => clusterToTreeFromJson(edsCluster({ connectTimeout: 'soon' }), assignment([])),
      /^ProtoJsonError: \$\.connectTimeout: not a valid google\.protobuf\.Duration: "soon" \(reading envoy\.config\.cluster\.v3\.Cluster JSON\)$/,
    );
    assert.throws(
      () => clusterToTreeFromJson(edsCluster({ healthCheckz: [] }), assignment([])),
      /\$\.healthCheckz: unknown field of envoy\.config\.cluster\.v3\.Cluster/,
    );
    const tree = clusterToTreeFromJson(
      edsCluster({ healthChecks: [], healthCheckz: [], connect_timeout: '0.25s' }),
      assignment([{ zone: 'a', endpoints: ['10.0.0.1'] }]),
      { ignoreUnknownFields: true },
    );
    assert.equal(tree.endpoints.length, 1);
  });
});

describe('A56 + A27 in the simulator: a locality moving up a priority keeps its child and connections', () => {
  test('after failover to priority 1, an update that makes its locality priority 0 is served at once', () => {
    const generator = new XdsClusterTreeGenerator();
    const cluster = encodeCluster(edsCluster());
    const sim = new Simulation();
    sim.script('10.0.0.1:80', { failAfterMs: 1 });
    sim.script('10.0.0.2:80', { connectAfterMs: 1 });
    sim.script('10.0.0.3:80', { connectAfterMs: 1 });

    const first = generator.update(
      cluster,
      encodeClusterLoadAssignment(
        assignment([
          { zone: 'a', endpoints: ['10.0.0.1'] },
          { zone: 'b', priority: 1, endpoints: ['10.0.0.2'] },
        ]),
      ),
    );
    assert.equal(sim.update(first.endpoints, first.config), true);
    sim.advance(10);
    assert.equal(sim.state, 'READY');
    const picked = sim.pick();
    assert.equal(picked.type === 'complete' && picked.address, '10.0.0.2:80');
    const created = sim.subchannelsCreated;
    const historyLength = sim.history.length;

    // Locality a is gone; b moves to priority 0 and c is the new priority 1.
    const second = generator.update(
      cluster,
      encodeClusterLoadAssignment(
        assignment([
          { zone: 'b', endpoints: ['10.0.0.2'] },
          { zone: 'c', priority: 1, endpoints: ['10.0.0.3'] },
        ]),
      ),
    );
    assert.deepEqual(second.childNames, ['priority-0-1', 'priority-0-2']);
    assert.equal(sim.update(second.endpoints, second.config), true);
    assert.equal(sim.state, 'READY');
    assert.ok(
      sim.history.slice(historyLength).every((h) => h.state === 'READY'),
      'no CONNECTING in between',
    );
    assert.equal(sim.subchannelsCreated, created, 'the child kept its subchannel; none was created');
    const again = sim.pick();
    assert.equal(again.type === 'complete' && again.address, '10.0.0.2:80');
  });
});

describe('the plain endpoint form of a cluster tree (A55 DRAINING endpoints)', () => {
  test('a DRAINING endpoint stays in the Endpoint form (xds_override_host keeps it for sessions) and is left out of the plain form', () => {
    const cluster = encodeCluster(edsCluster());
    const cla = {
      clusterName: 'cluster-a',
      endpoints: [
        {
          locality: { region: 'r', zone: 'a' },
          loadBalancingWeight: 1,
          lbEndpoints: [
            { endpoint: { address: { socketAddress: { address: '10.0.0.1', portValue: 80 } } } },
            {
              endpoint: { address: { socketAddress: { address: '10.0.0.2', portValue: 80 } } },
              healthStatus: 'DRAINING',
            },
          ],
        },
      ],
    };
    const bytes = encodeClusterLoadAssignment(cla);
    const full = new XdsClusterTreeGenerator().updateEndpoints(cluster, bytes);
    assert.deepEqual(
      full.endpoints.map((e) => e.attributes.get(XDS_HEALTH_STATUS)),
      ['UNKNOWN', 'DRAINING'],
    );
    const plain = clusterToTree(cluster, bytes);
    assert.deepEqual(
      plain.endpoints.map((e) => e.addresses),
      [['10.0.0.1:80']],
    );
  });
});
