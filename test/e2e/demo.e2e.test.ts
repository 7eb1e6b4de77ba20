import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { SCENARIOS } from '../../src/cli/demo/catalog.js';
import { nodeScript } from '../support/child-node.js';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `lbtree ARGS…` to its end; resolves with its exit code and output. */
const lbtree = (...args: string[]) => run(process.execPath, nodeScript('src/cli/main.ts', ...args));

function run(command: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { timeout: 120_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Runs `npm run demo -- ARGS…`: the README's quick start, which runs the TypeScript through tsx. */
const npmRunDemo = (...args: string[]) => run('npm', ['run', '--silent', 'demo', '--', ...args]);

// The xDS scenario (control plane, resources) costs about as much as the rest together: it gets a process
// of its own beside one playing the others, so the two use both cores of a small machine. The first runs the
// compiled CLI, as `npm test` runs everything; the second runs `npm run demo` as the README's quick start
// does, so the quick start itself plays real scenarios (tsx costs that process about 2.5 s of CPU more).
const COMPILED = ['xds', 'happy-eyeballs', 'round-robin'];
const QUICK_START = ['priority-failover', 'ring-hash-affinity', 'outlier-detection', 'weighted-round-robin'];

// --fast plays every phase until its outcome shows (not for a share of --duration), so the whole demo runs
// in seconds and still checks every scenario's expectations.
test('the demo plays every scenario on real backends (the compiled `lbtree demo --fast` and the quick start `npm run demo`), prints a summary and exits 0', async () => {
  const played = [...COMPILED, ...QUICK_START];
  assert.deepEqual(played.sort(), SCENARIOS.map((s) => s.name).sort(), 'every scenario is played');
  const runs = await Promise.all([
    lbtree('demo', '--fast', '--plain', '--scenario', COMPILED.join(',')),
    npmRunDemo('--fast', '--plain', '--scenario', QUICK_START.join(',')),
  ]);
  for (const r of runs) {
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /== lbtree demo summary/);
    assert.doesNotMatch(r.stdout, /✘/);
    assert.doesNotMatch(r.stdout, /outcome not shown in time/);
  }
  const all = runs.map((r) => r.stdout).join('\n');
  // Each run first says where its live view (lbtree/admin) is.
  for (const r of runs)
    assert.match(r.stdout, /^Live view of every channel .*: http:\/\/127\.0\.0\.1:\d+\/$/m);
  for (const name of played) assert.match(all, new RegExp(`^${name} — `, 'm'), name);
  assert.match(all, /first RPC after \d+ ms/);
  assert.match(all, /Cluster NACK \(Cluster "demo-cluster": ring_hash_lb_config\.minimum_ring_size/);
  // xds: the affinity figure is given for the RING_HASH phases (and the return to ROUND_ROBIN that ends it),
  // not for the round_robin phases before, where it would measure chance.
  const xdsPhase = (name: string) => {
    const line = new RegExp(`^ {4}${name}: [^\\n]*$`, 'm').exec(all)?.[0];
    assert.ok(line, `the summary has a line for the xds phase "${name}"`);
    return line;
  };
  for (const name of ['v1', 'v2', 'priority 0’s backends stop', 'priority 0’s backends are back'])
    assert.doesNotMatch(xdsPhase(name), /usual backend/, name);
  for (const name of ['v3', 'v4', 'v5'])
    assert.match(xdsPhase(name), /; users on their usual backend \d+%$/, name);
});
