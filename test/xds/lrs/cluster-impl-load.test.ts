import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type CallEndDetails,
  Code,
  type CompletePick,
  completeBackendMetricReport,
  OK_STATUS,
  type PickResult,
} from '../../../src/core/index.js';
import type { Simulation } from '../../../src/sim/index.js';
import { LoadStore, XDS_LOAD_REPORTING_ARG, type XdsLoadReporting } from '../../../src/xds/load-store.js';
import { parseBackendMetricPropagation } from '../../../src/xds/resources/backend-metric-propagation.js';
import type { XdsCluster, XdsEndpointResource } from '../../../src/xds/resources/types.js';
import {
  edsEntry,
  endpointResource,
  locality,
  withXdsConfig,
  xdsCluster,
  xdsConfig,
  xdsSimulation,
} from '../xds-config-fixtures.js';

const cds = (cluster: string): unknown => [{ cds_experimental: { cluster } }];
const A = '10.0.1.1:80';
const B = '10.0.2.1:80';

/** A channel with cluster c (zones a and b, one endpoint each) whose load goes to an in-memory store. */
function channel(cluster: Partial<XdsCluster>, drops: XdsEndpointResource['drops'] = []) {
  const sim = xdsSimulation({ seed: 3 });
  for (const b of [A, B]) sim.script(b, { connectAfterMs: 1 });
  const store = new LoadStore(sim.clock);
  let acquired = 0;
  const reporting: XdsLoadReporting = {
    acquireClusterLoad: (c, eds) => {
      acquired++;
      return store.acquire(c, eds);
    },
    releaseClusterLoad: (s) => {
      acquired--;
      store.release(s);
    },
  };
  const eds = endpointResource('c', [[locality('a', 1, [A]), locality('b', 1, [B])]], drops);
  const update = (fields: Partial<XdsCluster>) => {
    const config = xdsConfig({ c: edsEntry(xdsCluster('c', { lrsLoadReporting: true, ...fields }), eds) });
    assert.ok(sim.update([], cds('c'), { ...withXdsConfig(config), [XDS_LOAD_REPORTING_ARG]: reporting }));
  };
  update(cluster);
  sim.advance(1);
  return { sim, store, held: () => acquired, update };
}

function pick(sim: Simulation): PickResult {
  return sim.picker.pick({ metadata: { get: () => [] } });
}

/** The address a complete pick went to. */
function addressOf(p: CompletePick): string {
  return (p.subchannel as unknown as { key: string }).key;
}

