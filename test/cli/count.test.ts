import assert from 'node:assert/strict';
import { test } from 'node:test';
import { count } from '../../src/cli/count.js';

test('count: the singular for exactly one, the plural otherwise (0 too)', () => {
  assert.equal(count(1, 'address', 'addresses'), '1 address');
  assert.equal(count(2, 'address', 'addresses'), '2 addresses');
  assert.equal(count(0, 'call'), '0 calls');
  assert.equal(count(1, 'RPC'), '1 RPC');
  assert.equal(count(1.5, 'request'), '1.5 requests');
});
