import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { describePhaseTraffic, type Phase } from '../../src/cli/demo/stage.js';
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

test('demo summary: the users-on-their-usual-backend figure is given only in phases about session affinity', () => {
  // 12 users: 10 RPCs each, 4 of them on their most frequent backend (spread by round_robin).
  const routes = new Map<string, number>();
  for (let u = 1; u <= 12; u++) {
    routes.set(`user-${u} a1`, 4);
    routes.set(`user-${u} b1`, 3);
    routes.set(`user-${u} a2`, 3);
  }
  const phase = (label: string, showsAffinity: boolean): Phase => ({
    label,
    served: new Map([
      ['a1', 48],
      ['a2', 36],
      ['b1', 36],
    ]),
    routes,
    failures: 0,
    settled: true,
    showsAffinity,
  });
  assert.equal(
    describePhaseTraffic(phase('v2: the locality weights change to 3 : 1', false)),
    'v2: a1 40% a2 30% b1 30%',
  );
  assert.equal(
    describePhaseTraffic(phase('v5: back to ROUND_ROBIN: users spread again', true)),
    'v5: a1 40% a2 30% b1 30%; users on their usual backend 40%',
  );
});
