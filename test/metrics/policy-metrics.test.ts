import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  Attributes,
  BACKEND_SERVICE_ARG,
  type CompletePick,
  type Endpoint,
  METRIC_BACKEND_SERVICE,
  METRIC_LOCALITY,
  OK_STATUS,
  type PickArgs,
  parseAddress,
  type Status,
  unavailable,
} from '../../src/core/index.js';
import { Simulation, type SubchannelHandle } from '../../src/sim/index.js';
import { OtelMetrics, sumOf } from '../support/otel-metrics.js';
import { connectAll } from '../support/sim-picks.js';

// Each instrument's recording in the simulator, read back through the OpenTelemetry SDK as a user's exporter
// reads it. Names, units and labels are A78's, A91's and A94's.

const ARGS: PickArgs = { metadata: { get: () => [] } };
const [A, B, C] = ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80'] as const;
const TARGET = 'sim:///service';
const PF = [{ pick_first: {} }];

const PICK_FIRST_METRICS = [
  'grpc.lb.pick_first.connection_attempts_succeeded',
  'grpc.lb.pick_first.connection_attempts_failed',
  'grpc.lb.pick_first.disconnections',
];
const SUBCHANNEL_METRICS = [
  'grpc.subchannel.connection_attempts_succeeded',
  'grpc.subchannel.connection_attempts_failed',
  'grpc.subchannel.disconnections',
  'grpc.subchannel.open_connections',
];

function simWith(
  otel: OtelMetrics,
  enable: readonly string[],
  optionalLabels?: readonly string[],
): Simulation {
  return new Simulation({ metricsRecorder: otel.recorder(TARGET, enable, optionalLabels) });
}

