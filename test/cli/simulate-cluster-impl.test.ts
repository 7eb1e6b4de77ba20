// lbtree simulate runs the tree an xds: channel's cds builds, xds_cluster_impl included: its drops (EDS
// drop_overloads) and circuit-breaking refusals (A37) show in the timeline, the summary and the charts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { htmlReport } from '../../src/cli/simulate/html.js';
import { textReport } from '../../src/cli/simulate/report.js';
import { runScenario, type SimulationReport } from '../../src/cli/simulate/run-scenario.js';
import { parseScenario } from '../../src/cli/simulate/scenario.js';
import { clusterToTreeFromJson } from '../../src/xds/index.js';

const example = (name: string) => parse(readFileSync(join('examples/simulate', name), 'utf8'));

function cluster(maxRequests?: number): unknown {
  const { circuit_breakers: _, ...c } = example('cluster-circuit-breaking.yaml') as Record<string, unknown>;
  if (maxRequests === undefined) return c;
  return { ...c, circuit_breakers: { thresholds: [{ priority: 'DEFAULT', max_requests: maxRequests }] } };
}

function endpoints(dropPercent?: number): unknown {
  const { policy: _, ...e } = example('endpoints-drop-overloads.yaml') as Record<string, unknown>;
  if (dropPercent === undefined) return e;
  return {
    ...e,
    policy: {
      drop_overloads: [
        { category: 'throttle', drop_percentage: { numerator: dropPercent, denominator: 'HUNDRED' } },
      ],
    },
  };
}

function run(clusterJson: unknown, endpointsJson: unknown, scenario: unknown): SimulationReport {
  return runScenario(clusterToTreeFromJson(clusterJson, endpointsJson), parseScenario(scenario));
}

const total = (report: SimulationReport, of: (s: SimulationReport['steps'][number]) => number) =>
  report.steps.reduce((a, s) => a + of(s), 0);
const dropped = (report: SimulationReport, category: string) =>
  total(report, (s) => s.dropped.get(category) ?? 0);

describe('lbtree simulate shows what xds_cluster_impl does (A37)', () => {
  test('A37 drop_overloads: 10 % of 4,000 calls dropped under their category; none without the policy', () => {
    const scenario = { duration: '20s', rps: 200 };
    const report = run(cluster(), endpoints(10), scenario);
    const n = dropped(report, 'throttle');
    // Binomial(4000, 0.1): mean 400, sd 19; ±4 sd.
    assert.ok(n > 324 && n < 476, `dropped ${n} of 4000`);
    assert.equal(
      total(report, (s) => s.refused),
      0,
    );
    assert.equal(
      total(report, (s) => s.failed),
      0,
      'a drop is not counted as a failed pick',
    );
    assert.equal(dropped(run(cluster(), endpoints(), scenario), 'throttle'), 0);
  });

  test('A37 circuit breaking on both sides of max_requests: 3 calls in flight at each pick pass 4, not 3', () => {
    // 100 calls a second, 40 ms each: when a call is picked, the calls of the last 30 ms (3) are in flight.
    const scenario = { duration: '5s', rps: 100, call: '40ms' };
    const atLimit = run(cluster(3), endpoints(), scenario);
    assert.ok(total(atLimit, (s) => s.refused) > 100, 'max_requests 3: the fourth call in flight is refused');
    const underLimit = run(cluster(4), endpoints(), scenario);
    assert.equal(
      total(underLimit, (s) => s.refused),
      0,
      'max_requests 4: no call is refused',
    );
    // A37: without circuit_breakers the limit is 1024.
    const defaults = run(cluster(), endpoints(), { duration: '2s', rps: 1000, call: '1000ms' });
    assert.equal(
      total(defaults, (s) => s.refused),
      0,
      '1000 calls in flight are under 1024',
    );
  });

  test('the timeline, the summary and the charts name the drops and the refusals', () => {
    const report = run(cluster(4), endpoints(10), example('scenario-overload.yaml'));
    const text = textReport(report);
    assert.match(text, /dropped throttle=\d+ {3}refused=\d+/);
    const n = dropped(report, 'throttle');
    const refused = total(report, (s) => s.refused);
    assert.ok(refused > 0);
    assert.match(
      text,
      new RegExp(
        `xds_cluster_impl: dropped by category: throttle ${n}; refused by circuit breaking: ${refused}`,
      ),
    );
    const page = htmlReport(report, 'overload', text, parseScenario(example('scenario-overload.yaml')));
    assert.match(page, /\(dropped\)/);
    assert.match(page, /\(refused\)/);
  });
});
