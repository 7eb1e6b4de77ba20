// `lbtree simulate` scenarios whose backends' calls fail or report load: the `errors` and `report` events,
// run through outlier detection (A50) and weighted round robin (A58) built from the examples' Clusters.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { simulate } from '../../src/cli/simulate/command.js';
import { runScenario, type Step } from '../../src/cli/simulate/run-scenario.js';
import { parseScenario } from '../../src/cli/simulate/scenario.js';
import { clusterToTreeFromJson } from '../../src/xds/index.js';

const example = (name: string) => parse(readFileSync(join('examples/simulate', name), 'utf8'));
const [E1, E2, E3] = ['10.0.0.1:8080', '10.0.0.2:8080', '10.0.0.3:8080'] as const;

function run(cluster: string, scenario: string) {
  const tree = clusterToTreeFromJson(example(cluster), example('endpoints-three-backends.yaml'));
  return { tree, report: runScenario(tree, parseScenario(example(scenario))) };
}

/** The share of `address` over the steps that start in [fromS, toS). */
function share(steps: readonly Step[], address: string, fromS: number, toS: number): number {
  let mine = 0;
  let all = 0;
  for (const s of steps) {
    if (s.atMs < fromS * 1000 || s.atMs >= toS * 1000) continue;
    for (const [name, n] of s.picks) {
      all += n;
      if (name === address) mine += n;
    }
  }
  return all === 0 ? 0 : mine / all;
}

test('simulate: a Cluster’s outlier_detection becomes outlier_detection_experimental above the priorities (A50 "xDS Integration")', () => {
  const { tree } = run('cluster-outlier-detection.yaml', 'scenario-backend-errors.yaml');
  const root = tree.config[0] as Record<string, Record<string, unknown>>;
  const od = root.outlier_detection_experimental;
  assert.ok(od, JSON.stringify(tree.config));
  assert.equal(od.interval, '1s');
  assert.deepEqual(od.failurePercentageEjection, {
    threshold: 30,
    enforcementPercentage: 100,
    minimumHosts: 3,
    requestVolume: 20,
  });
  assert.equal(od.successRateEjection, undefined, 'enforcing_success_rate 0 turns success-rate ejection off');
  assert.ok((od.childPolicy as unknown[]).some((c) => 'priority_experimental' in (c as object)));
});

test('simulate: a backend failing half its calls is ejected (its share drops to 0) and returns after base_ejection_time (A50 failure percentage)', () => {
  const { report } = run('cluster-outlier-detection.yaml', 'scenario-backend-errors.yaml');
  const { steps } = report;
  // Before the failures: a third each.
  assert.ok(Math.abs(share(steps, E2, 0, 10) - 1 / 3) < 0.02);
  // 10 s: half of 10.0.0.2's calls fail; the 11 s interval sees it over the 30 % threshold and ejects it.
  assert.ok(steps.slice(10, 11).every((s) => s.errors > 0));
  for (let s = 12; s < 20; s++)
    assert.equal(steps[s]!.picks.get(E2) ?? 0, 0, `10.0.0.2 is ejected at ${s} s`);
  assert.ok(
    steps.slice(12).every((s) => s.errors === 0),
    'no call fails once it is ejected and recovered',
  );
  // 10 s after the ejection it is un-ejected, and serves its third again.
  assert.ok(Math.abs(share(steps, E2, 25, 40) - 1 / 3) < 0.02, `${share(steps, E2, 25, 40)}`);
  assert.ok(share(steps, E1, 12, 20) > 0.45 && share(steps, E3, 12, 20) > 0.45);
});

