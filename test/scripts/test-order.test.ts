import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

// scripts/ is plain JavaScript beside the compiled tests: imported from the repository root (the tests' cwd).
const { longestFirst } = await import(pathToFileURL(join(process.cwd(), 'scripts/test-order.mjs')).href);

test('test files start longest first; an entry counts the suites it imports; unrecorded files go first', () => {
  const policies = 'test/e2e/policies.e2e.test.ts'; // imports ./priority.e2e.js, ./ring-hash.e2e.js, ./round-robin.e2e.js
  const demo = 'test/e2e/demo.e2e.test.ts';
  const exit = 'test/e2e/exit.e2e.test.ts';
  const pickFirst = 'test/e2e/pick-first.e2e.test.ts';
  const ms = {
    [demo]: 9000,
    [exit]: 2000,
    'test/e2e/priority.e2e.ts': 2000,
    'test/e2e/ring-hash.e2e.ts': 1000,
    'test/e2e/round-robin.e2e.ts': 1000,
  };
  assert.deepEqual(longestFirst([demo, exit, pickFirst, policies], ms), [pickFirst, demo, policies, exit]);
  assert.deepEqual(longestFirst([demo, exit, policies], {}), [demo, exit, policies], 'no record: as given');
});
