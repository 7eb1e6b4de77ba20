import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type CompletePick,
  ConfigError,
  OK_STATUS,
  type PickArgs,
  type Status,
  unavailable,
} from '../../src/core/index.js';
import { defaultRegistry, parseOutlierDetectionConfig } from '../../src/policies/index.js';
import { Simulation, type SubchannelHandle } from '../../src/sim/index.js';
import { connectAll, picks, tally } from '../support/sim-picks.js';

const ARGS: PickArgs = { metadata: { get: () => [] } };
const BACKENDS = ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80', '10.0.0.4:80', '10.0.0.5:80'];
const [A, B] = BACKENDS as [string, string];

function od(fields: Record<string, unknown>, child: unknown[] = [{ round_robin: {} }]): unknown[] {
  return [{ outlier_detection_experimental: { ...fields, childPolicy: child } }];
}

const FAILURE_PERCENTAGE = od({
  interval: '10s',
  baseEjectionTime: '30s',
  maxEjectionPercent: 50,
  failurePercentageEjection: { threshold: 50, minimumHosts: 3, requestVolume: 10 },
});

/**
 * Makes `n` calls on the channel's current picker and ends each with the status `outcome` gives for the
 * address it went to; returns how many calls each address got.
 */
function runCalls(sim: Simulation, n: number, outcome: (address: string) => Status): Record<string, number> {
  const seen: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = sim.picker.pick(ARGS);
    assert.equal(r.type, 'complete', `pick ${i} did not complete: ${JSON.stringify(r)}`);
    const c = r as CompletePick;
    const address = (c.subchannel as SubchannelHandle).key;
    seen.push(address);
    c.onCallStarted?.();
    c.onCallEnded?.(outcome(address));
  }
  return tally(seen);
}

/** Fails the first `counts[address]` calls to each address, succeeds the rest. */
function failFirst(counts: Record<string, number>): (address: string) => Status {
  const failed: Record<string, number> = {};
  return (address) => {
    failed[address] = (failed[address] ?? 0) + 1;
    return failed[address]! <= (counts[address] ?? 0) ? unavailable('boom') : OK_STATUS;
  };
}

const failing =
  (...bad: string[]) =>
  (address: string): Status =>
    bad.includes(address) ? unavailable('boom') : OK_STATUS;

function readySim(config: unknown[], keys: readonly string[] = BACKENDS): Simulation {
  const sim = connectAll(new Simulation({ trace: true }), keys, config);
  assert.equal(sim.state, 'READY');
  return sim;
}

