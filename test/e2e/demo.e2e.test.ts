import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

const lbtree = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });

test('lbtree demo plays every scenario on real backends, prints a summary and exits 0', () => {
  const r = lbtree('demo', '--duration', '6', '--plain');
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /== lbtree demo summary/);
  assert.doesNotMatch(r.stdout, /✘/);
  assert.match(r.stdout, /first RPC after \d+ ms/);
});