describe('pick_first metrics (A78 "Pick First LB Policy") and subchannel metrics (A94)', () => {
  test('Happy Eyeballs: the hanging first address counts neither way, the second one succeeds once', async () => {
    const otel = new OtelMetrics();
    const sim = simWith(otel, [...PICK_FIRST_METRICS, ...SUBCHANNEL_METRICS]);
    sim.script(A, 'hang');
    sim.script(B, { connectAfterMs: 30 });
    sim.update([A, B], PF);
    sim.advance(250 + 30);
    assert.equal(sim.state, 'READY');
    assert.equal(sim.subchannel(A).released, true, 'the attempt in flight on A was cancelled');
    const m = await otel.collect();
    assert.equal(sumOf(m.get('grpc.lb.pick_first.connection_attempts_succeeded')), 1);
    assert.equal(sumOf(m.get('grpc.lb.pick_first.connection_attempts_failed')), 0);
    // A94: "If the subchannel is shut down while a connection attempt is in flight, we should not record
    // the connection attempt as either succeeded or failed."
    assert.equal(sumOf(m.get('grpc.subchannel.connection_attempts_succeeded')), 1);
    assert.equal(sumOf(m.get('grpc.subchannel.connection_attempts_failed')), 0);
    assert.equal(sumOf(m.get('grpc.subchannel.open_connections')), 1);
    const succeeded = m.get('grpc.lb.pick_first.connection_attempts_succeeded')!;
    assert.equal(succeeded.unit, '{attempt}');
    assert.deepEqual(succeeded.points[0]!.attributes, { 'grpc.target': TARGET });
    assert.equal(m.get('grpc.subchannel.open_connections')!.unit, '{connection}');
  });

  test('a failed first address counts one failed attempt, then the selected connection drops: one disconnection', async () => {
    const otel = new OtelMetrics();
    const sim = simWith(otel, [...PICK_FIRST_METRICS, ...SUBCHANNEL_METRICS]);
    sim.script(A, { failAfterMs: 10 });
    sim.script(B, { connectAfterMs: 5 });
    sim.update([A, B], PF);
    sim.advance(10 + 5);
    assert.equal(sim.state, 'READY');
    let m = await otel.collect();
    assert.equal(sumOf(m.get('grpc.lb.pick_first.connection_attempts_failed')), 1);
    assert.equal(sumOf(m.get('grpc.subchannel.connection_attempts_failed')), 1);
    assert.equal(sumOf(m.get('grpc.lb.pick_first.connection_attempts_succeeded')), 1);
    assert.equal(sumOf(m.get('grpc.lb.pick_first.disconnections')), 0);

    sim.subchannel(B).setState('IDLE');
    assert.equal(sim.state, 'IDLE');
    m = await otel.collect();
    assert.equal(sumOf(m.get('grpc.lb.pick_first.disconnections')), 1);
    assert.equal(m.get('grpc.lb.pick_first.disconnections')!.unit, '{disconnection}');
    // A94: the error is not a GOAWAY or a socket error code the simulator names: "unknown".
    assert.equal(sumOf(m.get('grpc.subchannel.disconnections'), { 'grpc.disconnect_error': 'unknown' }), 1);
    assert.equal(sumOf(m.get('grpc.subchannel.open_connections')), 0);
  });

  test('A94: a READY subchannel shut down by a new address list is a "subchannel shutdown" disconnection; pick_first lost nothing', async () => {
    const otel = new OtelMetrics();
    const sim = simWith(otel, [...PICK_FIRST_METRICS, ...SUBCHANNEL_METRICS]);
    connectAll(sim, [A], PF);
    sim.script(C, { connectAfterMs: 1 });
    sim.update([C], PF);
    sim.advance(1);
    assert.equal(sim.subchannel(A).released, true);
    const m = await otel.collect();
    assert.equal(
      sumOf(m.get('grpc.subchannel.disconnections'), { 'grpc.disconnect_error': 'subchannel shutdown' }),
      1,
    );
    assert.equal(sumOf(m.get('grpc.lb.pick_first.disconnections')), 0);
    assert.equal(sumOf(m.get('grpc.subchannel.open_connections')), 1, 'C is open, A no longer');
    assert.equal(sumOf(m.get('grpc.subchannel.connection_attempts_succeeded')), 2);
  });

  test('A79: experimental metrics are off until enabled by name; an enabled one alone is recorded', async () => {
    const off = new OtelMetrics();
    const sim = simWith(off, []);
    connectAll(sim, [A], PF);
    assert.equal((await off.collect()).size, 0);

    const one = new OtelMetrics();
    const sim2 = simWith(one, ['grpc.lb.pick_first.connection_attempts_succeeded']);
    connectAll(sim2, [A], PF);
    assert.deepEqual([...(await one.collect()).keys()], ['grpc.lb.pick_first.connection_attempts_succeeded']);
  });

  test("A79 optional labels: the endpoint's locality and backend service only when the user asks for them", async () => {
    const endpoint: Endpoint = {
      addresses: [parseAddress(A)],
      attributes: Attributes.EMPTY.with(METRIC_LOCALITY, '{region="r", zone="z", sub_zone="s"}').with(
        METRIC_BACKEND_SERVICE,
        'cluster-1',
      ),
    };
    const withLabels = new OtelMetrics();
    const sim = simWith(withLabels, SUBCHANNEL_METRICS);
    sim.script(A, { connectAfterMs: 1 });
    sim.update([endpoint], PF);
    sim.advance(1);
    const point = (await withLabels.collect()).get('grpc.subchannel.connection_attempts_succeeded')!
      .points[0]!;
    assert.deepEqual(point.attributes, {
      'grpc.target': TARGET,
      'grpc.lb.backend_service': 'cluster-1',
      'grpc.lb.locality': '{region="r", zone="z", sub_zone="s"}',
    });

    const without = new OtelMetrics();
    const sim2 = simWith(without, SUBCHANNEL_METRICS, []);
    sim2.script(A, { connectAfterMs: 1 });
    sim2.update([endpoint], PF);
    sim2.advance(1);
    const bare = (await without.collect()).get('grpc.subchannel.connection_attempts_succeeded')!.points[0]!;
    assert.deepEqual(bare.attributes, { 'grpc.target': TARGET });
  });
});

