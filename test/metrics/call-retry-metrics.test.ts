// gRFC A96's per-call retry metrics, on the tracer alone: the attempts of one call as grpc-js's picks show them
// (the pick's grpc-previous-rpc-attempts, the stream hooks), in virtual time, read back through the
// OpenTelemetry SDK. test/e2e/retry-metrics.e2e.test.ts runs the same on real grpc-js channels.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CALL_HEDGES,
  CALL_RETRIES,
  CALL_RETRY_DELAY,
  CALL_TRANSPARENT_RETRIES,
  CallRetryTracers,
  LATENCY_BUCKETS,
  metricsRecorderFor,
  recordsCallRetries,
} from '../../src/metrics/index.js';
import { type CollectedMetric, OtelMetrics } from '../support/otel-metrics.js';

const A96 = [
  'grpc.client.call.retries',
  'grpc.client.call.transparent_retries',
  'grpc.client.call.hedges',
  'grpc.client.call.retry_delay',
];
const TARGET = 'xds:///retry-unit';

/** A channel's tracers on a virtual clock, every A96 metric enabled. */
function channel() {
  const otel = new OtelMetrics();
  const clock = { t: 0 };
  const tracers = new CallRetryTracers(otel.recorder(TARGET, A96), () => clock.t);
  return { otel, clock, tracers };
}

/** The one histogram point of `name` (count, sum, attributes), or undefined when nothing was recorded. */
function point(m: Map<string, CollectedMetric>, name: string) {
  const metric = m.get(name);
  if (metric === undefined || metric.points.length === 0) return undefined;
  assert.equal(metric.points.length, 1, name);
  const p = metric.points[0]!;
  return { count: p.histogram!.count, sum: p.histogram!.sum!, attributes: p.attributes };
}

