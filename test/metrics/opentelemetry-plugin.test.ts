// A79's plugin side: the instrument registry, enabling by name, a MeterProvider that throws, bad options, and
// lbtree loading without @opentelemetry/api installed.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  findInstrument,
  type InstrumentDescriptor,
  registeredInstruments,
  registerInstrument,
} from '../../src/core/index.js';
import {
  ChannelMetricsRecorder,
  checkMetricsOptions,
  type MeterProviderShape,
  metricsRecorderFor,
  OpenTelemetryStatsPlugin,
  unknownMetricNames,
} from '../../src/metrics/index.js';
import { PICK_FIRST_DISCONNECTIONS } from '../../src/policies/index.js';
import { sourceModule } from '../support/child-node.js';
import { OtelMetrics, sumOf } from '../support/otel-metrics.js';
import { runRefusing } from '../support/refused-modules.js';

describe('A79 instrument registry', () => {
  test('each instrument is registered once with its name, unit, type and labels; all are experimental, so off by default', () => {
    const pf = findInstrument('grpc.lb.pick_first.disconnections')!;
    assert.equal(pf, PICK_FIRST_DISCONNECTIONS);
    assert.deepEqual(
      { unit: pf.unit, type: pf.type, labels: pf.labels, optionalLabels: pf.optionalLabels },
      { unit: '{disconnection}', type: 'counter', labels: ['grpc.target'], optionalLabels: [] },
    );
    const weights = findInstrument('grpc.lb.wrr.endpoint_weights')!;
    assert.equal(weights.type, 'histogram');
    assert.deepEqual(weights.optionalLabels, ['grpc.lb.locality', 'grpc.lb.backend_service']);
    assert.equal(findInstrument('grpc.subchannel.open_connections')!.type, 'up_down_counter');
    const names = registeredInstruments().map((i) => i.name);
    assert.equal(new Set(names).size, names.length);
    for (const i of registeredInstruments()) assert.equal(i.enabledByDefault, false, i.name);
  });

  test('the same name again: the first descriptor if identical, an error naming it otherwise', () => {
    const spec = {
      name: 'lbtree.test.counter',
      description: 'a test counter',
      unit: '{thing}',
      type: 'counter' as const,
      labels: ['grpc.target'],
      optionalLabels: [],
      enabledByDefault: false,
    };
    const first = registerInstrument(spec);
    assert.equal(registerInstrument({ ...spec }), first);
    assert.throws(
      () => registerInstrument({ ...spec, unit: '{other}' }),
      /lbtree\.test\.counter is already registered/,
    );
  });
});

