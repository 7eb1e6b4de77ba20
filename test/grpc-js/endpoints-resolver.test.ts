import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseEndpointsTarget } from '../../src/grpc-js/index.js';

test('endpoints: targets: ";" separates endpoints, "," the addresses of one (A61 multi-address endpoints)', () => {
  assert.deepEqual(parseEndpointsTarget('127.0.0.1:1,[::1]:1;127.0.0.1:2;unix:/tmp/s'), [
    {
      addresses: [
        { host: '127.0.0.1', port: 1 },
        { host: '::1', port: 1 },
      ],
    },
    { addresses: [{ host: '127.0.0.1', port: 2 }] },
    { addresses: [{ path: '/tmp/s' }] },
  ]);
  assert.deepEqual(parseEndpointsTarget('/127.0.0.1:1'), [{ addresses: [{ host: '127.0.0.1', port: 1 }] }]);
});

test('endpoints: targets: an "a/b=" prefix is the endpoint’s A56 hierarchical path', () => {
  assert.deepEqual(parseEndpointsTarget('p0/zone-a=127.0.0.1:1,[::1]:1;p1=127.0.0.1:2'), [
    {
      addresses: [
        { host: '127.0.0.1', port: 1 },
        { host: '::1', port: 1 },
      ],
      localityPath: ['p0', 'zone-a'],
    },
    { addresses: [{ host: '127.0.0.1', port: 2 }], localityPath: ['p1'] },
  ]);
});

test('endpoints: targets: malformed lists are rejected with a message naming the problem', () => {
  assert.throws(() => parseEndpointsTarget(''), /empty endpoint list/);
  assert.throws(() => parseEndpointsTarget('127.0.0.1'), /invalid address "127\.0\.0\.1"/);
  assert.throws(() => parseEndpointsTarget('p0//z=127.0.0.1:1'), /empty path element/);
});
