// A94's optional grpc.security_level label on grpc.subchannel.open_connections, from the subchannel's side: a
// connection is counted open under the level it had when it became READY and closed under the same one, even
// when the next connection of the subchannel has another level; the level is not read when the metric is off.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CONNECTING,
  IDLE,
  READY,
  type SecurityLevel,
  SubchannelMetrics,
  TRANSIENT_FAILURE,
} from '../../src/core/index.js';
import { OtelMetrics } from '../support/otel-metrics.js';

const OPEN = 'grpc.subchannel.open_connections';

async function openByLevel(otel: OtelMetrics): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const p of (await otel.collect()).get(OPEN)?.points ?? []) {
    out[String(p.attributes['grpc.security_level'])] = p.value;
  }
  return out;
}

describe('A94 grpc.security_level', () => {
  test('each connection is counted open and closed under its own level', async () => {
    const otel = new OtelMetrics();
    const recorder = otel.recorder('dns:///x', [OPEN], ['grpc.security_level']);
    let level: SecurityLevel = 'none';
    const metrics = new SubchannelMetrics(recorder, {}, IDLE, () => level);
    metrics.onState(CONNECTING);
    metrics.onState(READY);
    assert.deepEqual(await openByLevel(otel), { none: 1 });
    level = 'privacy_and_integrity';
    metrics.onState(IDLE, 'read ECONNRESET');
    assert.deepEqual(await openByLevel(otel), { none: 0 }, 'closed under "none", the level it opened with');
    metrics.onState(CONNECTING);
    metrics.onState(READY);
    assert.deepEqual(await openByLevel(otel), { none: 0, privacy_and_integrity: 1 });
    metrics.shutdown();
    assert.deepEqual(await openByLevel(otel), { none: 0, privacy_and_integrity: 0 });
    metrics.onState(READY);
    assert.deepEqual(
      await openByLevel(otel),
      { none: 0, privacy_and_integrity: 0 },
      'a change queued before the shutdown and delivered after it counts nothing',
    );
  });

  test('an unknown level leaves the label out; with the metric off the level is never read', async () => {
    const otel = new OtelMetrics();
    const recorder = otel.recorder('dns:///x', [OPEN], ['grpc.security_level']);
    const unknown = new SubchannelMetrics(recorder, {}, CONNECTING, () => undefined);
    unknown.onState(READY);
    assert.deepEqual(await openByLevel(otel), { undefined: 1 });

    let reads = 0;
    const off = otel.recorder('dns:///y', ['grpc.subchannel.disconnections'], ['grpc.security_level']);
    const quiet = new SubchannelMetrics(off, {}, CONNECTING, () => {
      reads++;
      return 'none';
    });
    quiet.onState(READY);
    quiet.onState(TRANSIENT_FAILURE);
    assert.equal(reads, 0);
  });
});
