import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sourceModule } from './support/child-node.js';
import { runRefusing } from './support/refused-modules.js';

// The package root is the documented public surface (docs/api.md), and it stays light: no regex engine.

const withoutRe2 = (script: string) => runRefusing(['re2js'], script);

test('importing the package root does not load RE2 (re2js); the xDS route hash policies do', () => {
  const root = withoutRe2(
    `const m = await import('${sourceModule('src/index.ts')}'); if (typeof m.Registry !== 'function') process.exit(3);`,
  );
  assert.equal(root.status, 0, root.stderr);
  // The check itself works: a module that does need RE2 fails under the same hook.
  const rewrite = withoutRe2(`await import('${sourceModule('src/hash/regex-rewrite.ts')}');`);
  assert.notEqual(rewrite.status, 0);
  assert.match(rewrite.stderr, /re2js was loaded/);
});

test('the root exports the public surface, not petiole machinery', async () => {
  const root = await import('../src/index.js');
  for (const name of [
    'Registry',
    'registerAllPolicies',
    'ringHashFactory',
    'parsePriorityConfig',
    'RoundRobin',
    'xxh64',
  ])
    assert.ok(name in root, `${name} is public`);
  for (const name of [
    'EndpointChild',
    'EagerPetiole',
    'CallCounter',
    'EndpointList',
    'SnapshotArray',
    'RegexRewrite',
    'RequestHasher',
  ])
    assert.ok(!(name in root), `${name} is internal`);
});
