import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type Attributes,
  type ChannelArgs,
  type Clock,
  Code,
  type CompletePick,
  OK_STATUS,
  type PickResult,
} from '../../src/core/index.js';
import type { Simulation } from '../../src/sim/index.js';
import { acquireClusterCallStats, releaseClusterCallStats } from '../../src/xds/index.js';
import type { XdsUpstreamTls } from '../../src/xds/resources/tls-context.js';
import {
  ClusterTransportSecurity,
  XDS_TRANSPORT_SECURITY,
  XDS_TRANSPORT_SECURITY_ARG,
} from '../../src/xds/transport-security.js';
import {
  edsEntry,
  endpointResource,
  locality,
  withXdsConfig,
  xdsCluster,
  xdsConfig,
  xdsSimulation,
} from './xds-config-fixtures.js';

function implConfig(clusterName: string): unknown {
  return [{ xds_cluster_impl_experimental: { clusterName, childPolicy: [{ round_robin: {} }] } }];
}

const BACKENDS = ['10.0.0.1:80', '10.0.0.2:80'];

function started(sim: Simulation, n: number): CompletePick[] {
  const calls: CompletePick[] = [];
  for (let i = 0; i < n; i++) {
    const result = sim.picker.pick({ metadata: { get: () => [] } }) as PickResult;
    assert.equal(result.type, 'complete');
    const pick = result as CompletePick;
    pick.onCallStarted?.();
    calls.push(pick);
  }
  return calls;
}

function connected(clusterName: string, attributes: ChannelArgs, seed = 1): Simulation {
  const sim = xdsSimulation({ seed });
  for (const b of BACKENDS) sim.script(b, { connectAfterMs: 1 });
  assert.ok(sim.update(BACKENDS, implConfig(clusterName), attributes));
  sim.advance(1);
  assert.equal(sim.state, 'READY');
  return sim;
}

