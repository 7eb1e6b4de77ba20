import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { simulate } from '../../src/cli/simulate/command.js';
import { runScenario } from '../../src/cli/simulate/run-scenario.js';
import { parseScenario, ScenarioError } from '../../src/cli/simulate/scenario.js';
import { clusterToTreeFromJson } from '../../src/xds/index.js';

const example = (name: string) => parse(readFileSync(join('examples/simulate', name), 'utf8'));

test('simulate: a zone outage moves its share inside priority 0; a hang fails over after the A56 timeout', () => {
  const tree = clusterToTreeFromJson(
    example('cluster-wrr-locality.yaml'),
    example('endpoints-two-priorities.yaml'),
  );
  const report = runScenario(tree, parseScenario(example('scenario-zone-outage.yaml')));
  const at = (s: number) => report.steps.find((step) => step.atMs === s * 1000)!;
  const served = (s: number, prefix: string) =>
    [...at(s).picks].filter(([name]) => name.startsWith(prefix)).reduce((a, [, n]) => a + n, 0);
  // 0–10 s: priority 0 only, zones a:b about 3:1 (locality weights).
  assert.equal(served(5, '10.1.'), 0);
  assert.ok(served(5, '10.0.1.') > 2 * served(5, '10.0.2.'));
  // 10–20 s: zone b failed: all of priority 0's traffic is on zone a.
  assert.equal(served(15, '10.0.2.'), 0);
  assert.ok(served(15, '10.0.1.') > 90);
  // 20 s: zone a hangs; requests queue until the 10 s failover timer moves them to priority 1 at 30 s.
  assert.equal(at(25).state, 'CONNECTING');
  assert.ok(at(25).queued > 90);
  assert.ok(served(31, '10.1.') > 90);
  // 45 s: priority 0 recovers and takes the traffic back.
  assert.ok(served(50, '10.0.') > 90);
  assert.equal(served(50, '10.1.'), 0);
});

test('simulate: scenario errors name the field', () => {
  assert.throws(
    () => parseScenario({ duration: 'soon' }),
    (e: Error) => e instanceof ScenarioError && /scenario\.duration/.test(e.message),
  );
  assert.throws(
    () => parseScenario({ events: [{ at: '1s', explode: {} }] }),
    /scenario\.events\[0\]: name exactly one action/,
  );
  assert.throws(() => parseScenario({ events: [{ at: '1s', fail: { zone: 'a' } }] }), /events\[0\]\.fail/);
});

test('lbtree simulate prints the timeline and writes a self-contained HTML page', () => {
  const html = join(mkdtempSync(join(tmpdir(), 'lbtree-')), 'out.html');
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      'src/cli/main.ts',
      'simulate',
      '--cluster',
      'examples/simulate/cluster-ring-hash.yaml',
      '--endpoints',
      'examples/simulate/endpoints-two-priorities.yaml',
      '--scenario',
      'examples/simulate/scenario-endpoint-flap.yaml',
      '--html',
      html,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /ring_hash_experimental/);
  assert.match(r.stdout, /Traffic share over the whole run/);
  const page = readFileSync(html, 'utf8');
  assert.match(page, /<svg/);
  assert.doesNotMatch(page, /<script|src="http/);
});

test('lbtree simulate rejects an unknown field in a resource file, naming its JSON path', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lbtree-'));
  const cluster = join(dir, 'cluster.yaml');
  const typo = readFileSync('examples/simulate/cluster-wrr-locality.yaml', 'utf8').replace(
    /^name: /m,
    'nmae: typo\nname: ',
  );
  writeFileSync(cluster, typo);
  const options = {
    cluster,
    endpoints: 'examples/simulate/endpoints-two-priorities.yaml',
    scenario: 'examples/simulate/scenario-zone-outage.yaml',
  };
  assert.throws(
    () => simulate(options, () => {}),
    /^ProtoJsonError: \$\.nmae: unknown field of envoy\.config\.cluster\.v3\.Cluster/,
  );
  writeFileSync(cluster, typo.replace('nmae: typo\n', ''));
  let printed = '';
  simulate(options, (text) => {
    printed += text;
  });
  assert.match(printed, /root LB config/);
});
