import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Code, parseAddress } from '../../src/core/index.js';
import type { Simulation } from '../../src/sim/index.js';
import type { XdsEndpointResource } from '../../src/xds/resources/types.js';
import { picks, tally } from '../support/sim-picks.js';
import {
  aggregateEntry,
  edsEntry,
  endpointResource,
  errorEntry,
  forCluster,
  locality,
  withXdsConfig,
  xdsCluster,
  xdsConfig,
  xdsSimulation,
} from './xds-config-fixtures.js';

const cds = (cluster: string): unknown => [{ cds_experimental: { cluster } }];

function scriptAll(
  sim: Simulation,
  keys: readonly string[],
  outcome: Parameters<Simulation['script']>[1],
): void {
  for (const k of keys) sim.script(k, outcome);
}

describe('cds_experimental (A74 "Changes in cds LB policy")', () => {
  test('A74: an EDS cluster from the XdsConfig becomes the priority tree; ROUND_ROBIN localities weighted 1:3 (A27)', () => {
    const sim = xdsSimulation({ seed: 7 });
    const a = ['10.0.1.1:80', '10.0.1.2:80'];
    const b = ['10.0.2.1:80', '10.0.2.2:80'];
    scriptAll(sim, [...a, ...b], { connectAfterMs: 1 });
    const eds = endpointResource('c', [[locality('a', 1, a), locality('b', 3, b)]]);
    assert.ok(sim.update([], cds('c'), withXdsConfig(xdsConfig({ c: edsEntry(xdsCluster('c'), eds) }))));
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    const counts = tally(picks(sim, 8000));
    const inA = (counts[a[0]!] ?? 0) + (counts[a[1]!] ?? 0);
    assert.ok(Math.abs(inA / 8000 - 0.25) < 0.03, `locality a got ${inA} of 8000`);
  });

  test('A74 + A56: priorities fail over inside the cluster, and a new XdsConfig keeps working children', () => {
    const sim = xdsSimulation();
    scriptAll(sim, ['10.0.1.1:80'], { failAfterMs: 1 });
    scriptAll(sim, ['10.0.2.1:80'], { connectAfterMs: 1 });
    const eds = endpointResource('c', [
      [locality('a', 1, ['10.0.1.1:80'])],
      [locality('b', 1, ['10.0.2.1:80'])],
    ]);
    sim.update([], cds('c'), withXdsConfig(xdsConfig({ c: edsEntry(xdsCluster('c'), eds) })));
    sim.advance(5);
    assert.deepEqual(new Set(picks(sim, 4)), new Set(['10.0.2.1:80']));
    const created = sim.subchannelsCreated;
    // Same resources in a new XdsConfig: nothing is rebuilt.
    sim.update([], cds('c'), withXdsConfig(xdsConfig({ c: edsEntry(xdsCluster('c'), eds) })));
    assert.equal(sim.subchannelsCreated, created);
    assert.equal(picks(sim, 1)[0], '10.0.2.1:80');
  });

  test('A88: a cluster whose entry is an error fails calls with that status; a cluster missing from the config drops them (A31)', () => {
    const sim = xdsSimulation();
    const missing = { code: Code.UNAVAILABLE, details: 'Cluster c: does not exist (xDS node n)' };
    assert.equal(sim.update([], cds('c'), withXdsConfig(xdsConfig({ c: errorEntry(missing) }))), false);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    const failed = sim.pick();
    assert.equal(failed.type, 'fail');
    assert.deepEqual(failed.type === 'fail' && failed.status, missing);
    sim.update([], cds('c'), withXdsConfig(xdsConfig({})));
    const dropped = sim.pick();
    assert.equal(dropped.type, 'drop');
    assert.match(dropped.type === 'drop' ? dropped.status.details : '', /cluster c is not in the xDS config/);
  });

  test('A74: an EDS cluster with no endpoints yet fails with the resolution note', () => {
    const sim = xdsSimulation();
    sim.update(
      [],
      cds('c'),
      withXdsConfig(xdsConfig({ c: edsEntry(xdsCluster('c'), undefined, 'EDS resource c: does not exist') })),
    );
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    assert.match(sim.status.details, /EDS resource c: does not exist/);
  });

  test('A75 "Aggregate Cluster Changes": an aggregate cluster is a priority over its leaf clusters, failing over to the second', () => {
    const sim = xdsSimulation();
    scriptAll(sim, ['10.0.1.1:80'], { failAfterMs: 1 });
    scriptAll(sim, ['10.0.2.1:80'], { connectAfterMs: 1 });
    const config = xdsConfig({
      agg: aggregateEntry('agg', ['primary', 'secondary']),
      primary: edsEntry(
        xdsCluster('primary'),
        endpointResource('primary', [[locality('a', 1, ['10.0.1.1:80'])]]),
      ),
      secondary: edsEntry(
        xdsCluster('secondary', { lbPolicy: [{ pick_first: {} }] }),
        endpointResource('secondary', [[locality('b', 1, ['10.0.2.1:80'])]]),
      ),
    });
    assert.ok(sim.update([], cds('agg'), withXdsConfig(config)));
    sim.advance(5);
    assert.equal(sim.state, 'READY');
    assert.deepEqual(new Set(picks(sim, 4)), new Set(['10.0.2.1:80']));
    // The primary recovers: traffic goes back to it (A56 failover and back).
    scriptAll(sim, ['10.0.1.1:80'], { connectAfterMs: 1 });
    sim.advance(2000);
    assert.deepEqual(new Set(picks(sim, 4)), new Set(['10.0.1.1:80']));
  });

  test('A37 "Priority Policy Reresolution Handling": LOGICAL_DNS priorities pass re-resolution requests up, EDS ones do not', () => {
    const dns: XdsEndpointResource = endpointResource('dns', [
      [
        {
          name: { region: '', zone: '', subZone: '' },
          key: '{region=,zone=,sub_zone=}',
          weight: 1,
          endpoints: [
            {
              addresses: [parseAddress('10.0.3.1:80'), parseAddress('10.0.3.2:80')],
              weight: 1,
              healthStatus: 'UNKNOWN',
              hashKey: undefined,
              hostname: '',
            },
          ],
        },
      ],
    ]);
    const logical = xdsSimulation({ backoffMs: 100_000 });
    scriptAll(logical, ['10.0.3.1:80'], { failAfterMs: 1 });
    scriptAll(logical, ['10.0.3.2:80'], { connectAfterMs: 1 });
    const dnsCluster = xdsCluster('dns', {
      discovery: { kind: 'logical_dns', hostname: 'backend.example', port: 80 },
    });
    logical.update([], cds('dns'), withXdsConfig(xdsConfig({ dns: edsEntry(dnsCluster, dns) })));
    logical.advance(5);
    // A61: the resolved addresses are one endpoint; pick_first walks them (Happy Eyeballs) and connects the second.
    assert.deepEqual(new Set(picks(logical, 3)), new Set(['10.0.3.2:80']));
    logical.subchannel('10.0.3.2:80').setState('IDLE');
    logical.flush();
    assert.ok(logical.reresolutionRequests > 0, 'LOGICAL_DNS: the resolver is asked to resolve again');

    const eds = xdsSimulation({ backoffMs: 100_000 });
    scriptAll(eds, ['10.0.3.1:80', '10.0.3.2:80'], { connectAfterMs: 1 });
    eds.update(
      [],
      cds('c'),
      withXdsConfig(xdsConfig({ c: edsEntry(xdsCluster('c'), endpointResource('c', dns.priorities)) })),
    );
    eds.advance(5);
    eds.subchannel('10.0.3.1:80').setState('IDLE');
    assert.equal(eds.reresolutionRequests, 0, 'EDS: re-resolution requests are ignored');
  });

  test('A31 + A74: the whole tree — cluster manager over cds children, each call routed to its cluster', () => {
    const sim = xdsSimulation();
    scriptAll(sim, ['10.0.1.1:80', '10.0.2.1:80'], { connectAfterMs: 1 });
    const config = xdsConfig({
      one: edsEntry(xdsCluster('one'), endpointResource('one', [[locality('a', 1, ['10.0.1.1:80'])]])),
      two: edsEntry(xdsCluster('two'), endpointResource('two', [[locality('b', 1, ['10.0.2.1:80'])]])),
    });
    const tree = [
      {
        xds_cluster_manager_experimental: {
          children: {
            'cluster:one': { childPolicy: cds('one') },
            'cluster:two': { childPolicy: cds('two') },
          },
        },
      },
    ];
    assert.ok(sim.update([], tree, withXdsConfig(config)));
    sim.advance(1);
    const one = sim.pick({ callAttributes: forCluster('cluster:one') });
    const two = sim.pick({ callAttributes: forCluster('cluster:two') });
    assert.equal(one.type === 'complete' && one.address, '10.0.1.1:80');
    assert.equal(two.type === 'complete' && two.address, '10.0.2.1:80');
  });

  test('config errors name their JSON path', () => {
    const sim = xdsSimulation();
    assert.equal(sim.update([], [{ cds_experimental: {} }]), false);
    assert.equal(sim.lastConfigError?.path, '$[0].cds_experimental.cluster');
    assert.equal(sim.update([], [{ cds_experimental: { cluster: 'c', isDynamic: 'yes' } }]), false);
    assert.equal(sim.lastConfigError?.path, '$[0].cds_experimental.isDynamic');
  });
});