const WRR_METRICS = [
  'grpc.lb.wrr.rr_fallback',
  'grpc.lb.wrr.endpoint_weight_not_yet_usable',
  'grpc.lb.wrr.endpoint_weight_stale',
  'grpc.lb.wrr.endpoint_weights',
];
const LOCALITY = '{region="us-east1", zone="us-east1-b", sub_zone=""}';

function report(cpuUtilization: number) {
  return {
    cpuUtilization,
    memUtilization: 0,
    applicationUtilization: 0,
    rpsFractional: 100,
    eps: 0,
    utilization: {},
    requestCost: {},
    namedMetrics: {},
  };
}

/** `n` calls, each ending with the backend's per-call report (none for a backend not in `utilization`). */
function calls(sim: Simulation, n: number, utilization: Record<string, number>): void {
  for (let i = 0; i < n; i++) {
    const r = sim.picker.pick(ARGS) as CompletePick;
    assert.equal(r.type, 'complete');
    const u = utilization[(r.subchannel as SubchannelHandle).key];
    r.onCallStarted?.();
    r.onCallEnded?.(OK_STATUS, { backendMetrics: u === undefined ? undefined : report(u) });
  }
}

/** The WRR counters and the weights histogram (count, sum) now. */
async function wrrTotals(otel: OtelMetrics) {
  const m = await otel.collect();
  const weights = m.get('grpc.lb.wrr.endpoint_weights')?.points[0]?.histogram;
  return {
    fallback: sumOf(m.get('grpc.lb.wrr.rr_fallback')),
    notYetUsable: sumOf(m.get('grpc.lb.wrr.endpoint_weight_not_yet_usable')),
    stale: sumOf(m.get('grpc.lb.wrr.endpoint_weight_stale')),
    weightCount: weights?.count ?? 0,
    weightSum: weights?.sum ?? 0,
  };
}

type Totals = Awaited<ReturnType<typeof wrrTotals>>;
function delta(after: Totals, before: Totals): Totals {
  return {
    fallback: after.fallback - before.fallback,
    notYetUsable: after.notYetUsable - before.notYetUsable,
    stale: after.stale - before.stale,
    weightCount: after.weightCount - before.weightCount,
    weightSum: after.weightSum - before.weightSum,
  };
}

/** The three backends in one locality, as the xDS tree delivers them (A94's per-endpoint locality). */
function localityEndpoints(): Endpoint[] {
  const attributes = Attributes.EMPTY.with(METRIC_LOCALITY, LOCALITY);
  return [A, B, C].map((a) => ({ addresses: [parseAddress(a)], attributes }));
}

/** One scheduler update: the tick at the next multiple of 1 s, `ms` from now. */
async function oneTick(sim: Simulation, otel: OtelMetrics, ms: number): Promise<Totals> {
  sim.advance(ms - 1);
  const before = await wrrTotals(otel);
  sim.advance(1);
  return delta(await wrrTotals(otel), before);
}

