import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

const lbtree = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    encoding: 'utf8',
    timeout: 120_000,
  });

// --fast plays every phase until its outcome shows (not for a share of --duration), so the whole demo runs
// in seconds and still checks every scenario's expectations.
test('lbtree demo --fast plays every scenario on real backends, prints a summary and exits 0', () => {
  const r = lbtree('demo', '--fast', '--plain');
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /== lbtree demo summary/);
  assert.doesNotMatch(r.stdout, /✘/);
  assert.doesNotMatch(r.stdout, /outcome not shown in time/);
  assert.match(r.stdout, /first RPC after \d+ ms/);
});
