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

// The xDS scenario (control plane, resources) costs about as much as the rest together: it gets a process
// of its own beside one playing the others, so the two use both cores of a small machine.
const GROUPS = [
  ['xds', 'happy-eyeballs', 'round-robin'],
  ['priority-failover', 'ring-hash-affinity', 'outlier-detection', 'weighted-round-robin'],
];

// --fast plays every phase until its outcome shows (not for a share of --duration), so the whole demo runs
// in seconds and still checks every scenario's expectations.
test('lbtree demo --fast plays every scenario on real backends, prints a summary and exits 0', async () => {
  assert.deepEqual(GROUPS.flat().sort(), SCENARIOS.map((s) => s.name).sort(), 'every scenario is played');
  const runs = await Promise.all(
    GROUPS.map((g) => lbtree('demo', '--fast', '--plain', '--scenario', g.join(','))),
  );
  for (const r of runs) {
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /== lbtree demo summary/);
    assert.doesNotMatch(r.stdout, /✘/);
    assert.doesNotMatch(r.stdout, /outcome not shown in time/);
  }
  const all = runs.map((r) => r.stdout).join('\n');
  for (const name of GROUPS.flat()) assert.match(all, new RegExp(`^${name} — `, 'm'), name);
  assert.match(all, /first RPC after \d+ ms/);
  assert.match(all, /Cluster NACK \(Cluster "demo-cluster": ring_hash_lb_config\.minimum_ring_size/);
});

// The tests above run the compiled CLI, as `npm test` does; the README's quick start runs `npm run demo`, which
// runs the TypeScript through tsx. Play one scenario that way too, so the quick start itself is covered.
test('the quick start: `npm run demo` (through tsx) plays a scenario on real backends and exits 0', async () => {
  const r = await run('npm', [
    'run',
    '--silent',
    'demo',
    '--',
    '--fast',
    '--plain',
    '--scenario',
    'round-robin',
  ]);
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /== lbtree demo summary/);
  assert.match(r.stdout, /^round-robin — /m);
  assert.doesNotMatch(r.stdout, /✘/);
});