describe('outlier_detection_experimental config (A50 "LB Policy Config", "Validation")', () => {
  const registry = defaultRegistry();

  test('defaults apply to every unset field', () => {
    const c = parseOutlierDetectionConfig(
      { childPolicy: [{ round_robin: {} }], successRateEjection: {}, failurePercentageEjection: {} },
      '$',
      registry,
    );
    // A50's proto comments: interval 10 s, base_ejection_time 30 s, max_ejection_time 300 s,
    // max_ejection_percent 10; success rate: stdev_factor 1900, enforcement 100, minimum_hosts 5,
    // request_volume 100; failure percentage: threshold 85, enforcement 100, minimum_hosts 5, request_volume 50.
    assert.equal(c.intervalMs, 10_000);
    assert.equal(c.baseEjectionTimeMs, 30_000);
    assert.equal(c.maxEjectionTimeMs, 300_000);
    assert.equal(c.maxEjectionPercent, 10);
    assert.deepEqual(c.successRateEjection, {
      stdevFactor: 1900,
      enforcementPercentage: 100,
      minimumHosts: 5,
      requestVolume: 100,
    });
    assert.deepEqual(c.failurePercentageEjection, {
      threshold: 85,
      enforcementPercentage: 100,
      minimumHosts: 5,
      requestVolume: 50,
    });
  });

  test('durations in proto3 JSON string form and { seconds, nanos } form', () => {
    const c = parseOutlierDetectionConfig(
      {
        interval: '1.5s',
        baseEjectionTime: { seconds: 2, nanos: 500_000_000 },
        childPolicy: [{ round_robin: {} }],
      },
      '$',
      registry,
    );
    assert.equal(c.intervalMs, 1500);
    assert.equal(c.baseEjectionTimeMs, 2500);
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['max_ejection_percent over 100', { maxEjectionPercent: 101 }, '$.maxEjectionPercent'],
    ['negative interval', { interval: '-1s' }, '$.interval'],
    ['malformed duration', { base_ejection_time: '10 seconds' }, '$.base_ejection_time'],
    [
      'enforcement over 100',
      { successRateEjection: { enforcementPercentage: 101 } },
      '$.successRateEjection.enforcementPercentage',
    ],
    [
      'threshold over 100',
      { failurePercentageEjection: { threshold: 200 } },
      '$.failurePercentageEjection.threshold',
    ],
    [
      'failure enforcement over 100',
      { failurePercentageEjection: { enforcement_percentage: 101 } },
      '$.failurePercentageEjection.enforcement_percentage',
    ],
    ['negative nanos', { maxEjectionTime: { seconds: 1, nanos: -1 } }, '$.maxEjectionTime.nanos'],
  ];
  for (const [name, fields, path] of invalid) {
    test(`rejects ${name}, naming ${path}`, () => {
      assert.throws(
        () => parseOutlierDetectionConfig({ ...fields, childPolicy: [{ round_robin: {} }] }, '$', registry),
        (e: unknown) => e instanceof ConfigError && e.path === path,
      );
    });
  }

  test('a child policy is required and validated', () => {
    assert.throws(
      () => parseOutlierDetectionConfig({}, '$', registry),
      (e: unknown) => e instanceof ConfigError && e.path === '$.childPolicy',
    );
    assert.throws(
      () =>
        parseOutlierDetectionConfig(
          { childPolicy: [{ ring_hash_experimental: { minRingSize: 0 } }] },
          '$',
          registry,
        ),
      (e: unknown) => e instanceof ConfigError && e.path.startsWith('$.childPolicy'),
    );
  });
});

describe('outlier_detection_experimental behaviour (A50 "Outlier Detection Behavior", A61)', () => {
  test('A50 failure percentage: an endpoint failing over the threshold is ejected at the interval, and only then', () => {
    const sim = readySim(FAILURE_PERCENTAGE);
    runCalls(sim, 100, failing(A));
    sim.advance(9_998); // the timer started with the update at 0 ms; connecting took 1 ms
    assert.equal(sim.now, 9_999);
    assert.ok(picks(sim, 50).includes(A), 'not ejected before the interval ends');
    sim.advance(1);
    const after = tally(picks(sim, 100));
    assert.equal(after[A], undefined, `A still picked: ${JSON.stringify(after)}`);
    assert.ok(sim.traces.some((t) => t.includes(`outlier_detection: ejecting endpoint [${A}]`)));
  });

  test('A61: ejection goes through the health watch; the connection itself stays READY', () => {
    const sim = readySim(FAILURE_PERCENTAGE);
    runCalls(sim, 100, failing(A));
    sim.advance(10_000);
    const fake = sim.subchannel(A);
    assert.equal(fake.state, 'READY');
    assert.equal(fake.connectionRequests, 1, 'no reconnection because of the ejection');
  });

  test('A50 step 5: un-ejected once base_ejection_time × multiplier has passed', () => {
    const sim = readySim(FAILURE_PERCENTAGE);
    runCalls(sim, 100, failing(A));
    sim.advance(10_000); // ejected at 10 s, multiplier 1 → back at the first interval ≥ 40 s
    sim.advance(20_000);
    assert.equal(tally(picks(sim, 100))[A], undefined, 'still ejected at 30 s');
    sim.advance(10_000);
    assert.ok(tally(picks(sim, 100))[A]! > 0, 'back at 40 s');
    assert.ok(sim.traces.some((t) => t.includes(`un-ejecting endpoint [${A}]`)));
  });

  test('A50 ejection multiplier: a second ejection lasts twice as long; it decays while not ejected', () => {
    const sim = readySim(FAILURE_PERCENTAGE);
    runCalls(sim, 100, failing(A));
    sim.advance(10_000); // ejected, multiplier 1
    sim.advance(30_000); // 40 s: un-ejected
    runCalls(sim, 100, failing(A));
    sim.advance(10_000); // 50 s: ejected again, multiplier 2 → back at 50 + 60 = 110 s
    sim.advance(50_000);
    assert.equal(tally(picks(sim, 100))[A], undefined, 'still ejected at 100 s');
    sim.advance(10_000);
    assert.ok(tally(picks(sim, 100))[A]! > 0, 'back at 110 s');
    // Healthy intervals decrease the multiplier to 0, so a later ejection lasts base_ejection_time again.
    sim.advance(30_000);
    runCalls(sim, 100, failing(A));
    sim.advance(10_000); // ejected at 150 s with multiplier 1 → back at 180 s
    sim.advance(30_000);
    assert.ok(tally(picks(sim, 100))[A]! > 0, 'back at 180 s');
  });

  test('A50 max_ejection_time unset: 300 s, or base_ejection_time when that is larger', () => {
    const sim = readySim(
      od({
        baseEjectionTime: '400s',
        maxEjectionPercent: 50,
        failurePercentageEjection: { threshold: 50, minimumHosts: 3, requestVolume: 10 },
      }),
    );
    runCalls(sim, 100, failing(A));
    sim.advance(10_000); // ejected at 10 s for 400 s × multiplier 1, above the 300 s default: back at 410 s
    sim.advance(390_000);
    assert.equal(tally(picks(sim, 100))[A], undefined, 'still ejected at 400 s (not capped at 300 s)');
    sim.advance(10_000);
    assert.ok(tally(picks(sim, 100))[A]! > 0, 'back at 410 s');
  });

  test('A50 max_ejection_percent stops ejections once reached', () => {
    const ten = Array.from({ length: 10 }, (_, i) => `10.0.1.${i}:80`);
    const sim = readySim(
      od({
        maxEjectionPercent: 20,
        failurePercentageEjection: { threshold: 50, minimumHosts: 3, requestVolume: 10 },
      }),
      ten,
    );
    runCalls(sim, 500, failing(...ten.slice(0, 5)));
    sim.advance(10_000);
    const got = tally(picks(sim, 200));
    assert.equal(ten.filter((k) => got[k] === undefined).length, 2, JSON.stringify(got));
  });

  test('A50 max_ejection_percent: at least one endpoint is ejected whatever the value', () => {
    const ten = Array.from({ length: 10 }, (_, i) => `10.0.1.${i}:80`);
    const sim = readySim(
      od({
        maxEjectionPercent: 5,
        failurePercentageEjection: { threshold: 50, minimumHosts: 3, requestVolume: 10 },
      }),
      ten,
    );
    runCalls(sim, 500, failing(...ten.slice(0, 3)));
    sim.advance(10_000);
    const got = tally(picks(sim, 200));
    assert.equal(ten.filter((k) => got[k] === undefined).length, 1, JSON.stringify(got));
  });

  // A50 "Success Rate Algorithm" step 3: ejected when the success rate is below mean − stdev × (stdev_factor /
  // 1000). 100 calls each; C and D fail 5 (0.95), B and E none (1). With A at 0.80 the rates' mean is 0.94 and
  // their (population) stdev 0.07348, so the threshold is 0.94 − 1.9 × 0.07348 = 0.80038: A is just below it.
  // With A at 0.81: mean 0.942, stdev 0.06969, threshold 0.80960: A is just above it (and below the mean).
  const SUCCESS_RATE = od({
    maxEjectionPercent: 20,
    successRateEjection: {
      stdevFactor: 1900,
      enforcementPercentage: 100,
      minimumHosts: 5,
      requestVolume: 100,
    },
  });
  const [, , C, D] = BACKENDS as [string, string, string, string];

  test('A50 success rate: an endpoint just below mean − stdev × stdev_factor / 1000 is ejected', () => {
    const sim = readySim(SUCCESS_RATE);
    const calls = runCalls(sim, 500, failFirst({ [A]: 20, [C]: 5, [D]: 5 }));
    assert.deepEqual(Object.values(calls), [100, 100, 100, 100, 100]);
    sim.advance(10_000);
    assert.equal(tally(picks(sim, 100))[A], undefined, 'A (0.80 < 0.80038) still picked');
    assert.ok(sim.traces.some((t) => t.includes(`outlier_detection: ejecting endpoint [${A}]`)));
  });

  test('A50 success rate: an endpoint just above mean − stdev × stdev_factor / 1000 stays, below the mean', () => {
    const sim = readySim(SUCCESS_RATE);
    const calls = runCalls(sim, 500, failFirst({ [A]: 19, [C]: 5, [D]: 5 }));
    assert.deepEqual(Object.values(calls), [100, 100, 100, 100, 100]);
    sim.advance(10_000);
    const after = tally(picks(sim, 100));
    assert.deepEqual(Object.keys(after).sort(), [...BACKENDS].sort(), 'A (0.81 > 0.80960) was ejected');
    assert.ok(!sim.traces.some((t) => t.includes('outlier_detection: ejecting endpoint')));
  });

  test('A50 success rate: fewer endpoints with request_volume than minimum_hosts ejects nothing', () => {
    const sim = readySim(
      od({
        maxEjectionPercent: 50,
        successRateEjection: { stdevFactor: 1000, minimumHosts: 5, requestVolume: 200 },
      }),
    );
    runCalls(sim, 500, failing(A)); // 100 calls each: under request_volume 200
    sim.advance(10_000);
    assert.ok(tally(picks(sim, 100))[A]! > 0);
  });

  test('A50 enforcement_percentage 0 detects outliers but never ejects', () => {
    const sim = readySim(
      od({
        maxEjectionPercent: 50,
        failurePercentageEjection: {
          threshold: 50,
          minimumHosts: 3,
          requestVolume: 10,
          enforcementPercentage: 0,
        },
      }),
    );
    runCalls(sim, 100, failing(A));
    sim.advance(10_000);
    assert.ok(tally(picks(sim, 100))[A]! > 0);
  });

  test('A50 call counter: only the last interval counts (buckets swap each interval)', () => {
    const sim = readySim(FAILURE_PERCENTAGE);
    runCalls(sim, 100, failing(A));
    sim.advance(5_000);
    // A new config restarts nothing: the timer keeps its start (A50 "If the timer start timestamp is set…").
    sim.update(BACKENDS, FAILURE_PERCENTAGE);
    sim.advance(5_000); // 10 s: the failures are in this interval → ejected
    assert.equal(tally(picks(sim, 100))[A], undefined);
    sim.advance(30_000); // 40 s: un-ejected; the interval 30–40 s had no calls
    runCalls(sim, 100, () => OK_STATUS);
    sim.advance(10_000);
    assert.ok(tally(picks(sim, 100))[A]! > 0, 'old failures no longer count');
  });

  test('A50: a config with neither algorithm un-ejects everything and stops counting', () => {
    const sim = readySim(FAILURE_PERCENTAGE);
    runCalls(sim, 100, failing(A));
    sim.advance(10_000);
    assert.equal(tally(picks(sim, 100))[A], undefined);
    sim.update(BACKENDS, od({}));
    assert.ok(tally(picks(sim, 100))[A]! > 0);
    const r = sim.picker.pick(ARGS) as CompletePick;
    assert.equal(r.onCallEnded, undefined, 'no counting hook without an algorithm');
  });

  test('A61: calls on any address of an endpoint count for it, and ejection covers all its addresses', () => {
    const dual = [
      { addresses: ['10.0.0.1:80', '[fd00::1]:80'] },
      { addresses: ['10.0.0.2:80'] },
      { addresses: ['10.0.0.3:80'] },
      { addresses: ['10.0.0.4:80'] },
    ];
    const sim = new Simulation({ trace: true });
    for (const k of ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80', '10.0.0.4:80'])
      sim.script(k, { connectAfterMs: 1 });
    sim.update(dual, FAILURE_PERCENTAGE);
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    runCalls(sim, 100, failing('10.0.0.1:80'));
    sim.advance(10_000);
    assert.equal(tally(picks(sim, 100))['10.0.0.1:80'], undefined);
    assert.ok(sim.traces.some((t) => t.includes('ejecting endpoint [10.0.0.1:80, [fd00::1]:80]')));
    // The same endpoint with its addresses reordered is the same endpoint: it stays ejected.
    sim.update([{ addresses: ['[fd00::1]:80', '10.0.0.1:80'] }, ...dual.slice(1)], FAILURE_PERCENTAGE);
    assert.equal(tally(picks(sim, 100))['10.0.0.1:80'], undefined);
  });

  test('A61: under a lone pick_first (no petiole, no health watch) ejection changes nothing', () => {
    const sim = readySim(
      od(
        {
          failurePercentageEjection: { threshold: 50, minimumHosts: 1, requestVolume: 10 },
          maxEjectionPercent: 100,
        },
        [{ pick_first: {} }],
      ),
      [A, B],
    );
    runCalls(sim, 50, () => unavailable('boom'));
    sim.advance(10_000);
    assert.ok(sim.traces.some((t) => t.includes('ejecting endpoint')));
    assert.equal(sim.state, 'READY');
    assert.equal(sim.pick().type, 'complete');
  });

  test("picks hand up the raw subchannel and keep the child's own call hooks", () => {
    const sim = readySim(od({ failurePercentageEjection: {} }, [{ least_request_experimental: {} }]));
    const r = sim.picker.pick(ARGS) as CompletePick;
    assert.ok(BACKENDS.includes((r.subchannel as SubchannelHandle).key));
    assert.equal(typeof r.onCallStarted, 'function', "least_request's hook is kept");
    assert.equal(sim.picker.pick(ARGS).type, 'complete');
  });
});