describe('A79 OpenTelemetry plugin', () => {
  test('enableMetrics turns an off-by-default metric on; disableMetrics wins over it', () => {
    const otel = new OtelMetrics();
    const on = new OpenTelemetryStatsPlugin({
      meterProvider: otel.meterProvider,
      enableMetrics: [PICK_FIRST_DISCONNECTIONS.name],
    });
    assert.equal(on.isEnabled(PICK_FIRST_DISCONNECTIONS), true);
    const off = new OpenTelemetryStatsPlugin({
      meterProvider: otel.meterProvider,
      enableMetrics: [PICK_FIRST_DISCONNECTIONS.name],
      disableMetrics: [PICK_FIRST_DISCONNECTIONS.name],
    });
    assert.equal(off.isEnabled(PICK_FIRST_DISCONNECTIONS), false);
    assert.equal(
      new OpenTelemetryStatsPlugin({ meterProvider: otel.meterProvider }).isEnabled(
        PICK_FIRST_DISCONNECTIONS,
      ),
      false,
    );
  });

  test('names no instrument has are listed (a typo records nothing)', () => {
    const names = unknownMetricNames({
      meterProvider: new OtelMetrics().meterProvider,
      enableMetrics: ['grpc.lb.pick_first.disconnections', 'grpc.lb.wrr.rbe_fallback'],
      disableMetrics: ['grpc.subchannel.open_connection'],
    });
    assert.deepEqual(names, ['grpc.lb.wrr.rbe_fallback', 'grpc.subchannel.open_connection']);
  });

  test('a MeterProvider that throws: one clear log line, nothing thrown to the caller, nothing recorded after', () => {
    const logged: string[] = [];
    const throwing: MeterProviderShape = {
      getMeter: () => {
        throw new Error('exporter misconfigured');
      },
    };
    const plugin = new OpenTelemetryStatsPlugin(
      { meterProvider: throwing, enableMetrics: [PICK_FIRST_DISCONNECTIONS.name] },
      (m) => logged.push(m),
    );
    const recorder = new ChannelMetricsRecorder('dns:///x', [plugin]);
    assert.equal(recorder.isEnabled(PICK_FIRST_DISCONNECTIONS), true);
    for (let i = 0; i < 3; i++) recorder.addCounter(PICK_FIRST_DISCONNECTIONS, 1, {});
    assert.equal(logged.length, 1);
    assert.match(logged[0]!, /^lbtree: the MeterProvider given for metrics threw.*exporter misconfigured/s);
    assert.equal(
      recorder.isEnabled(PICK_FIRST_DISCONNECTIONS),
      false,
      'a failed plugin records nothing more',
    );
  });

  test('an instrument whose add throws, and a gauge callback that throws: logged, never thrown', async () => {
    const logged: string[] = [];
    const otel = new OtelMetrics();
    const gauge = findInstrument('grpc.xds_client.connected') as InstrumentDescriptor<'gauge'> | undefined;
    const plugin = new OpenTelemetryStatsPlugin(
      {
        meterProvider: {
          getMeter: (name) => {
            const meter = otel.meterProvider.getMeter(name);
            return {
              createCounter: () => ({
                add: () => {
                  throw new Error('add failed');
                },
              }),
              createUpDownCounter: (n, o) => meter.createUpDownCounter(n, o),
              createHistogram: (n, o) => meter.createHistogram(n, o),
              createObservableGauge: (n, o) => meter.createObservableGauge(n, o),
            };
          },
        },
        enableMetrics: [PICK_FIRST_DISCONNECTIONS.name, 'lbtree.test.gauge'],
      },
      (m) => logged.push(m),
    );
    assert.equal(gauge, undefined, 'the xDS client is not loaded by this test file');
    const testGauge = registerInstrument({
      name: 'lbtree.test.gauge',
      description: 'a test gauge',
      unit: '{thing}',
      type: 'gauge',
      labels: ['grpc.target'],
      optionalLabels: [],
      enabledByDefault: false,
    });
    const recorder = new ChannelMetricsRecorder('dns:///x', [plugin]);
    recorder.registerGaugeCallback([testGauge], () => {
      throw new Error('callback failed');
    });
    // A callback of lbtree's that throws is logged and the plugin goes on; the MeterProvider's failure stops it.
    await otel.collect();
    recorder.addCounter(PICK_FIRST_DISCONNECTIONS, 1, {});
    recorder.addCounter(PICK_FIRST_DISCONNECTIONS, 1, {});
    assert.equal(logged.length, 2);
    assert.match(logged[0]!, /lbtree\.test\.gauge gauge callback failed.*callback failed/s);
    assert.match(logged[1]!, /MeterProvider given for metrics threw.*add failed/s);
  });

  test('a gauge callback reports under the channel target; removing it stops the reports', async () => {
    const otel = new OtelMetrics();
    const testGauge = registerInstrument({
      name: 'lbtree.test.level',
      description: 'a test gauge',
      unit: '{thing}',
      type: 'gauge',
      labels: ['grpc.target', 'lbtree.test.key'],
      optionalLabels: [],
      enabledByDefault: false,
    });
    const recorder = otel.recorder('dns:///svc', ['lbtree.test.level']);
    let level = 7;
    const remove = recorder.registerGaugeCallback([testGauge], (r) =>
      r.report(testGauge, level, { 'lbtree.test.key': 'k' }),
    );
    let m = await otel.collect();
    assert.deepEqual(
      m.get('lbtree.test.level')!.points.map((p) => [p.attributes, p.value]),
      [[{ 'grpc.target': 'dns:///svc', 'lbtree.test.key': 'k' }, 7]],
    );
    level = 3;
    m = await otel.collect();
    assert.equal(sumOf(m.get('lbtree.test.level')), 3);
    remove();
    level = 99;
    m = await otel.collect();
    assert.notEqual(sumOf(m.get('lbtree.test.level')), 99);
  });
});

test('metricsChannelOption: the options print as JSON (grpc-js traces channel options) with a circular MeterProvider', async () => {
  const { metricsChannelOption, METRICS_CHANNEL_OPTION } = await import('../../src/grpc-js/index.js');
  const otel = new OtelMetrics(); // a MeterProvider with a reader is circular
  assert.throws(() => JSON.stringify({ m: otel.meterProvider }), /circular/);
  const option = metricsChannelOption({
    meterProvider: otel.meterProvider,
    enableMetrics: ['grpc.lb.wrr.rr_fallback'],
  });
  assert.equal(option.meterProvider, otel.meterProvider);
  assert.deepEqual(JSON.parse(JSON.stringify({ [METRICS_CHANNEL_OPTION]: option })), {
    'lbtree.metrics': { meterProvider: '[MeterProvider]', enableMetrics: ['grpc.lb.wrr.rr_fallback'] },
  });
  assert.throws(
    () => metricsChannelOption({ meterProvider: {} } as never),
    /metricsChannelOption\.meterProvider: expected an OpenTelemetry MeterProvider/,
  );
  // Without a MeterProvider (the live view only), there is none to print.
  assert.deepEqual(
    JSON.parse(JSON.stringify(metricsChannelOption({ enableMetrics: ['grpc.lb.wrr.rr_fallback'] }))),
    {
      enableMetrics: ['grpc.lb.wrr.rr_fallback'],
    },
  );
});

