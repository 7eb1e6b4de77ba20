// The live view's metrics of channels sharing an XdsClient (A78, A79): the client records once, through the
// first channel's recorder and under its grpc.target; each channel's page shows its own instruments and the
// client's series from that recorder, never a second copy.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SUBCHANNEL_CONNECTION_ATTEMPTS_SUCCEEDED } from '../../src/core/index.js';
import { channelInstrumentValues } from '../../src/grpc-js/xds-client-metric-values.js';
import { type MetricsOptions, metricsRecorderFor } from '../../src/metrics/index.js';
import { XDS_CLIENT_RESOURCE_UPDATES_VALID } from '../../src/xds/client/metrics.js';

const OPTIONS: MetricsOptions = {
  enableMetrics: ['grpc.xds_client.resource_updates_valid', 'grpc.subchannel.connection_attempts_succeeded'],
};
const CLUSTER = { 'grpc.xds.server': 'cp:443', 'grpc.xds.resource_type': 'envoy.config.cluster.v3.Cluster' };

function setup() {
  const first = metricsRecorderFor('xds:///a', OPTIONS)!;
  const second = metricsRecorderFor('xds:///b', OPTIONS)!;
  // The client records through the first channel's recorder; each channel's tree through its own.
  first.addCounter(XDS_CLIENT_RESOURCE_UPDATES_VALID, 3, CLUSTER);
  first.addCounter(SUBCHANNEL_CONNECTION_ATTEMPTS_SUCCEEDED, 1, {});
  second.addCounter(SUBCHANNEL_CONNECTION_ATTEMPTS_SUCCEEDED, 2, {});
  return { first, second };
}

const clientSeries = [{ labels: { 'grpc.target': 'xds:///a', ...CLUSTER }, value: 3 }];

test('the second channel shows its own instruments and the client series of the first channel’s recorder', () => {
  const { first, second } = setup();
  const values = channelInstrumentValues(second, first);
  assert.deepEqual(
    values?.map((i) => [i.name, i.points]),
    [
      [
        'grpc.subchannel.connection_attempts_succeeded',
        [{ labels: { 'grpc.target': 'xds:///b' }, value: 2 }],
      ],
      ['grpc.xds_client.resource_updates_valid', clientSeries],
    ],
  );
});

test('the first channel shows its values once (the client records through its recorder)', () => {
  const { first } = setup();
  const values = channelInstrumentValues(first, first);
  assert.deepEqual(
    values?.find((i) => i.name === 'grpc.xds_client.resource_updates_valid')?.points,
    clientSeries,
  );
  assert.deepEqual(values?.find((i) => i.name === 'grpc.subchannel.connection_attempts_succeeded')?.points, [
    { labels: { 'grpc.target': 'xds:///a' }, value: 1 },
  ]);
  assert.equal(values?.length, 2);
});

test('a channel with no metrics options shows the client series; with no client recorder, only its own', () => {
  const { first, second } = setup();
  assert.deepEqual(
    channelInstrumentValues(undefined, first)?.map((i) => [i.name, i.points]),
    [['grpc.xds_client.resource_updates_valid', clientSeries]],
  );
  assert.deepEqual(
    channelInstrumentValues(second, undefined)?.find(
      (i) => i.name === 'grpc.xds_client.resource_updates_valid',
    )?.points,
    [],
  );
  assert.equal(channelInstrumentValues(undefined, undefined), undefined);
});
