import assert from 'node:assert/strict';
import { test } from 'node:test';
import { experimental, Metadata } from '@grpc/grpc-js';
import { ENDPOINT_WEIGHT, HIERARCHICAL_PATH, LOCALITY, LOCALITY_WEIGHT } from '../../src/core/index.js';
import { fromGrpcEndpoints } from '../../src/grpc-js/endpoint-conversion.js';

test('grpc-js endpoints keep their addresses; plain ones get no attributes', () => {
  const address = { host: '10.0.0.1', port: 80 };
  const converted = fromGrpcEndpoints(experimental.statusOrFromValue([{ addresses: [address] }]));
  assert.ok(converted.ok);
  assert.equal(converted.value[0]!.addresses[0], address, 'the same object, so its cached key survives');
  assert.equal(converted.value[0]!.attributes.size, 0);
});

test("@grpc/grpc-js-xds's endpoint fields become lbtree's typed attributes (A56 paths, A52 locality weights)", () => {
  const endpoint = {
    addresses: [{ host: '10.0.0.1', port: 80 }],
    localityPath: ['priority-0', 'zone-a'],
    locality: { region: 'r', zone: 'z', sub_zone: '' },
    localityWeight: 3,
    endpointWeight: 6,
  };
  const converted = fromGrpcEndpoints(experimental.statusOrFromValue([endpoint]));
  assert.ok(converted.ok);
  const a = converted.value[0]!.attributes;
  assert.deepEqual(a.get(HIERARCHICAL_PATH), ['priority-0', 'zone-a']);
  assert.equal(a.get(LOCALITY), '{region=r,zone=z,sub_zone=}');
  assert.equal(a.get(LOCALITY_WEIGHT), 3);
  assert.equal(a.get(ENDPOINT_WEIGHT), 6);
});

test('a resolver error stays an error, with its details', () => {
  const converted = fromGrpcEndpoints(
    experimental.statusOrFromError({ code: 14, details: 'DNS down', metadata: new Metadata() }),
  );
  assert.equal(converted.ok, false);
  assert.equal(!converted.ok && converted.status.details, 'DNS down');
});
