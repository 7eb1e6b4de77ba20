import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sameChannelArgs } from '../../src/core/index.js';

describe('sameChannelArgs: shallow equality of settings objects', () => {
  const internal = Symbol('internal');

  test('equal keys and values (string and symbol keys) are the same; a changed, extra or missing key is not', () => {
    const a = { 'grpc.keepalive_time_ms': 1000, [internal]: 'x' };
    assert.equal(sameChannelArgs(a, { 'grpc.keepalive_time_ms': 1000, [internal]: 'x' }), true);
    assert.equal(sameChannelArgs(a, { 'grpc.keepalive_time_ms': 1001, [internal]: 'x' }), false);
    assert.equal(sameChannelArgs(a, { 'grpc.keepalive_time_ms': 1000, [internal]: 'y' }), false);
    assert.equal(sameChannelArgs(a, { 'grpc.keepalive_time_ms': 1000 }), false);
    assert.equal(sameChannelArgs(a, { 'grpc.keepalive_time_ms': 1000, [internal]: 'x', other: 1 }), false);
    assert.equal(sameChannelArgs(a, { 'grpc.keepalive_time_ms': 1000, 'grpc.other': 'x' }), false);
  });

  test('the answer for a pair asked again in a row holds, and a new pair gets its own answer', () => {
    const next = { a: 1, b: 2 };
    const last = { a: 1, b: 2 };
    const changed = { a: 1, b: 3 };
    for (let i = 0; i < 3; i++) assert.equal(sameChannelArgs(next, last), true);
    for (let i = 0; i < 3; i++) assert.equal(sameChannelArgs(next, changed), false);
    assert.equal(sameChannelArgs(changed, next), false);
    assert.equal(sameChannelArgs(last, next), true);
    assert.equal(sameChannelArgs(next, last), true);
  });
});