describe('weighted_round_robin metrics (A78 "Weighted Round Robin LB Policy", A89)', () => {
  function wrrSim(otel: OtelMetrics, fields: Record<string, unknown>): Simulation {
    const sim = simWith(otel, WRR_METRICS);
    for (const k of [A, B, C]) sim.script(k, { connectAfterMs: 1 });
    const config = [{ weighted_round_robin: { weightUpdatePeriod: '1s', ...fields } }];
    sim.update(localityEndpoints(), config, { [BACKEND_SERVICE_ARG]: 'cluster-a' });
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    return sim;
  }

  test('no load report yet: every endpoint is not yet usable, weight 0, and the update falls back to RR', async () => {
    const otel = new OtelMetrics();
    const sim = wrrSim(otel, { blackoutPeriod: '0s' });
    assert.deepEqual(await oneTick(sim, otel, 999), {
      fallback: 1,
      notYetUsable: 3,
      stale: 0,
      weightCount: 3,
      weightSum: 0,
    });
    const m = await otel.collect();
    assert.deepEqual(m.get('grpc.lb.wrr.rr_fallback')!.points[0]!.attributes, {
      'grpc.target': TARGET,
      'grpc.lb.locality': LOCALITY,
      'grpc.lb.backend_service': 'cluster-a',
    });
    assert.equal(m.get('grpc.lb.wrr.rr_fallback')!.unit, '{update}');
    assert.equal(m.get('grpc.lb.wrr.endpoint_weight_not_yet_usable')!.unit, '{endpoint}');
    assert.equal(m.get('grpc.lb.wrr.endpoint_weight_stale')!.unit, '{endpoint}');
    assert.equal(m.get('grpc.lb.wrr.endpoint_weights')!.unit, '{weight}');
  });

  test('two backends report: their weights (qps / utilization) are recorded, the silent one as 0; no fallback', async () => {
    const otel = new OtelMetrics();
    const sim = wrrSim(otel, { blackoutPeriod: '0s' });
    calls(sim, 30, { [A]: 0.2, [B]: 0.4 });
    // 100 / 0.2 = 500 and 100 / 0.4 = 250; C has no report.
    assert.deepEqual(await oneTick(sim, otel, 999), {
      fallback: 0,
      notYetUsable: 1,
      stale: 0,
      weightCount: 3,
      weightSum: 750,
    });
  });

  test('one usable weight is still a fallback (fewer than two); two are not', async () => {
    const otel = new OtelMetrics();
    const sim = wrrSim(otel, { blackoutPeriod: '0s' });
    calls(sim, 30, { [A]: 0.2 });
    assert.deepEqual(await oneTick(sim, otel, 999), {
      fallback: 1,
      notYetUsable: 2,
      stale: 0,
      weightCount: 3,
      weightSum: 500,
    });
    calls(sim, 30, { [A]: 0.2, [B]: 0.4 });
    assert.deepEqual(await oneTick(sim, otel, 1000), {
      fallback: 0,
      notYetUsable: 1,
      stale: 0,
      weightCount: 3,
      weightSum: 750,
    });
  });

  test('within the blackout period a reported weight is not yet usable', async () => {
    const otel = new OtelMetrics();
    const sim = wrrSim(otel, { blackoutPeriod: '10s' });
    calls(sim, 30, { [A]: 0.2, [B]: 0.4, [C]: 0.8 }); // the first reports, at t = 1 ms
    assert.deepEqual(await oneTick(sim, otel, 999), {
      fallback: 1,
      notYetUsable: 3,
      stale: 0,
      weightCount: 3,
      weightSum: 0,
    });
    // At t = 10 s the weights are 9999 ms into the blackout: still not usable; at t = 11 s they are.
    assert.equal((await oneTick(sim, otel, 9000)).notYetUsable, 3);
    assert.deepEqual(await oneTick(sim, otel, 1000), {
      fallback: 0,
      notYetUsable: 0,
      stale: 0,
      weightCount: 3,
      weightSum: 500 + 250 + 125,
    });
  });

  test('weights older than the expiration period are stale: counted at the first update past it, not before', async () => {
    const otel = new OtelMetrics();
    const sim = wrrSim(otel, { blackoutPeriod: '0s', weightExpirationPeriod: '3s' });
    calls(sim, 30, { [A]: 0.2, [B]: 0.4 }); // at t = 1 ms
    // The update at t = 3 s: the reports are 2999 ms old, still usable.
    assert.deepEqual(await oneTick(sim, otel, 2999), {
      fallback: 0,
      notYetUsable: 1,
      stale: 0,
      weightCount: 3,
      weightSum: 750,
    });
    // At t = 4 s they are 3999 ms old (≥ 3 s): stale.
    assert.deepEqual(await oneTick(sim, otel, 1000), {
      fallback: 1,
      notYetUsable: 1,
      stale: 2,
      weightCount: 3,
      weightSum: 0,
    });
  });
});

const OD_METRICS = [
  'grpc.lb.outlier_detection.ejections_enforced',
  'grpc.lb.outlier_detection.ejections_unenforced',
];

function odConfig(fields: Record<string, unknown>): unknown[] {
  return [
    {
      outlier_detection_experimental: {
        interval: '10s',
        baseEjectionTime: '30s',
        ...fields,
        childPolicy: [{ round_robin: {} }],
      },
    },
  ];
}