describe('metrics options (bad input names the field)', () => {
  test('a missing or wrong meterProvider, a non-array or an empty name', () => {
    assert.throws(
      () => checkMetricsOptions(undefined, 'metrics'),
      /^TypeError: metrics: expected an object \(meterProvider, enableMetrics, …\), got undefined/,
    );
    assert.throws(
      () => checkMetricsOptions({ meterProvider: {} }, 'channel option lbtree.metrics'),
      /channel option lbtree\.metrics\.meterProvider: expected an OpenTelemetry MeterProvider \(an object with getMeter\(\)\), got object/,
    );
    const meterProvider = new OtelMetrics().meterProvider;
    assert.throws(
      () => checkMetricsOptions({ meterProvider, enableMetrics: 'grpc.lb.wrr.rr_fallback' }, 'metrics'),
      /metrics\.enableMetrics: expected an array of names, got "grpc\.lb\.wrr\.rr_fallback"/,
    );
    assert.throws(
      () => checkMetricsOptions({ meterProvider, optionalLabels: ['grpc.lb.locality', ''] }, 'metrics'),
      /metrics\.optionalLabels\[1\]: expected a non-empty string, got ""/,
    );
    assert.doesNotThrow(() =>
      checkMetricsOptions({ meterProvider, enableMetrics: ['grpc.lb.wrr.rr_fallback'] }, 'metrics'),
    );
  });
});

test("README's console exporter setup exports lbtree's metrics", async () => {
  const { ConsoleMetricExporter, MeterProvider, PeriodicExportingMetricReader } = await import(
    '@opentelemetry/sdk-metrics'
  );
  const reader = new PeriodicExportingMetricReader({
    exporter: new ConsoleMetricExporter(),
    exportIntervalMillis: 60_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const recorder = metricsRecorderFor('dns:///readme', {
    meterProvider,
    enableMetrics: [PICK_FIRST_DISCONNECTIONS.name],
  })!;
  recorder.addCounter(PICK_FIRST_DISCONNECTIONS, 2, {});
  const printed: unknown[] = [];
  const original = console.dir;
  console.dir = (item: unknown) => printed.push(item);
  try {
    await reader.forceFlush();
  } finally {
    console.dir = original;
    await meterProvider.shutdown();
  }
  const exported = printed as {
    descriptor: { name: string; unit: string };
    dataPoints: { value: number; attributes: object }[];
  }[];
  const pf = exported.find((e) => e.descriptor.name === 'grpc.lb.pick_first.disconnections');
  assert.ok(pf, JSON.stringify(printed));
  assert.equal(pf.descriptor.unit, '{disconnection}');
  assert.deepEqual(
    pf.dataPoints.map((p) => [p.attributes, p.value]),
    [[{ 'grpc.target': 'dns:///readme' }, 2]],
  );
});

test('lbtree, its grpc-js adapter and metrics through a MeterProvider load without @opentelemetry/* installed', () => {
  const script = `
    const root = await import('${sourceModule('src/index.ts')}');
    const adapter = await import('${sourceModule('src/grpc-js/index.ts')}');
    const seen = [];
    const instrument = () => ({ add: (v) => seen.push(v), record: (v) => seen.push(v) });
    const meterProvider = { getMeter: () => ({ createCounter: instrument, createUpDownCounter: instrument, createHistogram: instrument, createObservableGauge: () => ({ addCallback() {}, removeCallback() {} }) }) };
    adapter.register({ metrics: { meterProvider, enableMetrics: ['grpc.lb.pick_first.disconnections', 'grpc.xds_client.connected', 'grpc.lb.wrr.rbe_fallback'] } });
    const recorder = root.metricsRecorderFor('dns:///x');
    const pf = root.registeredInstruments().find((i) => i.name === 'grpc.lb.pick_first.disconnections');
    recorder.addCounter(pf, 1, {});
    if (seen.join() !== '1') process.exit(3);`;
  const run = runRefusing(['@opentelemetry/'], script);
  assert.equal(run.status, 0, run.stderr);
  // A name that is no lbtree metric is logged (the xDS client's are known before its first channel).
  assert.match(
    run.stderr,
    /register\(\{ metrics \}\) names no lbtree metric: "grpc\.lb\.wrr\.rbe_fallback" \(/,
  );
  assert.doesNotMatch(run.stderr, /grpc\.xds_client\.connected/);
  // The hook does refuse: importing the SDK under it fails.
  const refused = runRefusing(['@opentelemetry/'], `await import('@opentelemetry/api');`);
  assert.notEqual(refused.status, 0);
  assert.match(refused.stderr, /@opentelemetry\/ was loaded/);
});
