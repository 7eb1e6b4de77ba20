import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  Code,
  type CompletePick,
  completeBackendMetricReport,
  OK_STATUS,
  type PickArgs,
  status,
} from '../../src/core/index.js';
import { Simulation, type SubchannelHandle } from '../../src/sim/index.js';
import { connectAll, tally } from '../support/sim-picks.js';

const ARGS: PickArgs = { metadata: { get: () => [] } };
const KEYS = ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80'] as const;
const [A, B, C] = KEYS;
const CONVERGED = { [A]: 4 / 7, [B]: 2 / 7, [C]: 1 / 7 };
const EVEN = { [A]: 1 / 3, [B]: 1 / 3, [C]: 1 / 3 };

function oob(fields: Record<string, unknown> = {}): unknown[] {
  return [
    {
      weighted_round_robin: {
        blackoutPeriod: '0s',
        weightUpdatePeriod: '1s',
        enableOobLoadReport: true,
        oobReportingPeriod: '1s',
        ...fields,
      },
    },
  ];
}

/** Each backend's ORCA service reports `utilization` (application_utilization) at 100 qps. */
function serve(sim: Simulation, utilization: readonly number[]): void {
  KEYS.forEach((k, i) => {
    sim.orca(k).report = { applicationUtilization: utilization[i]!, rpsFractional: 100 };
  });
}

/** `n` picks, each call ending with a per-call report of `perCall[key]` utilization when given. */
function picks(sim: Simulation, n: number, perCall: Record<string, number> = {}): Record<string, number> {
  const seen: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = sim.picker.pick(ARGS) as CompletePick;
    assert.equal(r.type, 'complete');
    const key = (r.subchannel as SubchannelHandle).key;
    seen.push(key);
    const u = perCall[key];
    r.onCallEnded?.(OK_STATUS, {
      backendMetrics:
        u === undefined ? undefined : completeBackendMetricReport({ cpuUtilization: u, rpsFractional: 100 }),
    });
  }
  return tally(seen);
}

function near(counts: Record<string, number>, total: number, want: Record<string, number>): void {
  for (const [k, share] of Object.entries(want)) {
    const got = (counts[k] ?? 0) / total;
    assert.ok(Math.abs(got - share) < 0.02, `${k}: ${got} vs ${share} in ${JSON.stringify(counts)}`);
  }
}

describe('weighted_round_robin with out-of-band load reports (A58 "OOB Load Reporting", A51)', () => {
  test('A58 "OOB Load Reporting": weights come from each endpoint\'s ORCA stream, one stream per subchannel', () => {
    const sim = new Simulation();
    connectAll(sim, KEYS, oob());
    near(picks(sim, 3000), 3000, EVEN); // no report yet
    serve(sim, [0.2, 0.4, 0.8]);
    sim.advance(2000);
    near(picks(sim, 7000), 7000, CONVERGED);
    for (const k of KEYS) {
      assert.equal(sim.orca(k).streamsOpened, 1, `${k}: one StreamCoreMetrics call`);
      assert.equal(sim.orca(k).openStreams, 1);
    }
  });

  test('A58 "Per-Call Load Reporting": while enable_oob_load_report is set, per-call reports are ignored', () => {
    const sim = new Simulation();
    serve(sim, [0.5, 0.5, 0.5]);
    connectAll(sim, KEYS, oob());
    const contrary = { [A]: 0.8, [B]: 0.4, [C]: 0.2 };
    picks(sim, 3000, contrary);
    sim.advance(1000);
    near(picks(sim, 3000, contrary), 3000, EVEN);
  });

  test('A51: the stream asks for oob_reporting_period and reports arrive at that interval', () => {
    const sim = new Simulation();
    serve(sim, [0.2, 0.4, 0.8]);
    connectAll(sim, KEYS, oob({ oobReportingPeriod: '2.5s' }));
    sim.advance(10_000);
    const server = sim.orca(A);
    assert.deepEqual(server.requestedPeriodsMs, [2500]);
    const gaps = server.reportTimes.slice(1).map((t, i) => t - server.reportTimes[i]!);
    assert.ok(gaps.length >= 3);
    assert.ok(
      gaps.every((g) => g === 2500),
      `gaps ${gaps}`,
    );
  });

  test('A58: a new oob_reporting_period restarts the stream; disabling OOB closes it and per-call reports count again', () => {
    const sim = new Simulation();
    serve(sim, [0.5, 0.5, 0.5]);
    connectAll(sim, KEYS, oob());
    sim.update(KEYS, oob({ oobReportingPeriod: '0.5s' }));
    assert.deepEqual(sim.orca(A).requestedPeriodsMs, [1000, 500]);
    assert.equal(sim.orca(A).openStreams, 1);
    sim.update(KEYS, oob({ enableOobLoadReport: false }));
    for (const k of KEYS) assert.equal(sim.orca(k).openStreams, 0, `${k}: stream closed`);
    const perCall = { [A]: 0.2, [B]: 0.4, [C]: 0.8 };
    picks(sim, 3000, perCall);
    sim.advance(1000);
    near(picks(sim, 7000, perCall), 7000, CONVERGED);
  });

  test('A51: a stream that ends is restarted (at once after a report, with backoff otherwise); weights keep flowing', () => {
    const sim = new Simulation();
    serve(sim, [0.2, 0.4, 0.8]);
    connectAll(sim, KEYS, oob({ weightExpirationPeriod: '3s' }));
    const server = sim.orca(A);
    sim.advance(100);
    server.endStreams(status(Code.UNAVAILABLE, 'restarting'));
    assert.equal(server.streamsOpened, 2, 'reopened at once: the ended call had delivered a report');
    // Now the service fails every new call before reporting: retries back off (1 s, then 1.6 s, ±20 %).
    server.failNewStreams = status(Code.UNAVAILABLE, 'overloaded');
    const before = server.streamsOpened;
    server.endStreams();
    assert.equal(server.streamsOpened, before + 1, 'reopened at once (the ended call had reported)');
    sim.advance(790);
    assert.equal(server.streamsOpened, before + 1, 'the failed reopen waits out the first backoff');
    sim.advance(410);
    assert.equal(server.streamsOpened, before + 2, 'one retry within 1 s ± 20 %');
    server.failNewStreams = null;
    sim.advance(2000);
    assert.equal(server.openStreams, 1, 'the next retry succeeded');
    sim.advance(1000);
    near(picks(sim, 7000), 7000, CONVERGED);
  });

  test('A51: a server without the ORCA service (UNIMPLEMENTED) is not asked again on that connection', () => {
    const sim = new Simulation();
    serve(sim, [0.2, 0.4, 0.8]);
    sim.orca(C).implemented = false;
    connectAll(sim, KEYS, oob());
    sim.advance(60_000);
    assert.equal(sim.orca(C).streamsOpened, 1);
    assert.equal(sim.orca(A).openStreams, 1);
    // C's weight is unknown: it takes the mean of the known ones (A: 500, B: 250 → 375).
    near(picks(sim, 11_250), 11_250, { [A]: 500 / 1125, [B]: 250 / 1125, [C]: 375 / 1125 });
  });

  test('A51: the stream closes when the connection is lost and opens again on the new one', () => {
    const sim = new Simulation();
    serve(sim, [0.2, 0.4, 0.8]);
    connectAll(sim, KEYS, oob());
    sim.subchannel(A).setState('IDLE');
    assert.equal(sim.orca(A).openStreams, 0);
    sim.advance(10);
    assert.equal(sim.orca(A).streamsOpened, 2);
    assert.equal(sim.orca(A).openStreams, 1);
  });
});
