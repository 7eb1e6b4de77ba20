import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import {
  type BackendMetricReport,
  type CompletePick,
  ConfigError,
  completeBackendMetricReport,
  OK_STATUS,
  type PickArgs,
} from '../../src/core/index.js';
import {
  parseWeightedRoundRobinConfig,
  resolveUtilizationMetric,
  utilizationOf,
  WRR_CUSTOM_METRICS_ENV,
} from '../../src/policies/index.js';
import { Simulation, type SubchannelHandle } from '../../src/sim/index.js';
import { connectAll, tally } from '../support/sim-picks.js';

const saved = process.env[WRR_CUSTOM_METRICS_ENV];
afterEach(() => {
  if (saved === undefined) delete process.env[WRR_CUSTOM_METRICS_ENV];
  else process.env[WRR_CUSTOM_METRICS_ENV] = saved;
});
const on = () => {
  process.env[WRR_CUSTOM_METRICS_ENV] = 'true';
};

const util = (names: string[], fields: Partial<BackendMetricReport>) =>
  utilizationOf(completeBackendMetricReport(fields), names.map(resolveUtilizationMetric));

describe('A114 utilization from metric_names_for_computing_utilization', () => {
  test('the largest of the named metrics wins, over application_utilization and cpu_utilization', () => {
    const report = {
      applicationUtilization: 0.9,
      cpuUtilization: 0.95,
      memUtilization: 0.3,
      namedMetrics: { foo: 0.4, bar: 0.7 },
      utilization: { gpu: 0.5 },
    };
    assert.equal(util(['named_metrics.foo', 'named_metrics.bar', 'mem_utilization'], report), 0.7);
    assert.equal(util(['mem_utilization', 'utilization.gpu'], report), 0.5);
    assert.equal(util(['cpu_utilization', 'named_metrics.foo'], report), 0.95);
    assert.equal(util(['application_utilization'], report), 0.9);
  });

  test('none of the named metrics present: A58 (application_utilization, else cpu_utilization)', () => {
    assert.equal(util(['named_metrics.absent'], { applicationUtilization: 0.6, cpuUtilization: 0.2 }), 0.6);
    assert.equal(util(['named_metrics.absent'], { cpuUtilization: 0.2 }), 0.2);
    assert.equal(util([], { applicationUtilization: 0.6, cpuUtilization: 0.2, memUtilization: 0.9 }), 0.6);
  });

  test('0, negative and NaN values count as missing; the smallest positive value counts', () => {
    const fields = { cpuUtilization: 0.2, namedMetrics: { zero: 0, neg: -0.5, nan: Number.NaN, tiny: 1e-9 } };
    assert.equal(util(['named_metrics.zero', 'named_metrics.neg', 'named_metrics.nan'], fields), 0.2);
    assert.equal(util(['named_metrics.nan', 'named_metrics.tiny'], fields), 1e-9);
    // NaN first or last: the result does not depend on the order.
    assert.equal(util(['named_metrics.tiny', 'named_metrics.nan'], fields), 1e-9);
  });

  test('the first period splits map and key; unsupported names and map names alone find nothing', () => {
    const fields = {
      cpuUtilization: 0.1,
      rpsFractional: 50,
      namedMetrics: { 'foo.bar': 0.8, foo: 0.3 },
      requestCost: { db: 0.9 },
    };
    assert.equal(util(['named_metrics.foo.bar'], fields), 0.8);
    assert.deepEqual(resolveUtilizationMetric('named_metrics.foo.bar'), {
      map: 'namedMetrics',
      key: 'foo.bar',
    });
    // request_cost is not among A114's supported maps, nor rps_fractional among its fields.
    assert.equal(
      util(['request_cost.db', 'rps_fractional', 'named_metrics', 'cpu_utilization.x'], fields),
      0.1,
    );
    // An inherited property name is not a key of the map.
    assert.equal(util(['named_metrics.constructor', 'utilization.toString'], fields), 0.1);
  });
});

