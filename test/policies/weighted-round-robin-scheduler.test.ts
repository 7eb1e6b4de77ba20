import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type BackendMetricReport, ConfigError } from '../../src/core/index.js';
import {
  parseWeightedRoundRobinConfig,
  WEIGHTED_ROUND_ROBIN_DEFAULTS,
} from '../../src/policies/weighted-round-robin/config.js';
import { EndpointWeight } from '../../src/policies/weighted-round-robin/endpoint-weight.js';
import { StaticStrideScheduler } from '../../src/policies/weighted-round-robin/static-stride-scheduler.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';

function shares(scheduler: StaticStrideScheduler, picks: number): number[] {
  const counts = new Array(scheduler.size).fill(0);
  for (let i = 0; i < picks; i++) counts[scheduler.pick()]++;
  return counts.map((c) => c / picks);
}

function report(fields: Partial<BackendMetricReport>): BackendMetricReport {
  return {
    cpuUtilization: 0,
    memUtilization: 0,
    applicationUtilization: 0,
    rpsFractional: 0,
    eps: 0,
    utilization: {},
    requestCost: {},
    namedMetrics: {},
    ...fields,
  };
}

describe('weighted_round_robin config (A58 "LB Policy Config and Parameters")', () => {
  test('defaults', () => {
    // A58's proto comments: OOB reporting off, oob_reporting_period 10 s, blackout_period 10 s,
    // weight_expiration_period 3 min, weight_update_period 1 s, error_utilization_penalty 1.0.
    assert.deepEqual(parseWeightedRoundRobinConfig({}, '$'), {
      enableOobLoadReport: false,
      oobReportingPeriodMs: 10_000,
      blackoutPeriodMs: 10_000,
      weightExpirationPeriodMs: 180_000,
      weightUpdatePeriodMs: 1_000,
      errorUtilizationPenalty: 1,
      utilizationMetrics: [],
    });
  });
  test('durations, the 100 ms floor of weight_update_period, proto names', () => {
    const c = parseWeightedRoundRobinConfig(
      {
        blackout_period: '1s',
        weightExpirationPeriod: '60s',
        weightUpdatePeriod: '0.01s',
        errorUtilizationPenalty: 2,
      },
      '$',
    );
    assert.equal(c.blackoutPeriodMs, 1000);
    assert.equal(c.weightExpirationPeriodMs, 60_000);
    assert.equal(c.weightUpdatePeriodMs, 100);
    assert.equal(c.errorUtilizationPenalty, 2);
  });
  test('a negative error_utilization_penalty is rejected with its path', () => {
    assert.throws(
      () => parseWeightedRoundRobinConfig({ errorUtilizationPenalty: -1 }, '$.wrr'),
      (e: unknown) => e instanceof ConfigError && e.path === '$.wrr.errorUtilizationPenalty',
    );
    assert.throws(
      () => parseWeightedRoundRobinConfig({ blackoutPeriod: 'soon' }, '$'),
      (e: unknown) => e instanceof ConfigError && e.path === '$.blackoutPeriod',
    );
  });
});

