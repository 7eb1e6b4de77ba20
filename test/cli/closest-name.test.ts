// "Did you mean …?" for misspelled keys of lbtree's input files (a simulate scenario's actions and fields).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closestName, editDistance } from '../../src/cli/closest-name.js';

test('closestName: one edit per three letters typed (a swap of two letters is one edit), or no suggestion', () => {
  assert.equal(editDistance('fial', 'fail'), 1);
  assert.equal(editDistance('Recovr', 'recover'), 1);
  assert.equal(editDistance('', 'hang'), 4);
  const actions = ['fail', 'hang', 'recover', 'unhealthy', 'healthy', 'errors', 'report'];
  // Four letters typed: two edits are near enough, three are not.
  assert.equal(closestName('faxx', actions), 'fail');
  assert.equal(closestName('fxxx', actions), undefined);
  // Two letters: one edit.
  assert.equal(closestName('ta', ['at']), 'at');
  assert.equal(closestName('tx', ['at']), undefined);
  assert.equal(closestName('explode', actions), undefined);
  assert.equal(closestName('unhelthy', actions), 'unhealthy');
});