describe('xds_cluster_impl counts load per locality (A27 LRS, A64 / A85)', () => {
  test('each call counts in the locality of the endpoint it was picked for: issued, successful, error, in progress', () => {
    const { sim, store } = channel({});
    const expected = new Map<string, { issued: number; ok: number; failed: number; running: number }>([
      [A, { issued: 0, ok: 0, failed: 0, running: 0 }],
      [B, { issued: 0, ok: 0, failed: 0, running: 0 }],
    ]);
    const running: CompletePick[] = [];
    for (let i = 0; i < 40; i++) {
      const p = pick(sim);
      assert.equal(p.type, 'complete');
      const call = p as CompletePick;
      const e = expected.get(addressOf(call))!;
      call.onCallStarted?.();
      e.issued++;
      if (i % 5 === 0) {
        running.push(call);
        e.running++;
      } else if (i % 3 === 0) {
        call.onCallEnded?.({ code: Code.UNAVAILABLE, details: 'backend says no' });
        e.failed++;
      } else {
        call.onCallEnded?.(OK_STATUS);
        e.ok++;
      }
    }
    const [snapshot] = store.take(undefined);
    assert.equal(snapshot?.cluster, 'c');
    // eds_service_name unset (the fixture's EDS name is the cluster name): reported empty, as gRPC does.
    assert.equal(snapshot?.edsServiceName, '');
    const byZone = new Map(snapshot!.localities.map((l) => [l.locality.zone, l]));
    for (const [address, zone] of [
      [A, 'a'],
      [B, 'b'],
    ] as const) {
      const e = expected.get(address)!;
      const l = byZone.get(zone)!;
      assert.deepEqual(
        [l.issued, l.succeeded, l.errored, l.inProgress],
        [e.issued, e.ok, e.failed, e.running],
      );
      assert.ok(e.issued > 10, `zone ${zone} got calls`);
    }
    // The running calls end: in progress back to 0, counted as successes of the next interval.
    for (const call of running) call.onCallEnded?.(OK_STATUS);
    const next = store.take(undefined)[0]!.localities;
    assert.deepEqual(
      next.map((l) => l.inProgress),
      [0, 0],
    );
    assert.equal(
      next.reduce((sum, l) => sum + l.succeeded, 0),
      running.length,
    );
  });

  test("A85: the ORCA report of each call goes to its locality as the cluster's lrs_report_endpoint_metrics says", () => {
    const propagation = parseBackendMetricPropagation(['named_metrics.*', 'cpu_utilization']);
    const { sim, store } = channel({ backendMetricPropagation: propagation });
    const details: CallEndDetails = {
      backendMetrics: completeBackendMetricReport({ cpuUtilization: 0.5, namedMetrics: { queue: 3 } }),
    };
    for (let i = 0; i < 10; i++) {
      const call = pick(sim) as CompletePick;
      call.onCallStarted?.();
      call.onCallEnded?.(OK_STATUS, details);
    }
    const localities = store.take(undefined)[0]!.localities;
    assert.equal(localities.length, 2);
    assert.equal(
      localities.reduce((sum, l) => sum + l.issued, 0),
      10,
    );
    for (const l of localities) {
      assert.deepEqual(l.cpuUtilization, { requests: l.issued, total: 0.5 * l.issued });
      assert.deepEqual(l.namedMetrics, [
        { name: 'named_metrics.queue', requests: l.issued, total: 3 * l.issued },
      ]);
    }
  });

  test('EDS drop_overloads count by category; circuit-breaking drops count only in the total', () => {
    const { sim, store } = channel({ maxRequests: 1 }, [{ category: 'lb', perMillion: 500_000 }]);
    let dropped = 0;
    let started: CompletePick | undefined;
    let overLimit = 0;
    for (let i = 0; i < 200; i++) {
      const p = pick(sim);
      if (p.type === 'drop' && p.dropReason && 'category' in p.dropReason) dropped++;
      else if (p.type === 'drop') overLimit++;
      else if (p.type === 'complete' && started === undefined) {
        started = p;
        p.onCallStarted?.();
      }
    }
    assert.ok(dropped > 50 && overLimit > 50, `${dropped} by category, ${overLimit} over the limit`);
    const [snapshot] = store.take(undefined);
    assert.deepEqual(snapshot?.drops, [{ category: 'lb', count: dropped }]);
    assert.equal(snapshot?.totalDrops, dropped + overLimit);
    assert.equal(
      snapshot?.localities.reduce((sum, l) => sum + l.inProgress, 0),
      1,
    );
  });

  test('a new CDS version with equal lrs_report_endpoint_metrics keeps the hooked picks; a changed one rebuilds them', () => {
    const { sim, store, update } = channel({
      backendMetricPropagation: parseBackendMetricPropagation(['named_metrics.*']),
    });
    const results = () => new Set(Array.from({ length: 6 }, () => pick(sim)));
    const before = results();
    update({ backendMetricPropagation: parseBackendMetricPropagation(['named_metrics.*']) });
    assert.deepEqual(results(), before, 'the same hooked results: nothing rebuilt');
    update({ backendMetricPropagation: parseBackendMetricPropagation(['cpu_utilization']) });
    const after = results();
    assert.equal([...after].filter((r) => before.has(r)).length, 0, 'new hooks, with the new counters');
    const call = pick(sim) as CompletePick;
    call.onCallStarted?.();
    call.onCallEnded?.(OK_STATUS, { backendMetrics: completeBackendMetricReport({ cpuUtilization: 0.25 }) });
    const [snapshot] = store.take(undefined);
    assert.deepEqual(
      snapshot?.localities.map((l) => [l.issued, l.cpuUtilization]),
      [[1, { requests: 1, total: 0.25 }]],
    );
  });

  test('a cluster without lrs_server acquires no store; removing the tree releases the one it held', () => {
    const off = channel({ lrsLoadReporting: false });
    assert.equal(off.held(), 0);
    const call = pick(off.sim) as CompletePick;
    call.onCallStarted?.();
    call.onCallEnded?.(OK_STATUS);
    assert.deepEqual(off.store.take(undefined), []);
    const on = channel({});
    assert.equal(on.held(), 1);
    on.sim.destroy();
    assert.equal(on.held(), 0);
  });
});
