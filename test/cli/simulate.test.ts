import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { simulate } from '../../src/cli/simulate/command.js';
import { textReport } from '../../src/cli/simulate/report.js';
import { runScenario } from '../../src/cli/simulate/run-scenario.js';
import { parseScenario, ScenarioError } from '../../src/cli/simulate/scenario.js';
import { clusterToTreeFromJson } from '../../src/xds/index.js';
import { nodeScript } from '../support/child-node.js';

const example = (name: string) => parse(readFileSync(join('examples/simulate', name), 'utf8'));

test('simulate: a zone outage moves its share inside priority 0; a hang fails over after the A56 timeout', () => {
  const tree = clusterToTreeFromJson(
    example('cluster-wrr-locality.yaml'),
    example('endpoints-two-priorities.yaml'),
  );
  const scenario = parseScenario(example('scenario-zone-outage.yaml'));
  const report = runScenario(tree, scenario);
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
  // A56 failover timer, to the call (one call per 10 ms step): priority 0 goes READY -> CONNECTING at 20 s,
  // which starts its 10 s timer; at 30 s priority 1 is created and, connecting in the scenario's 20 ms,
  // serves its first call at 30.02 s. Every call from 20 s until then queues (a 9.99 s timer would serve the
  // one at 30.01 s, a 10.01 s timer would queue the one at 30.02 s).
  const fine = runScenario(tree, { ...scenario, stepMs: 10, durationMs: 31_000 });
  const onPriority1 = (step: (typeof fine.steps)[number]) =>
    [...step.picks.keys()].some((name) => name.startsWith('10.1.'));
  assert.equal(fine.steps.find(onPriority1)?.atMs, 30_020);
  const waiting = fine.steps.filter((step) => step.atMs >= 20_000 && step.atMs < 30_020);
  assert.equal(waiting.length, 1002);
  assert.ok(
    waiting.every((step) => step.queued === 1 && step.picks.size === 0),
    'a call from 20 s to 30.01 s did not queue',
  );
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
    () => parseScenario({ events: [{ at: '1s' }] }),
    /scenario\.events\[0\]: name exactly one action/,
  );
  assert.throws(
    () => parseScenario({ events: [{ at: '1s', explode: {} }] }),
    /^ScenarioError: scenario\.events\[0\]\.explode: unknown field \(an event has "at" and one action of fail, hang, recover/,
  );
  assert.throws(() => parseScenario({ events: [{ at: '1s', fail: { zone: 'a' } }] }), /events\[0\]\.fail/);
});