describe('cds_experimental with outlier detection (A50, A75 "Aggregate Cluster Changes")', () => {
  test('A75: a cluster with outlier_detection gets outlier_detection_experimental above its priorities', () => {
    const sim = xdsSimulation({ trace: true });
    scriptAll(sim, ['10.0.1.1:80', '10.0.1.2:80'], { connectAfterMs: 1 });
    const od = xdsCluster('c', {
      outlierDetection: {
        interval: '10s',
        baseEjectionTime: '30s',
        maxEjectionTime: '300s',
        maxEjectionPercent: 50,
        failurePercentageEjection: {
          threshold: 50,
          enforcementPercentage: 100,
          minimumHosts: 2,
          requestVolume: 10,
        },
      },
    });
    const eds = endpointResource('c', [[locality('a', 1, ['10.0.1.1:80', '10.0.1.2:80'])]]);
    assert.ok(sim.update([], cds('c'), withXdsConfig(xdsConfig({ c: edsEntry(od, eds) }))));
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    // Calls to 10.0.1.1 fail, calls to 10.0.1.2 succeed; after one interval the failing endpoint is ejected.
    for (let i = 0; i < 40; i++) {
      const result = sim.picker.pick({ metadata: { get: () => [] } });
      assert.equal(result.type, 'complete');
      if (result.type !== 'complete') continue;
      const failing = (result.subchannel as unknown as { key: string }).key === '10.0.1.1:80';
      result.onCallStarted?.();
      result.onCallEnded?.(
        failing ? { code: Code.UNAVAILABLE, details: 'down' } : { code: Code.OK, details: '' },
      );
    }
    sim.advance(10_000);
    assert.ok(sim.traces.some((t) => t.includes('outlier_detection: ejecting endpoint [10.0.1.1:80]')));
    assert.deepEqual(new Set(picks(sim, 6)), new Set(['10.0.1.2:80']));
  });
});