describe('A96 call retry metrics: the tracer of one call', () => {
  test('A96 instruments: histograms with the gRFC units, grpc.method and grpc.target, experimental (off by default)', () => {
    const expected = [
      [CALL_RETRIES, 'grpc.client.call.retries', '{retry}', [1, 2, 3, 4, 5]],
      [
        CALL_TRANSPARENT_RETRIES,
        'grpc.client.call.transparent_retries',
        '{transparent_retry}',
        [1, 2, 3, 4, 5, 10],
      ],
      [CALL_HEDGES, 'grpc.client.call.hedges', '{hedge}', [1, 2, 3, 4, 5]],
      [CALL_RETRY_DELAY, 'grpc.client.call.retry_delay', 's', LATENCY_BUCKETS],
    ] as const;
    for (const [instrument, name, unit, buckets] of expected) {
      assert.equal(instrument.name, name);
      assert.equal(instrument.type, 'histogram');
      assert.equal(instrument.unit, unit);
      assert.deepEqual(instrument.labels, ['grpc.method', 'grpc.target']);
      assert.equal(instrument.enabledByDefault, false);
      assert.deepEqual(instrument.bucketBoundaries, buckets);
    }
    // A66's latency buckets, from 0 to 100 s.
    assert.equal(LATENCY_BUCKETS.length, 41);
    assert.deepEqual([LATENCY_BUCKETS[0], LATENCY_BUCKETS[1], LATENCY_BUCKETS.at(-1)], [0, 0.00001, 100]);
  });

  test('A79: a channel records them only when they are named; enabling one is enough for a tracer', () => {
    const otel = new OtelMetrics();
    assert.equal(recordsCallRetries(undefined), false);
    assert.equal(recordsCallRetries(otel.recorder(TARGET, [])), false);
    assert.equal(recordsCallRetries(otel.recorder(TARGET, ['grpc.lb.wrr.rr_fallback'])), false);
    assert.equal(recordsCallRetries(otel.recorder(TARGET, ['grpc.client.call.retry_delay'])), true);
    const recorder = metricsRecorderFor(TARGET, {
      meterProvider: otel.meterProvider,
      enableMetrics: A96,
      disableMetrics: A96,
    });
    assert.equal(recordsCallRetries(recorder), false, 'disableMetrics wins');
  });

  test('A96 "If there were no retries, 0 is not reported": a call of one attempt (picked twice while queued) records nothing', async () => {
    const { otel, clock, tracers } = channel();
    const call = tracers.forCall('/pkg.Echo/Say');
    const attempt = call.attemptFor(0);
    clock.t = 5;
    assert.equal(call.attemptFor(0), attempt, 'a queued pick picked again is the same attempt');
    attempt.creatingStream();
    attempt.streamStarted();
    clock.t = 9;
    attempt.ended();
    call.callEnded();
    const m = await otel.collect();
    for (const name of A96) assert.equal(point(m, name), undefined, name);
  });

  test('A96 retries and retry_delay: attempts 0, 1, 2 (grpc-previous-rpc-attempts) with 100 ms and 250 ms between them record retries 2 and 0.35 s, on grpc.method and grpc.target', async () => {
    const { otel, clock, tracers } = channel();
    const call = tracers.forCall('/pkg.Echo/Say');
    for (const [previous, gapMs] of [
      [0, 0],
      [1, 100],
      [2, 250],
    ] as const) {
      clock.t += gapMs;
      const attempt = call.attemptFor(previous);
      attempt.creatingStream();
      attempt.streamStarted();
      clock.t += 7; // the attempt itself is not delay
      attempt.ended();
    }
    call.callEnded();
    call.callEnded(); // recorded once
    const m = await otel.collect();
    const labels = { 'grpc.method': 'pkg.Echo/Say', 'grpc.target': TARGET };
    assert.deepEqual(point(m, 'grpc.client.call.retries'), { count: 1, sum: 2, attributes: labels });
    const delay = point(m, 'grpc.client.call.retry_delay')!;
    assert.equal(delay.count, 1);
    assert.ok(Math.abs(delay.sum - 0.35) < 1e-9, `${delay.sum}`);
    assert.deepEqual(delay.attributes, labels);
    assert.equal(point(m, 'grpc.client.call.transparent_retries'), undefined);
    assert.equal(point(m, 'grpc.client.call.hedges'), undefined);
  });

  test('a failed pick ends its attempt (not wait-for-ready): the delay counts from that pick to the retry', async () => {
    const { otel, clock, tracers } = channel();
    const call = tracers.forCall('/pkg.Echo/Say');
    call.attemptFor(0).ended();
    clock.t = 40;
    const retry = call.attemptFor(1);
    retry.creatingStream();
    retry.streamStarted();
    clock.t = 45;
    retry.ended();
    call.callEnded();
    const m = await otel.collect();
    assert.equal(point(m, 'grpc.client.call.retries')?.sum, 1);
    assert.ok(Math.abs(point(m, 'grpc.client.call.retry_delay')!.sum - 0.04) < 1e-9);
  });

  test('transparent retries: a refused stream (a pick with the same count while the attempt streams) and a stream that could not be created (while it creates) count; a pick again after "not ready" does not', async () => {
    const { otel, clock, tracers } = channel();
    const call = tracers.forCall('/pkg.Echo/Say');
    const first = call.attemptFor(0);
    first.creatingStream();
    first.streamStarted();
    clock.t = 3;
    // REFUSED_STREAM: grpc-js starts the transparent retry before it reports the refused attempt's end.
    const transparent = call.attemptFor(0);
    assert.notEqual(transparent, first);
    first.ended();
    // The transparent attempt's picked subchannel was no longer ready: picked again, the same attempt.
    assert.equal(call.attemptFor(0), transparent);
    transparent.creatingStream();
    // createCall threw: grpc-js starts a transparent retry at once.
    const second = call.attemptFor(0);
    assert.notEqual(second, transparent);
    second.creatingStream();
    second.streamStarted();
    clock.t = 10;
    second.ended();
    clock.t = 110;
    const retry = call.attemptFor(1);
    retry.streamStarted();
    clock.t = 115;
    retry.ended();
    call.callEnded();
    const m = await otel.collect();
    assert.equal(point(m, 'grpc.client.call.transparent_retries')?.sum, 2);
    assert.equal(point(m, 'grpc.client.call.retries')?.sum, 1);
    // Transparent retries start as their attempt ends: only the retry's backoff is delay.
    assert.ok(Math.abs(point(m, 'grpc.client.call.retry_delay')!.sum - 0.1) < 1e-9);
  });

  test('hedging: attempts started while another is active are hedges; with no gap, the delay is 0 (recorded: there were hedges)', async () => {
    const { otel, clock, tracers } = channel();
    const call = tracers.forCall('/pkg.Echo/Say');
    call.hedging = true;
    const a = call.attemptFor(0);
    a.streamStarted();
    clock.t = 50;
    const b = call.attemptFor(1);
    b.streamStarted();
    clock.t = 100;
    const c = call.attemptFor(2);
    c.streamStarted();
    clock.t = 120;
    c.ended();
    a.ended();
    b.ended();
    call.callEnded();
    const m = await otel.collect();
    assert.equal(point(m, 'grpc.client.call.hedges')?.sum, 2);
    assert.equal(point(m, 'grpc.client.call.retries'), undefined);
    assert.equal(point(m, 'grpc.client.call.retry_delay')?.sum, 0);
  });

  test("hedging with a refused stream: its transparent retry carries the newest hedge's count while that hedge streams on; the refused attempt alone ends", async () => {
    const { otel, clock, tracers } = channel();
    const call = tracers.forCall('/pkg.Echo/Say');
    call.hedging = true;
    const a = call.attemptFor(0);
    a.streamStarted();
    clock.t = 10;
    const b = call.attemptFor(1);
    b.streamStarted();
    clock.t = 15;
    // `a` is refused: grpc-js stamps its transparent retry with its current count, b's.
    const t = call.attemptFor(1);
    assert.notEqual(t, b);
    a.ended();
    t.streamStarted();
    clock.t = 20;
    t.ended();
    clock.t = 40;
    const c = call.attemptFor(2); // b still streams: no delay
    c.streamStarted();
    clock.t = 50;
    b.ended();
    clock.t = 60;
    c.ended();
    call.callEnded();
    const m = await otel.collect();
    assert.equal(point(m, 'grpc.client.call.hedges')?.sum, 2);
    assert.equal(point(m, 'grpc.client.call.transparent_retries')?.sum, 1);
    assert.equal(point(m, 'grpc.client.call.retry_delay')?.sum, 0);
  });

  test('a call that ended: later picks and hook calls record nothing more', async () => {
    const { otel, tracers } = channel();
    const call = tracers.forCall('/pkg.Echo/Say');
    call.attemptFor(0).ended();
    call.callEnded();
    const late = call.attemptFor(1);
    late.streamStarted();
    late.ended();
    call.callEnded();
    const m = await otel.collect();
    for (const name of A96) assert.equal(point(m, name), undefined, name);
  });

  test('A66 / A96 buckets reach the SDK as advice: retries [1,2,3,4,5], retry_delay the latency buckets', async () => {
    const { otel, tracers } = channel();
    const call = tracers.forCall('/pkg.Echo/Say');
    call.attemptFor(0).ended();
    call.attemptFor(1).ended();
    call.callEnded();
    const { resourceMetrics } = await otel.reader.collect();
    const byName = new Map(
      resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).map((x) => [x.descriptor.name, x]),
    );
    const boundaries = (name: string) =>
      (byName.get(name)!.dataPoints[0]!.value as { buckets: { boundaries: number[] } }).buckets.boundaries;
    assert.deepEqual(boundaries('grpc.client.call.retries'), [1, 2, 3, 4, 5]);
    assert.deepEqual(boundaries('grpc.client.call.retry_delay'), [...LATENCY_BUCKETS]);
  });
});
