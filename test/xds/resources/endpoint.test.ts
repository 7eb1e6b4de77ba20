import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { addressKey } from '../../../src/core/index.js';
import { ClusterLoadAssignmentSchema } from '../../../src/protos/gen/envoy/config/endpoint/v3/endpoint_pb.js';
import { endpointResourceType } from '../../../src/xds/resources/index.js';
import { accepted, decode, type Json, nacked } from './support.js';

const decodeCla = (json: Json) => decode(endpointResourceType, ClusterLoadAssignmentSchema, json);

function endpoint(address: string, port: number): Json {
  return { endpoint: { address: { socketAddress: { address, portValue: port } } } };
}

function cla(extra: Json = {}): Json {
  return {
    clusterName: 'backend',
    endpoints: [
      {
        locality: { region: 'r', zone: 'z' },
        loadBalancingWeight: 3,
        lbEndpoints: [endpoint('10.0.0.1', 80), endpoint('10.0.0.2', 80)],
      },
    ],
    ...extra,
  };
}

describe('A27 "ClusterLoadAssignment Proto": the EDS resource type', () => {
  test('endpoints grouped by priority and locality; the resource is named by cluster_name', () => {
    const result = decodeCla(cla());
    const e = accepted(result);
    assert.equal(result.ok && result.name, 'backend');
    assert.equal(e.priorities.length, 1);
    assert.equal(e.priorities[0]![0]!.weight, 3);
    assert.deepEqual(
      e.priorities[0]![0]!.endpoints.map((x) => x.addresses.map(addressKey)),
      [['10.0.0.1:80'], ['10.0.0.2:80']],
    );
    assert.deepEqual(e.drops, []);
  });

  test('policy.drop_overloads: each category with its share in parts per million', () => {
    const e = accepted(
      decodeCla(
        cla({
          policy: {
            dropOverloads: [
              { category: 'lb', dropPercentage: { numerator: 20 } },
              { category: 'throttle', dropPercentage: { numerator: 5, denominator: 'TEN_THOUSAND' } },
              { category: 'fine', dropPercentage: { numerator: 7, denominator: 'MILLION' } },
            ],
          },
        }),
      ),
    );
    assert.deepEqual(e.drops, [
      { category: 'lb', perMillion: 200_000 },
      { category: 'throttle', perMillion: 500 },
      { category: 'fine', perMillion: 7 },
    ]);
  });

  test('NACKs name the field and keep the resource name (A88)', () => {
    const dup = decodeCla(
      cla({
        endpoints: [
          {
            locality: {},
            loadBalancingWeight: 1,
            lbEndpoints: [endpoint('10.0.0.1', 80), endpoint('10.0.0.1', 80)],
          },
        ],
      }),
    );
    nacked(dup, 'endpoints[0].lb_endpoints[1].endpoint.address', 'duplicate endpoint address');
    assert.equal(dup.name, 'backend');
    nacked(
      decodeCla(
        cla({
          policy: { dropOverloads: [{ category: 'x', dropPercentage: { numerator: 1, denominator: 9 } }] },
        }),
      ),
      'policy.drop_overloads[0].drop_percentage.denominator',
    );
  });
});