test('lbtree simulate prints the timeline and writes a self-contained HTML page', () => {
  const html = join(mkdtempSync(join(tmpdir(), 'lbtree-')), 'out.html');
  const r = spawnSync(
    process.execPath,
    nodeScript(
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
    ),
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /ring_hash_experimental/);
  assert.match(r.stdout, /Traffic share over the whole run/);
  const page = readFileSync(html, 'utf8');
  assert.match(page, /<svg/);
  assert.match(page, /Simulated 30 s of virtual time at \d+ requests\/s, sampled every 1 s/);
  assert.match(page, /aria-label="channel state"/);
  assert.match(page, /priority 0<\/span>.*priority 1<\/span>/s);
  assert.match(page, /svg\{display:block;width:100%/);
  assert.doesNotMatch(page, /<script|src="http/);
});

test('simulate: misspelled scenario fields and events after the end are rejected, naming them', () => {
  assert.throws(() => parseScenario({ duratoin: '10s' }), /scenario\.duratoin: unknown field/);
  assert.throws(
    () => parseScenario({ events: [{ at: '1s', fail: { locality: 'a' }, when: 2 }] }),
    /scenario\.events\[0\]\.when: unknown field/,
  );
  assert.throws(
    () => parseScenario({ duration: '60s', events: [{ at: '70s', fail: { locality: 'a' } }] }),
    /scenario\.events\[0\]\.at: "70s" is not before the end of the scenario \(duration 60s\)/,
  );
});

test('simulate: a misspelled action is named with its path, and the action it is nearest is suggested', () => {
  const scenario = (event: Record<string, unknown>) =>
    parseScenario({ duration: '10s', events: [{ at: '1s', fail: { locality: 'a' } }, event] });
  assert.throws(
    () => scenario({ at: '2s', fial: { locality: 'a' } }),
    /^ScenarioError: scenario\.events\[1\]\.fial: unknown action; did you mean "fail"\? \(an event has "at" and one action of fail, hang, recover, unhealthy, healthy, errors, report\)$/,
  );
  assert.throws(
    () => scenario({ at: '2s', recovr: { locality: 'a' } }),
    /\.recovr: .*did you mean "recover"/,
  );
  assert.throws(() => scenario({ at: '2s', Hang: { locality: 'a' } }), /\.Hang: .*did you mean "hang"/);
  assert.throws(
    () => scenario({ att: '2s', fail: { locality: 'a' } }),
    /\.att: unknown field; did you mean "at"/,
  );
  // Misspelled fields elsewhere get the same suggestion.
  assert.throws(
    () => parseScenario({ duratoin: '10s' }),
    /scenario\.duratoin: unknown field; did you mean "duration"\?/,
  );
});

test('lbtree simulate: a scenario file with a misspelled action exits 1 naming it and the action meant', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lbtree-'));
  const scenarioFile = join(dir, 'scenario.yaml');
  writeFileSync(
    scenarioFile,
    'duration: 20s\nevents:\n  - { at: 5s, fail: { locality: zone-a } }\n  - { at: 10s, fial: { locality: zone-b } }\n',
  );
  const r = spawnSync(
    process.execPath,
    nodeScript(
      'src/cli/main.ts',
      'simulate',
      '--cluster',
      'examples/simulate/cluster-wrr-locality.yaml',
      '--endpoints',
      'examples/simulate/endpoints-two-priorities.yaml',
      '--scenario',
      scenarioFile,
    ),
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(r.status, 1, r.stderr);
  assert.match(
    r.stderr,
    /^lbtree simulate: scenario\.events\[1\]\.fial: unknown action; did you mean "fail"\?/,
  );
});

test('simulate: the timeline counts each event’s addresses in words: "(1 address)", "(3 addresses)"', () => {
  const tree = clusterToTreeFromJson(
    example('cluster-wrr-locality.yaml'),
    example('endpoints-two-priorities.yaml'),
  );
  const scenario = parseScenario({
    duration: '5s',
    events: [
      { at: '1s', unhealthy: { endpoint: '10.0.2.1:8080' } },
      // us-east1-a: two endpoints, one of them dual-stack (A61).
      { at: '2s', fail: { locality: 'us-east1-a' } },
    ],
  });
  const timeline = textReport(runScenario(tree, scenario));
  assert.match(timeline, /── unhealthy \{"endpoint":"10\.0\.2\.1:8080"\} \(1 address\)$/m);
  assert.match(timeline, /── fail \{"locality":"us-east1-a"\} \(3 addresses\)$/m);
});

test('simulate: an event naming no endpoint, locality or priority of the cluster is rejected', () => {
  const tree = clusterToTreeFromJson(
    example('cluster-wrr-locality.yaml'),
    example('endpoints-two-priorities.yaml'),
  );
  assert.throws(
    () => runScenario(tree, parseScenario({ events: [{ at: '1s', fail: { locality: 'us-east1-z' } }] })),
    /scenario\.events\[0\]\.fail\.locality: no locality "us-east1-z" in the endpoints \(have: us-east1\/us-east1-a/,
  );
  assert.throws(
    () => runScenario(tree, parseScenario({ events: [{ at: '1s', hang: { priority: 7 } }] })),
    /scenario\.events\[0\]\.hang\.priority: no priority "7"/,
  );
  // A priority is named by its index, as reports label it.
  const report = runScenario(
    tree,
    parseScenario({ duration: '3s', events: [{ at: '1s', fail: { priority: 0 } }] }),
  );
  assert.equal(report.events[0]!.addresses.length, 5);
  assert.deepEqual([...new Set(report.endpoints.map((e) => e.priority))], ['priority 0', 'priority 1']);
});

test('simulate: a weightless locality and an unwritable --html are rejected before anything runs, naming them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lbtree-'));
  const weightless = join(dir, 'weightless.json');
  const noWeight = example('endpoints-two-priorities.yaml');
  delete noWeight.endpoints[2].load_balancing_weight;
  writeFileSync(weightless, JSON.stringify(noWeight));
  const options = {
    cluster: 'examples/simulate/cluster-wrr-locality.yaml',
    endpoints: weightless,
    scenario: 'examples/simulate/scenario-zone-outage.yaml',
  };
  let printed = '';
  const print = (text: string) => {
    printed += text;
  };
  assert.throws(
    () => simulate(options, print),
    /endpoints\[2\] \(locality .*us-west1-a.*\) has no load_balancing_weight/,
  );
  assert.throws(
    () =>
      simulate(
        {
          ...options,
          endpoints: 'examples/simulate/endpoints-two-priorities.yaml',
          html: join(dir, 'no-such-dir', 'out.html'),
        },
        print,
      ),
    /--html .*no-such-dir\/out\.html: cannot write the page/,
  );
  assert.equal(printed, '', 'found out before running');
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

test('simulate: a cluster whose UpstreamTlsContext names a provider instance runs when the scenario declares it (A29), and shows the TLS config', () => {
  const options = {
    cluster: 'examples/simulate/cluster-istio-mtls.yaml',
    endpoints: 'examples/simulate/endpoints-three-backends.yaml',
    scenario: 'examples/simulate/scenario-istio-mtls.yaml',
  };
  let printed = '';
  simulate(options, (text) => {
    printed += text;
  });
  assert.match(
    printed,
    /transport security: TLS \(A29\), roots from certificate provider "default" \(certificate "ROOTCA"\), identity from certificate provider "default" \(certificate "default"\), SAN exact "spiffe:\/\/cluster\.local\/ns\/default\/sa\/echo" \(shown only/,
  );
  // 10.0.0.2 fails from 10 s to 20 s: the traffic runs, as for a cluster without TLS.
  assert.match(printed, /\n {5}15s {2}READY .*10\.0\.0\.2:8080=0%/);

  // Without the declaration the Cluster is rejected as an xDS client NACKs it, with where to declare it.
  const dir = mkdtempSync(join(tmpdir(), 'lbtree-'));
  const undeclared = join(dir, 'scenario.yaml');
  const scenario = example('scenario-istio-mtls.yaml');
  delete scenario.certificate_providers;
  writeFileSync(undeclared, JSON.stringify(scenario));
  assert.throws(
    () => simulate({ ...options, scenario: undeclared }, () => {}),
    /instance_name: unrecognized certificate provider instance name "default" .*declare the instance in the scenario's certificate_providers/,
  );
  // Another declared name does not stand in for it; a malformed list is named.
  writeFileSync(undeclared, JSON.stringify({ ...scenario, certificate_providers: ['other'] }));
  assert.throws(
    () => simulate({ ...options, scenario: undeclared }, () => {}),
    /"default" \(the bootstrap's certificate_providers: "other"\)/,
  );
  assert.throws(
    () => parseScenario({ certificate_providers: ['default', 3] }),
    /scenario\.certificate_providers\[1\]: expected an instance name, got 3/,
  );
});
