// The metric values lbtree keeps per channel for the live view (lbtree/admin): the same instruments, labels
// and values a user's OpenTelemetry SDK receives from the same channel (read here through the SDK's pull
// reader), with or without a MeterProvider; experimental metrics stay off unless enabled (A79).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  Attributes,
  BACKEND_SERVICE_ARG,
  type CompletePick,
  findInstrument,
  type HistogramInstrument,
  METRIC_LOCALITY,
  type MetricsRecorder,
  OK_STATUS,
  type PickArgs,
  parseAddress,
  registerInstrument,
} from '../../src/core/index.js';
import {
  CALL_RETRIES,
  ChannelMetricsRecorder,
  DEFAULT_HISTOGRAM_BOUNDARIES,
  type HistogramPointValue,
  type InstrumentValues,
  METHOD_LABEL,
  metricsRecorderFor,
} from '../../src/metrics/index.js';
import { WRR_ENDPOINT_WEIGHTS } from '../../src/policies/index.js';
import { Simulation, type SubchannelHandle } from '../../src/sim/index.js';
import { valuesAsSdk } from '../support/metric-values.js';
import { OtelMetrics } from '../support/otel-metrics.js';

const ARGS: PickArgs = { metadata: { get: () => [] } };
const [A, B, C] = ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80'] as const;
const TARGET = 'sim:///service';
const LOCALITY = '{region="r", zone="z", sub_zone=""}';

function valuesOf(recorder: MetricsRecorder | undefined): InstrumentValues[] {
  assert.ok(recorder instanceof ChannelMetricsRecorder && recorder.values !== undefined);
  return recorder.values.read();
}

/** A WRR channel in the simulator over three backends in one locality, READY. */
function wrrChannel(recorder: MetricsRecorder | undefined): Simulation {
  const sim = new Simulation({ ...(recorder && { metricsRecorder: recorder }) });
  for (const k of [A, B, C]) sim.script(k, { connectAfterMs: 1 });
  const attributes = Attributes.EMPTY.with(METRIC_LOCALITY, LOCALITY);
  sim.update(
    [A, B, C].map((a) => ({ addresses: [parseAddress(a)], attributes })),
    [{ weighted_round_robin: { weightUpdatePeriod: '1s', blackoutPeriod: '0s' } }],
    { [BACKEND_SERVICE_ARG]: 'cluster-a' },
  );
  sim.advance(1);
  assert.equal(sim.state, 'READY');
  return sim;
}

/** `n` calls, each ending with its backend's per-call ORCA report (utilization per address, 100 qps). */
function calls(sim: Simulation, n: number, utilization: Readonly<Record<string, number>>): void {
  for (let i = 0; i < n; i++) {
    const r = sim.picker.pick(ARGS) as CompletePick;
    const u = utilization[(r.subchannel as SubchannelHandle).key];
    r.onCallStarted?.();
    r.onCallEnded?.(OK_STATUS, {
      backendMetrics:
        u === undefined
          ? undefined
          : {
              cpuUtilization: u,
              memUtilization: 0,
              applicationUtilization: 0,
              rpsFractional: 100,
              eps: 0,
              utilization: {},
              requestCost: {},
              namedMetrics: {},
            },
    });
  }
}

const EVERY_WRR_AND_SUBCHANNEL_METRIC = [
  'grpc.lb.wrr.rr_fallback',
  'grpc.lb.wrr.endpoint_weight_not_yet_usable',
  'grpc.lb.wrr.endpoint_weight_stale',
  'grpc.lb.wrr.endpoint_weights',
  'grpc.subchannel.connection_attempts_succeeded',
  'grpc.subchannel.connection_attempts_failed',
  'grpc.subchannel.disconnections',
  'grpc.subchannel.open_connections',
];

