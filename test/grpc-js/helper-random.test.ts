// Issue 25 §6: grpc-js's adapter hands its policies Math.random itself, so their pickers share one function
// across channels (see randomOf in src/core/child-helper.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { randomOf } from '../../src/core/index.js';
import { GrpcHelperAdapter } from '../../src/grpc-js/helper-adapter.js';

test("the adapter's randomness is Math.random itself, and randomOf hands it on unbound", () => {
  const helper = new GrpcHelperAdapter({ updateState: () => {} } as never, 'test');
  assert.equal(helper.random, Math.random);
  assert.equal(randomOf(helper), Math.random);
  const draw = helper.random();
  assert.ok(draw >= 0 && draw < 1);
});