/** `n` calls; those to the `bad` addresses fail. */
function odCalls(sim: Simulation, n: number, bad: readonly string[]): void {
  for (let i = 0; i < n; i++) {
    const r = sim.picker.pick(ARGS) as CompletePick;
    assert.equal(r.type, 'complete');
    const address = (r.subchannel as SubchannelHandle).key;
    r.onCallStarted?.();
    const outcome: Status = bad.includes(address) ? unavailable('boom') : OK_STATUS;
    r.onCallEnded?.(outcome);
  }
}

describe('outlier detection metrics (A91)', () => {
  const BACKENDS = [A, B, C];

  function odSim(otel: OtelMetrics, fields: Record<string, unknown>): Simulation {
    const sim = simWith(otel, OD_METRICS);
    for (const k of BACKENDS) sim.script(k, { connectAfterMs: 1 });
    sim.update(BACKENDS, odConfig(fields), { [BACKEND_SERVICE_ARG]: 'cluster-od' });
    sim.advance(1);
    return sim;
  }

  test('failure_percentage: one ejection enforced, the next outlier over max_ejection_percent is unenforced', async () => {
    const otel = new OtelMetrics();
    // 30 %: after one of three is ejected (33 %), the cap is reached.
    const sim = odSim(otel, {
      maxEjectionPercent: 30,
      failurePercentageEjection: {
        threshold: 50,
        minimumHosts: 3,
        requestVolume: 10,
        enforcementPercentage: 100,
      },
    });
    odCalls(sim, 60, [A, B]);
    sim.advance(10_000);
    const m = await otel.collect();
    assert.equal(
      sumOf(m.get('grpc.lb.outlier_detection.ejections_enforced'), {
        'grpc.lb.outlier_detection.detection_method': 'failure_percentage',
      }),
      1,
    );
    assert.equal(
      sumOf(m.get('grpc.lb.outlier_detection.ejections_unenforced'), {
        'grpc.lb.outlier_detection.detection_method': 'failure_percentage',
        'grpc.lb.outlier_detection.unenforced_reason': 'max_ejection_overflow',
      }),
      1,
    );
    assert.deepEqual(m.get('grpc.lb.outlier_detection.ejections_enforced')!.points[0]!.attributes, {
      'grpc.target': TARGET,
      'grpc.lb.outlier_detection.detection_method': 'failure_percentage',
      'grpc.lb.backend_service': 'cluster-od',
    });
    assert.equal(m.get('grpc.lb.outlier_detection.ejections_enforced')!.unit, '{ejection}');
  });

  test('enforcement_percentage 0: every outlier found is unenforced for that reason, none ejected', async () => {
    const otel = new OtelMetrics();
    const sim = odSim(otel, {
      maxEjectionPercent: 100,
      failurePercentageEjection: {
        threshold: 50,
        minimumHosts: 3,
        requestVolume: 10,
        enforcementPercentage: 0,
      },
    });
    odCalls(sim, 60, [A, B]);
    sim.advance(10_000);
    const m = await otel.collect();
    assert.equal(sumOf(m.get('grpc.lb.outlier_detection.ejections_enforced')), 0);
    assert.equal(
      sumOf(m.get('grpc.lb.outlier_detection.ejections_unenforced'), {
        'grpc.lb.outlier_detection.unenforced_reason': 'enforcement_percentage',
      }),
      2,
    );
  });

  test('success_rate: the outlier is ejected and counted under its detection method', async () => {
    const otel = new OtelMetrics();
    const sim = odSim(otel, {
      maxEjectionPercent: 100,
      successRateEjection: {
        stdevFactor: 1000,
        enforcementPercentage: 100,
        minimumHosts: 3,
        requestVolume: 10,
      },
    });
    odCalls(sim, 60, [A]);
    sim.advance(10_000);
    const m = await otel.collect();
    assert.equal(
      sumOf(m.get('grpc.lb.outlier_detection.ejections_enforced'), {
        'grpc.lb.outlier_detection.detection_method': 'success_rate',
      }),
      1,
    );
  });
});