describe('xds_cluster_impl_experimental (A37 "xds_cluster_impl_experimental LB Policy", A74)', () => {
  test('A37: EDS drop_overloads drop that share of calls with the category in the status, even wait-for-ready ones', () => {
    const cluster = xdsCluster('c1');
    const eds = endpointResource(
      'c1',
      [[locality('a', 1, BACKENDS)]],
      [{ category: 'throttle', perMillion: 200_000 }],
    );
    const sim = connected('c1', withXdsConfig(xdsConfig({ c1: edsEntry(cluster, eds) })));
    const stats = acquireClusterCallStats('c1', 'c1');
    const before = stats.drops.get('throttle') ?? 0;
    let dropped = 0;
    const n = 20_000;
    for (let i = 0; i < n; i++) {
      const p = sim.pick();
      if (p.type === 'drop') {
        dropped++;
        assert.equal(p.status.code, Code.UNAVAILABLE);
        assert.match(p.status.details, /EDS-configured drop: throttle/);
        assert.deepEqual(
          p.dropReason,
          { category: 'throttle' },
          'load reports and timelines read the category',
        );
      } else assert.equal(p.type, 'complete');
    }
    assert.ok(Math.abs(dropped / n - 0.2) < 0.015, `dropped ${dropped} of ${n}`);
    assert.equal(
      (stats.drops.get('throttle') ?? 0) - before,
      dropped,
      'each drop is recorded under its category',
    );
    releaseClusterCallStats(stats);
  });

  test('A37: circuit breaking — a call over max_requests in flight is dropped UNAVAILABLE until one ends', () => {
    const cluster = xdsCluster('c2', { maxRequests: 3 });
    const eds = endpointResource('c2', [[locality('a', 1, BACKENDS)]]);
    const sim = connected('c2', withXdsConfig(xdsConfig({ c2: edsEntry(cluster, eds) })));
    const calls = started(sim, 3);
    const over = sim.pick();
    assert.equal(over.type, 'drop');
    assert.equal(over.type === 'drop' && over.status.code, Code.UNAVAILABLE);
    assert.match(over.type === 'drop' ? over.status.details : '', /circuit breaking/);
    assert.deepEqual(over.type === 'drop' && over.dropReason, { circuitBreaking: true });
    calls[0]!.onCallEnded?.(OK_STATUS);
    assert.equal(sim.pick().type, 'complete');
  });

  test('A37: circuit breaking counts a call from its pick: a burst picked in one turn before any call starts (grpc-js starts calls after their call credentials) passes only max_requests', () => {
    const cluster = xdsCluster('c5', { maxRequests: 3 });
    const eds = endpointResource('c5', [[locality('a', 1, BACKENDS)]]);
    const sim = connected('c5', withXdsConfig(xdsConfig({ c5: edsEntry(cluster, eds) })));
    const burst = Array.from({ length: 5 }, () => sim.picker.pick({ metadata: { get: () => [] } }));
    assert.deepEqual(
      burst.map((p) => p.type),
      ['complete', 'complete', 'complete', 'drop', 'drop'],
    );
    // The three calls start later in the turn; they stay counted once the turn's reservations expire.
    for (const p of burst.slice(0, 3)) (p as CompletePick).onCallStarted?.();
    sim.flush();
    assert.equal(sim.pick().type, 'drop');
    (burst[0] as CompletePick).onCallEnded?.(OK_STATUS);
    assert.equal(sim.pick().type, 'complete');
  });

  test('A37: a picked call that never starts (re-picked, cancelled) frees its place when the turn ends', () => {
    const cluster = xdsCluster('c6', { maxRequests: 2 });
    const eds = endpointResource('c6', [[locality('a', 1, BACKENDS)]]);
    const sim = connected('c6', withXdsConfig(xdsConfig({ c6: edsEntry(cluster, eds) })));
    const pick = () => sim.picker.pick({ metadata: { get: () => [] } }).type;
    assert.deepEqual([pick(), pick(), pick()], ['complete', 'complete', 'drop']);
    sim.flush();
    assert.deepEqual([pick(), pick(), pick()], ['complete', 'complete', 'drop']);
  });

  test('A37: a lone pick whose call never starts still counts during the turn of the next pick, then frees its place', () => {
    const cluster = xdsCluster('c7', { maxRequests: 1 });
    const eds = endpointResource('c7', [[locality('a', 1, BACKENDS)]]);
    const sim = connected('c7', withXdsConfig(xdsConfig({ c7: edsEntry(cluster, eds) })));
    const pick = () => sim.picker.pick({ metadata: { get: () => [] } }).type;
    assert.equal(pick(), 'complete');
    sim.flush();
    assert.equal(
      pick(),
      'drop',
      'the next pick finds the reservation open, counts it, and sets the turn timer',
    );
    sim.flush();
    assert.equal(pick(), 'complete');
  });

  test('A37: calls one at a time at max_requests 1, each started before the next pick: at the limit while one is in flight, under it once it ended, and no timer is set for any of them', () => {
    let timers = 0;
    const clock: Clock = {
      now: () => 0,
      setTimer: () => {
        timers++;
        return () => {};
      },
    };
    const stats = acquireClusterCallStats('c8', 'c8');
    for (let i = 0; i < 1_000; i++) {
      assert.equal(stats.outstandingForPick(clock), 0, 'under the limit of 1: the call is picked');
      stats.reserve();
      assert.equal(stats.outstanding, 1, 'picked, not started: at the limit');
      stats.callStarted();
      assert.equal(stats.outstanding, 1, 'in flight: at the limit');
      stats.callEnded();
    }
    assert.equal(timers, 0);
    stats.reserve();
    assert.equal(stats.outstandingForPick(clock), 1);
    assert.equal(timers, 1, 'a pick that finds a reservation still open sets the turn timer');
    releaseClusterCallStats(stats);
  });

  test('A37 "Use Global Circuit Breaking Atomic": instances for the same cluster share one in-flight count', () => {
    const cluster = xdsCluster('c3', { maxRequests: 2 });
    const eds = endpointResource('c3', [[locality('a', 1, BACKENDS)]]);
    const attributes = withXdsConfig(xdsConfig({ c3: edsEntry(cluster, eds) }));
    const one = connected('c3', attributes);
    const two = connected('c3', attributes);
    started(one, 1);
    started(two, 1);
    assert.equal(one.pick().type, 'drop');
    assert.equal(two.pick().type, 'drop');
  });

  test('A74: a new XdsConfig changes drops and limits at once, with the same child and connections', () => {
    const cluster = xdsCluster('c4');
    const eds = endpointResource('c4', [[locality('a', 1, BACKENDS)]]);
    const sim = connected('c4', withXdsConfig(xdsConfig({ c4: edsEntry(cluster, eds) })));
    const created = sim.subchannelsCreated;
    const dropAll = endpointResource('c4', eds.priorities, [{ category: 'all', perMillion: 1_000_000 }]);
    assert.ok(
      sim.update(BACKENDS, implConfig('c4'), withXdsConfig(xdsConfig({ c4: edsEntry(cluster, dropAll) }))),
    );
    assert.equal(sim.pick().type, 'drop');
    assert.equal(sim.subchannelsCreated, created);
  });

  test('A74: the config keeps only clusterName and childPolicy, validated with JSON paths', () => {
    const sim = xdsSimulation();
    assert.equal(
      sim.update(BACKENDS, [{ xds_cluster_impl_experimental: { childPolicy: [{ round_robin: {} }] } }]),
      false,
    );
    assert.equal(sim.lastConfigError?.path, '$[0].xds_cluster_impl_experimental.clusterName');
    assert.equal(
      sim.update(BACKENDS, [{ xds_cluster_impl_experimental: { clusterName: 'c', childPolicy: [] } }]),
      false,
    );
    assert.equal(sim.lastConfigError?.path, '$[0].xds_cluster_impl_experimental.childPolicy');
  });
});

describe('xds_cluster_impl and the cluster transport security (A29)', () => {
  const tlsConfig: XdsUpstreamTls = {
    caCertificates: { kind: 'provider', provider: { instanceName: 'default', certificateName: 'ROOTCA' } },
    identityCertificate: { instanceName: 'default', certificateName: 'default' },
    matchSubjectAltNames: [],
  };

  function createdWith(upstreamTls: XdsUpstreamTls | undefined): Attributes | undefined {
    const cluster = xdsCluster('c-tls');
    const eds = endpointResource('c-tls', [[locality('a', 1, BACKENDS)]]);
    const attributes = {
      ...withXdsConfig(xdsConfig({ 'c-tls': edsEntry(cluster, eds) })),
      [XDS_TRANSPORT_SECURITY_ARG]: new ClusterTransportSecurity('c-tls', upstreamTls),
    };
    const sim = connected('c-tls', attributes);
    return sim.subchannelAttributes(BACKENDS[0]!);
  }

  test('A29: a cluster with an UpstreamTlsContext tags the subchannels it creates with its security object', () => {
    const tagged = createdWith(tlsConfig)?.get(XDS_TRANSPORT_SECURITY);
    assert.ok(tagged instanceof ClusterTransportSecurity);
    assert.equal(tagged.upstreamTls, tlsConfig);
  });

  test('a plaintext cluster leaves its subchannels untagged (the fallback credentials connect them; no object per subchannel)', () => {
    const attributes = createdWith(undefined);
    assert.ok(attributes !== undefined, 'a subchannel was created');
    assert.equal(attributes.get(XDS_TRANSPORT_SECURITY), undefined);
  });
});