test('simulate: weighted round robin converges to the inverse of reported utilization, and follows a backend that turns slow (A58 weights from per-call ORCA reports)', () => {
  const { report } = run('cluster-weighted-round-robin.yaml', 'scenario-backend-slows.yaml');
  const { steps } = report;
  const near = (address: string, from: number, to: number, want: number) => {
    const got = share(steps, address, from, to);
    assert.ok(
      Math.abs(got - want) <= 0.03,
      `${address} ${from}–${to} s: ${got.toFixed(3)} vs ${want.toFixed(3)}`,
    );
  };
  // 0.2 / 0.4 / 0.8 → weights 500 / 250 / 125 → 4/7, 2/7, 1/7.
  near(E1, 5, 30, 4 / 7);
  near(E2, 5, 30, 2 / 7);
  near(E3, 5, 30, 1 / 7);
  // 30 s: 10.0.0.1 reports 0.8 → weights 125 / 250 / 125.
  near(E1, 35, 60, 0.25);
  near(E2, 35, 60, 0.5);
  near(E3, 35, 60, 0.25);
  assert.ok(steps.every((s) => s.errors === 0 && s.failed === 0));
});

test('simulate: errors and report events are validated, naming the path; unknown fields are rejected', () => {
  const bad = (event: unknown, pattern: RegExp) =>
    assert.throws(() => parseScenario({ duration: '10s', events: [event] }), pattern);
  bad({ at: '1s', errors: { endpoint: 'x' } }, /scenario\.events\[0\]\.errors\.rate: missing/);
  bad(
    { at: '1s', errors: { endpoint: 'x', rate: 1.5 } },
    /scenario\.events\[0\]\.errors\.rate: expected a number from 0 to 1, got 1\.5/,
  );
  bad({ at: '1s', errors: { endpoint: 'x', rate: '50%' } }, /events\[0\]\.errors\.rate: expected a number/);
  bad(
    { at: '1s', errors: { rate: 0.5 } },
    /events\[0\]\.errors: name exactly one of endpoint, locality, priority/,
  );
  bad({ at: '1s', report: { endpoint: 'x' } }, /events\[0\]\.report\.utilization: missing/);
  bad(
    { at: '1s', report: { endpoint: 'x', utilization: -1 } },
    /report\.utilization: expected a number of at least 0/,
  );
  bad(
    { at: '1s', report: { endpoint: 'x', utilization: 0.5, qps: 'lots' } },
    /report\.qps: expected a number/,
  );
  bad(
    { at: '1s', report: { endpoint: 'x', utilization: 0.5, cpu: 1 } },
    /events\[0\]\.report\.cpu: unknown field \(expected one of endpoint, locality, priority, utilization, qps\)/,
  );
  bad({ at: '1s', fail: { endpoint: 'x', rate: 0.5 } }, /events\[0\]\.fail\.rate: unknown field/);
  const ok = parseScenario({
    duration: '10s',
    events: [
      { at: '1s', errors: { locality: 'zone-a', rate: 0.25 } },
      { at: '2s', report: { priority: 0, utilization: 0.7 } },
    ],
  });
  assert.deepEqual(ok.events[0]!.calls, { errorRate: 0.25 });
  assert.deepEqual(ok.events[1]!.calls, { utilization: 0.7, qps: 100 });
  assert.deepEqual(ok.events[1]!.target, { priority: '0' });
});

test('simulate: the examples run from the command’s entry and their pages chart the call errors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lbtree-'));
  for (const [cluster, scenario, marker] of [
    ['cluster-outlier-detection.yaml', 'scenario-backend-errors.yaml', /errors 50%.*10\.0\.0\.2:8080/],
    [
      'cluster-weighted-round-robin.yaml',
      'scenario-backend-slows.yaml',
      /report utilization 0\.8 qps 100.*10\.0\.0\.1:8080/,
    ],
  ] as const) {
    const html = join(dir, `${scenario}.html`);
    let text = '';
    simulate(
      {
        cluster: join('examples/simulate', cluster),
        endpoints: 'examples/simulate/endpoints-three-backends.yaml',
        scenario: join('examples/simulate', scenario),
        html,
      },
      (t) => {
        text += t;
      },
    );
    assert.match(text, marker);
    assert.match(text, /Traffic share over the whole run/);
    const page = readFileSync(html, 'utf8');
    assert.match(page, marker);
    assert.match(page, /<svg/);
    if (scenario === 'scenario-backend-errors.yaml') {
      assert.match(page, /aria-label="call errors"/);
      assert.match(text, /call errors=\d+/);
    } else assert.doesNotMatch(page, /aria-label="call errors"/);
  }
});