describe("the live view's metric values (one truth with the user's exporter)", () => {
  test('a WRR channel: every counter, up-down counter and histogram point equals what the SDK collected', async () => {
    const otel = new OtelMetrics();
    const recorder = metricsRecorderFor(TARGET, otel.options(EVERY_WRR_AND_SUBCHANNEL_METRIC));
    const sim = wrrChannel(recorder);
    sim.advance(999); // the first scheduler update: no report yet, a round-robin fallback
    calls(sim, 60, { [A]: 0.2, [B]: 0.4 });
    sim.advance(1000); // weights 500 and 250 (100 qps / utilization), C not yet usable
    sim.subchannel(C).setState('IDLE'); // A94: one disconnection; the endpoint reconnects (1 ms)
    sim.advance(1000);
    const sdk = await otel.asValues();
    const view = valuesOf(recorder);
    assert.deepEqual(valuesAsSdk(view), sdk);
    // And the values are the ones A78 / A94 define, not only equal to each other.
    const weights = view.find((i) => i.name === 'grpc.lb.wrr.endpoint_weights')!;
    const point = weights.points[0] as HistogramPointValue;
    assert.deepEqual(point.labels, {
      'grpc.target': TARGET,
      'grpc.lb.locality': LOCALITY,
      'grpc.lb.backend_service': 'cluster-a',
    });
    assert.equal(point.max, 500);
    assert.ok(point.count >= 6, `three updates of three weights at least: ${point.count}`);
    const total = (name: string) =>
      view.find((i) => i.name === name)!.points.reduce((sum, p) => sum + (p as { value: number }).value, 0);
    assert.equal(view.find((i) => i.name === 'grpc.subchannel.open_connections')!.type, 'up_down_counter');
    assert.equal(total('grpc.subchannel.disconnections'), 1);
    assert.equal(total('grpc.subchannel.connection_attempts_succeeded'), 4, 'three, then C again');
    assert.equal(total('grpc.subchannel.open_connections'), 3, 'four opened, one lost');
  });

  test('histogram buckets are the SDK default ones, upper bound inclusive: 5 is in (0, 5], 5.5 in (5, 10], 10000 in (7500, 10000], 10001 above', async () => {
    assert.deepEqual(
      [...DEFAULT_HISTOGRAM_BOUNDARIES],
      [0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000],
    );
    const otel = new OtelMetrics();
    const recorder = metricsRecorderFor(TARGET, otel.options(['grpc.lb.wrr.endpoint_weights']))!;
    const histogram = findInstrument('grpc.lb.wrr.endpoint_weights') as HistogramInstrument;
    assert.equal(histogram, WRR_ENDPOINT_WEIGHTS);
    const labels = {};
    for (const v of [0, 5, 5.5, 10000, 10001, -1, Number.NaN]) recorder.recordHistogram(histogram, v, labels);
    const point = valuesOf(recorder)[0]!.points[0] as HistogramPointValue;
    assert.deepEqual(point.buckets.counts, [1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1]);
    assert.deepEqual(
      { count: point.count, sum: point.sum, min: point.min, max: point.max },
      {
        count: 5,
        sum: 20011.5,
        min: 0,
        max: 10001,
      },
    );
    assert.deepEqual(
      valuesAsSdk(valuesOf(recorder)),
      await otel.asValues(),
      'negative and NaN dropped alike',
    );
  });

  test('a histogram with recommended boundaries (A96 grpc.client.call.retries: 1, 2, 3, 4, 5) is bucketed with them, as the SDK takes them as advice', async () => {
    const otel = new OtelMetrics();
    const recorder = metricsRecorderFor(TARGET, otel.options([CALL_RETRIES.name]))!;
    const labels = { [METHOD_LABEL]: 'svc/Method' };
    for (const v of [1, 2, 2, 5, 6]) recorder.recordHistogram(CALL_RETRIES, v, labels);
    const point = valuesOf(recorder)[0]!.points[0] as HistogramPointValue;
    assert.deepEqual(point.buckets, { boundaries: [1, 2, 3, 4, 5], counts: [1, 2, 0, 0, 1, 1] });
    assert.deepEqual(valuesAsSdk(valuesOf(recorder)), await otel.asValues());
  });

  test("gauges: each read asks the callbacks for the value now, the last report per label set counting, as the SDK's collection does", async () => {
    const gauge = registerInstrument({
      name: 'lbtree.test.view_gauge',
      description: 'a test gauge',
      unit: '{thing}',
      type: 'gauge',
      labels: ['grpc.target', 'lbtree.test.key'],
      optionalLabels: [],
      enabledByDefault: false,
    });
    const otel = new OtelMetrics();
    const recorder = metricsRecorderFor(TARGET, otel.options([gauge.name]))!;
    let level = 7;
    const remove = recorder.registerGaugeCallback([gauge], (r) => {
      r.report(gauge, 1, { 'lbtree.test.key': 'a' });
      r.report(gauge, level, { 'lbtree.test.key': 'a' });
      r.report(gauge, 2, { 'lbtree.test.key': 'b' });
    });
    assert.deepEqual(valuesAsSdk(valuesOf(recorder)), await otel.asValues());
    assert.deepEqual(valuesOf(recorder)[0]!.points, [
      { labels: { 'grpc.target': TARGET, 'lbtree.test.key': 'a' }, value: 7 },
      { labels: { 'grpc.target': TARGET, 'lbtree.test.key': 'b' }, value: 2 },
    ]);
    level = 3;
    assert.equal((valuesOf(recorder)[0]!.points[0] as { value: number }).value, 3);
    remove();
    assert.deepEqual(valuesOf(recorder)[0]!.points, [], 'a removed callback reports nothing');
  });

  test('without a MeterProvider: the enabled metrics are recorded for the view only; the others stay off', () => {
    const recorder = metricsRecorderFor(TARGET, { enableMetrics: ['grpc.lb.wrr.rr_fallback'] });
    const sim = wrrChannel(recorder);
    const fallbacks = () => (valuesOf(recorder)[0]!.points[0] as { value: number }).value;
    sim.advance(999);
    const view = valuesOf(recorder);
    assert.deepEqual(
      view.map((i) => [i.name, i.points.map((p) => p.labels)]),
      [['grpc.lb.wrr.rr_fallback', [{ 'grpc.target': TARGET }]]],
      'optional labels are left out unless asked for; endpoint_weights (not enabled) is not recorded',
    );
    const before = fallbacks();
    sim.advance(1000);
    assert.equal(fallbacks(), before + 1, 'no report yet: the next scheduler update falls back too');
  });

  test('options naming no metric: the channel records, but no instrument is on (A79: experimental is off by default)', () => {
    const recorder = metricsRecorderFor(TARGET, { optionalLabels: ['grpc.lb.locality'] });
    const sim = wrrChannel(recorder);
    sim.advance(2999);
    assert.deepEqual(valuesOf(recorder), []);
    assert.equal(metricsRecorderFor(TARGET, undefined), undefined, 'no options at all: no recorder');
  });
});
