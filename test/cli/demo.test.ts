import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { nodeScript } from '../support/child-node.js';

const lbtree = (...args: string[]) =>
  spawnSync(process.execPath, nodeScript('src/cli/main.ts', ...args), {
    encoding: 'utf8',
    timeout: 60_000,
  });

test('lbtree --help lists the demo scenarios and flags', () => {
  const r = lbtree('--help');
  assert.equal(r.status, 0);
  assert.match(r.stdout, /lbtree demo \[--scenario/);
  assert.match(r.stdout, /round-robin/);
  assert.match(r.stdout, /happy-eyeballs/);
});

test('lbtree demo rejects an unknown scenario and a bad duration', () => {
  assert.equal(lbtree('demo', '--scenario', 'nope').status, 2);
  assert.equal(lbtree('demo', '--duration', 'soon').status, 2);
  assert.equal(lbtree('demo', '--duration', '2').status, 2);
});

test('lbtree demo --fast takes no --duration (its phases end when their outcome shows)', () => {
  const r = lbtree('demo', '--fast', '--duration', '6');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--fast .* takes no --duration/);
});
