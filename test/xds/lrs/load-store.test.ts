import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type BackendMetricReport, completeBackendMetricReport } from '../../../src/core/index.js';
import { VirtualClock } from '../../../src/sim/index.js';
import { decodeCluster, encodeCluster } from '../../../src/xds/index.js';
import { LoadStore } from '../../../src/xds/load-store.js';
import {
  A64_BACKEND_METRIC_PROPAGATION,
  NO_BACKEND_METRIC_PROPAGATION,
  parseBackendMetricPropagation,
  type XdsBackendMetricPropagation,
} from '../../../src/xds/resources/backend-metric-propagation.js';
import { parseCluster } from '../../../src/xds/resources/cluster.js';
import { edsCluster } from '../helpers.js';

const ZONE_A = { region: 'r', zone: 'a', subZone: 's' };

/** A64 "Aggregation"'s three reports: key1 = 1; key2 = 2, key3 = 4 ... as the gRFC lists them. */
const A64_REPORTS = [
  { namedMetrics: { key1: 1.0, key2: 2.0 } } as Partial<BackendMetricReport>,
  { namedMetrics: { key2: 3.0, key3: 4.0 } },
  {},
].map((fields) => ({ backendMetrics: completeBackendMetricReport(fields) }));

function aggregate(propagation: XdsBackendMetricPropagation, reports = A64_REPORTS) {
  const store = new LoadStore(new VirtualClock());
  const cluster = store.acquire('c', '');
  const counter = cluster.locality(ZONE_A, propagation);
  for (const details of reports) {
    counter.callStarted();
    counter.callEnded(true, details);
  }
  const [snapshot] = store.take(undefined);
  return snapshot!.localities[0]!;
}

const named = (l: ReturnType<typeof aggregate>) => l.namedMetrics.map((m) => [m.name, m.total, m.requests]);

describe('A64 / A85: ORCA per-call reports in LRS load_metric_stats', () => {
  test('A64 "Aggregation": values add up per key, each with its own count of requests (the gRFC example)', () => {
    assert.deepEqual(named(aggregate(A64_BACKEND_METRIC_PROPAGATION)), [
      ['key1', 1, 1],
      ['key2', 5, 2],
      ['key3', 4, 1],
    ]);
  });

  test('A85: named_metrics.* sends every key as named_metrics.<key>', () => {
    const propagation = parseBackendMetricPropagation(['named_metrics.*']);
    assert.deepEqual(named(aggregate(propagation)), [
      ['named_metrics.key1', 1, 1],
      ['named_metrics.key2', 5, 2],
      ['named_metrics.key3', 4, 1],
    ]);
  });

  test('A85: named_metrics.<key> sends only the keys listed; an unknown field name is ignored', () => {
    const propagation = parseBackendMetricPropagation([
      'named_metrics.key2',
      'rps_fractional',
      'no_such_field',
    ]);
    const locality = aggregate(propagation);
    assert.deepEqual(named(locality), [['named_metrics.key2', 5, 2]]);
    assert.equal(locality.cpuUtilization, undefined);
  });

  test('A85: lrs_report_endpoint_metrics unset sends nothing of ORCA (the request counts still go)', () => {
    const locality = aggregate(NO_BACKEND_METRIC_PROPAGATION);
    assert.deepEqual(named(locality), []);
    assert.equal(locality.succeeded, 3);
  });

  test('A85 "Populating LRS Protos": cpu, mem and application utilization go in their own fields, summed over the reports', () => {
    const reports = [
      { cpuUtilization: 0.5, memUtilization: 0.25, applicationUtilization: 0.75 },
      { cpuUtilization: 0.25, memUtilization: 0.5, applicationUtilization: 0.5 },
    ].map((fields) => ({ backendMetrics: completeBackendMetricReport(fields) }));
    const all = parseBackendMetricPropagation([
      'cpu_utilization',
      'mem_utilization',
      'application_utilization',
    ]);
    const locality = aggregate(all, reports);
    assert.deepEqual(locality.cpuUtilization, { requests: 2, total: 0.75 });
    assert.deepEqual(locality.memUtilization, { requests: 2, total: 0.75 });
    assert.deepEqual(locality.applicationUtilization, { requests: 2, total: 1.25 });
    const cpuOnly = aggregate(parseBackendMetricPropagation(['cpu_utilization']), reports);
    assert.equal(cpuOnly.memUtilization, undefined);
    assert.equal(cpuOnly.applicationUtilization, undefined);
  });

  test('A64: the aggregates restart after each report; a call without a report counts no metric', () => {
    const store = new LoadStore(new VirtualClock());
    const counter = store.acquire('c', '').locality(ZONE_A, A64_BACKEND_METRIC_PROPAGATION);
    counter.callStarted();
    counter.callEnded(false, A64_REPORTS[0]);
    assert.deepEqual(store.take(undefined)[0]!.localities[0]!.namedMetrics.length, 2);
    counter.callStarted();
    counter.callEnded(true, { backendMetrics: undefined });
    const second = store.take(undefined)[0]!.localities[0]!;
    assert.deepEqual(second.namedMetrics, []);
    assert.equal(second.succeeded, 1);
  });

  test('A85 "CDS Resource Validation": the Cluster field is parsed; GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION=false restores A64', () => {
    const cluster = decodeCluster(
      encodeCluster(
        edsCluster({
          lrsServer: { self: {} },
          lrsReportEndpointMetrics: ['named_metrics.foo', 'cpu_utilization'],
        }),
      ),
    );
    const parsed = parseCluster(cluster, { orcaLrsPropagation: true }).backendMetricPropagation!;
    assert.equal(parsed.cpuUtilization, true);
    assert.deepEqual([...parsed.namedMetricKeys], ['foo']);
    assert.equal(parsed.namedMetricPrefix, 'named_metrics.');
    const legacy = parseCluster(cluster, { orcaLrsPropagation: false }).backendMetricPropagation!;
    assert.equal(legacy, A64_BACKEND_METRIC_PROPAGATION);
  });

  test('two propagations of one locality make one LRS entry', () => {
    const store = new LoadStore(new VirtualClock());
    const cluster = store.acquire('c', '');
    for (const propagation of [
      A64_BACKEND_METRIC_PROPAGATION,
      parseBackendMetricPropagation(['named_metrics.*']),
    ]) {
      const counter = cluster.locality(ZONE_A, propagation);
      counter.callStarted();
      counter.callEnded(true, A64_REPORTS[0]);
    }
    const [locality, ...others] = store.take(undefined)[0]!.localities;
    assert.equal(others.length, 0);
    assert.equal(locality?.issued, 2);
    assert.deepEqual(named(locality!), [
      ['key1', 1, 1],
      ['key2', 2, 1],
      ['named_metrics.key1', 1, 1],
      ['named_metrics.key2', 2, 1],
    ]);
  });
});