describe('A114 config: metricNamesForComputingUtilization (GRPC_EXPERIMENTAL_WRR_CUSTOM_METRICS)', () => {
  test('switch on: JSON and proto field names; each name resolved', () => {
    on();
    const a = parseWeightedRoundRobinConfig({ metricNamesForComputingUtilization: ['named_metrics.q'] }, '$');
    assert.deepEqual(a.utilizationMetrics, [{ map: 'namedMetrics', key: 'q' }]);
    const b = parseWeightedRoundRobinConfig(
      { metric_names_for_computing_utilization: ['mem_utilization'] },
      '$',
    );
    assert.deepEqual(b.utilizationMetrics, [{ field: 'memUtilization' }]);
    assert.deepEqual(parseWeightedRoundRobinConfig({}, '$').utilizationMetrics, []);
  });

  test('switch on: a value that is not a list of strings is rejected with its path', () => {
    on();
    assert.throws(
      () => parseWeightedRoundRobinConfig({ metricNamesForComputingUtilization: 'named_metrics.q' }, '$.wrr'),
      (e: unknown) => e instanceof ConfigError && e.path === '$.wrr.metricNamesForComputingUtilization',
    );
    assert.throws(
      () =>
        parseWeightedRoundRobinConfig(
          { metricNamesForComputingUtilization: ['cpu_utilization', 7] },
          '$.wrr',
        ),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.path === '$.wrr.metricNamesForComputingUtilization[1]' &&
        /string/.test(e.message),
    );
  });

  test('switch unset or not "true": the field is ignored (A114: default false)', () => {
    for (const value of [undefined, 'false', 'yes']) {
      if (value === undefined) delete process.env[WRR_CUSTOM_METRICS_ENV];
      else process.env[WRR_CUSTOM_METRICS_ENV] = value;
      const c = parseWeightedRoundRobinConfig(
        { metricNamesForComputingUtilization: ['named_metrics.q', 7] },
        '$',
      );
      assert.deepEqual(c.utilizationMetrics, [], String(value));
    }
  });
});

const ARGS: PickArgs = { metadata: { get: () => [] } };
const [A, B, C] = ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80'] as const;

/** `n` calls, each ending with its backend's report: equal qps and cpu, the named metric `queue` differing. */
function calls(sim: Simulation, n: number): Record<string, number> {
  const queue: Record<string, number> = { [A]: 0.2, [B]: 0.4, [C]: 0.8 };
  const seen: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = sim.picker.pick(ARGS) as CompletePick;
    const key = (r.subchannel as SubchannelHandle).key;
    seen.push(key);
    r.onCallStarted?.();
    const report = completeBackendMetricReport({
      rpsFractional: 100,
      cpuUtilization: 0.5,
      namedMetrics: { queue: queue[key]! },
    });
    r.onCallEnded?.(OK_STATUS, { backendMetrics: report });
  }
  return tally(seen);
}

function shares(metricNames: string[] | undefined): number[] {
  const config = [
    {
      weighted_round_robin: {
        blackoutPeriod: '0s',
        weightUpdatePeriod: '1s',
        ...(metricNames ? { metricNamesForComputingUtilization: metricNames } : {}),
      },
    },
  ];
  const sim = connectAll(new Simulation(), [A, B, C], config);
  calls(sim, 300);
  sim.advance(1000);
  const counts = calls(sim, 7000);
  return [A, B, C].map((k) => (counts[k] ?? 0) / 7000);
}

describe('A114 in the simulator: weights follow the named metric', () => {
  test('named_metrics.queue 0.2 / 0.4 / 0.8 at equal qps and cpu: shares 4/7, 2/7, 1/7', () => {
    on();
    const got = shares(['named_metrics.queue']);
    for (const [i, want] of [4 / 7, 2 / 7, 1 / 7].entries())
      assert.ok(Math.abs(got[i]! - want) < 0.02, `${got}`);
  });

  test('without the name, or with the switch off: cpu_utilization (equal) gives equal shares', () => {
    on();
    for (const got of [shares(undefined), shares(['named_metrics.other'])])
      for (const s of got) assert.ok(Math.abs(s - 1 / 3) < 0.02, `${got}`);
    delete process.env[WRR_CUSTOM_METRICS_ENV];
    for (const s of shares(['named_metrics.queue'])) assert.ok(Math.abs(s - 1 / 3) < 0.02);
  });
});