describe('static stride scheduler (the scheduler gRPC uses for A58)', () => {
  test('shares follow the weights', () => {
    const s = StaticStrideScheduler.build([5, 2.5, 1.25], 0)!;
    const got = shares(s, 70_000);
    const want = [5 / 8.75, 2.5 / 8.75, 1.25 / 8.75];
    for (let i = 0; i < 3; i++) assert.ok(Math.abs(got[i]! - want[i]!) < 0.005, `${got} vs ${want}`);
  });
  test('unknown (0) weights take the mean of the known ones', () => {
    const s = StaticStrideScheduler.build([1, 3, 0], 0)!;
    assert.equal(s.scaledWeight(2), Math.round((65535 / 3) * 2));
    const got = shares(s, 60_000);
    assert.ok(Math.abs(got[2]! - 1 / 3) < 0.01, String(got));
  });
  // A58 describes an EDF queue and states no bounds; the 10 × mean cap and the 1 % floor are those of the static
  // stride scheduler gRPC ships in its place (C-core and Go: max ratio 10, min ratio 0.01 of the mean of the
  // known weights). Scaled weights are out of 65,535, the largest (capped) weight scaling to 65,535.
  const ones = (n: number) => new Array<number>(n).fill(1);

  test('a weight just above 10 × the mean is capped there', () => {
    // 19.2 and nineteen 1s: mean 38.2 / 20 = 1.91, cap 19.1 < 19.2. The scale is 65,535 / 19.1, so a 1 is
    // 3,431 (65,535 / 19.2 = 3,413 without the cap).
    const s = StaticStrideScheduler.build([19.2, ...ones(19)], 0)!;
    assert.equal(s.scaledWeight(0), 65535);
    assert.equal(s.scaledWeight(1), 3431);
  });
  test('a weight just below 10 × the mean is not capped', () => {
    // 18.8 and nineteen 1s: mean 37.8 / 20 = 1.89, cap 18.9 > 18.8. The scale is 65,535 / 18.8: a 1 is 3,486.
    const s = StaticStrideScheduler.build([18.8, ...ones(19)], 0)!;
    assert.equal(s.scaledWeight(0), 65535);
    assert.equal(s.scaledWeight(1), 3486);
  });
  test('a weight just below 1 % of the mean is raised to it', () => {
    // 1, 1, 0.0066: mean 2.0066 / 3 = 0.66887, scaled 43,834; 1 % of it is 438. 0.0066 (< 0.0066887) alone
    // would scale to 433.
    const s = StaticStrideScheduler.build([1, 1, 0.0066], 0)!;
    assert.equal(s.scaledWeight(0), 65535);
    assert.equal(s.scaledWeight(2), 438);
  });
  test('a weight just above 1 % of the mean keeps its own', () => {
    // 1, 1, 0.0068: mean 0.66893, 1 % of it 0.0066893 < 0.0068: it scales to 65,535 × 0.0068 = 446.
    const s = StaticStrideScheduler.build([1, 1, 0.0068], 0)!;
    assert.equal(s.scaledWeight(2), 446);
  });
  test('no scheduler (round_robin) for fewer than two endpoints or no known weight', () => {
    assert.equal(StaticStrideScheduler.build([], 0), null);
    assert.equal(StaticStrideScheduler.build([3], 0), null);
    assert.equal(StaticStrideScheduler.build([0, 0, 0], 0), null);
  });
  test('the sequence wraps as a uint32 without losing the shares', () => {
    const s = StaticStrideScheduler.build([2, 1], 0xffff_fff0)!;
    const got = shares(s, 30_000);
    assert.ok(Math.abs(got[0]! - 2 / 3) < 0.01, String(got));
  });
});

describe('endpoint weight (A58 "Subchannel Weights")', () => {
  const config = {
    ...WEIGHTED_ROUND_ROBIN_DEFAULTS,
    blackoutPeriodMs: 10_000,
    weightExpirationPeriodMs: 180_000,
  };

  test('weight = qps / (utilization + eps/qps × penalty); application_utilization wins over cpu', () => {
    const clock = new VirtualClock();
    const w = new EndpointWeight(clock, { ...config, blackoutPeriodMs: 0 });
    w.onReport(report({ rpsFractional: 100, cpuUtilization: 0.5 }));
    assert.equal(w.current(clock.now()), 200);
    w.onReport(report({ rpsFractional: 100, cpuUtilization: 0.5, applicationUtilization: 0.25 }));
    assert.equal(w.current(clock.now()), 400);
    w.onReport(report({ rpsFractional: 100, cpuUtilization: 0.5, eps: 50 }));
    assert.equal(w.current(clock.now()), 100); // 100 / (0.5 + 0.5 × 1)
  });

  test('a report without utilization or qps changes nothing', () => {
    const clock = new VirtualClock();
    const w = new EndpointWeight(clock, { ...config, blackoutPeriodMs: 0 });
    w.onReport(report({ rpsFractional: 100, cpuUtilization: 0.5 }));
    w.onReport(report({ rpsFractional: 0, cpuUtilization: 0.9 }));
    w.onReport(report({ rpsFractional: 10 }));
    assert.equal(w.current(clock.now()), 200);
  });

  test('blackout_period: the weight is used only after reports have come for that long', () => {
    const clock = new VirtualClock();
    const w = new EndpointWeight(clock, config);
    w.onReport(report({ rpsFractional: 10, cpuUtilization: 0.5 }));
    clock.advance(9_999);
    w.onReport(report({ rpsFractional: 10, cpuUtilization: 0.5 }));
    assert.equal(w.current(clock.now()), 0);
    clock.advance(1);
    assert.equal(w.current(clock.now()), 20);
    // A new connection (the child turned READY again) starts a new blackout period.
    w.onReady();
    w.onReport(report({ rpsFractional: 10, cpuUtilization: 0.5 }));
    assert.equal(w.current(clock.now()), 0);
  });

  test('weight_expiration_period: stale weights are dropped, and the blackout applies again', () => {
    const clock = new VirtualClock();
    const w = new EndpointWeight(clock, config);
    w.onReport(report({ rpsFractional: 10, cpuUtilization: 0.5 }));
    clock.advance(10_000);
    assert.equal(w.current(clock.now()), 20);
    clock.advance(170_000); // 180 s after the last report
    assert.equal(w.current(clock.now()), 0);
    w.onReport(report({ rpsFractional: 10, cpuUtilization: 0.5 }));
    assert.equal(w.current(clock.now()), 0, 'blackout again after expiry');
  });
});
