// What the builders and the example file produce is what a gRPC client accepts: every resource decodes and
// validates with lbtree's own xDS resource types (the gRFC A27 / A28 / A37 / A42 / A52 / A61 validation
// that NACKs a bad resource), so a test or demo built on them is not silently NACKed.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  aggregateCluster,
  CLUSTER_LOAD_ASSIGNMENT_TYPE_URL,
  CLUSTER_TYPE_URL,
  cluster,
  clusterLoadAssignment,
  LISTENER_TYPE_URL,
  lbPolicies,
  listener,
  logicalDnsCluster,
  parseResourceText,
  type ResourceInput,
  ResourceSet,
  ROUTE_CONFIGURATION_TYPE_URL,
  routeConfiguration,
  xdsService,
} from '../../src/control-plane/index.js';
import type { XdsResourceType } from '../../src/xds/client/resource-type.js';
import { resolveXdsOptions } from '../../src/xds/features.js';
import {
  clusterResourceType,
  endpointResourceType,
  listenerResourceType,
  routeConfigurationResourceType,
} from '../../src/xds/resources/index.js';

const TYPES: ReadonlyMap<string, XdsResourceType<unknown>> = new Map<string, XdsResourceType<unknown>>([
  [LISTENER_TYPE_URL, listenerResourceType],
  [ROUTE_CONFIGURATION_TYPE_URL, routeConfigurationResourceType],
  [CLUSTER_TYPE_URL, clusterResourceType],
  [CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, endpointResourceType],
]);

/** Decodes every resource with lbtree's resource types; returns "Type name: NACK reason" for each rejected one. */
function rejected(inputs: readonly ResourceInput[]): string[] {
  const set = ResourceSet.build('1', inputs);
  const context = { options: resolveXdsOptions() };
  const problems: string[] = [];
  let checked = 0;
  for (const [typeUrl, type] of TYPES) {
    for (const [name, resource] of set.ofType(typeUrl)) {
      const result = type.decode(resource.any.value, context);
      checked++;
      if (!result.ok) problems.push(`${typeUrl} ${name}: ${result.error}`);
      else assert.equal(result.name, name);
    }
  }
  assert.equal(checked, set.size, 'every resource is one of the four types');
  return problems;
}

test('xdsService (RDS and inline routes, weighted clusters, hash policy) is accepted by lbtree', () => {
  const clusters = [
    { name: 'c1', weight: 3, localities: [{ zone: 'a', endpoints: ['127.0.0.1:1', '[::1]:2'] }] },
    {
      name: 'c2',
      localities: [{ zone: 'b', priority: 0, endpoints: [{ address: '127.0.0.1:3', weight: 5 }] }],
    },
  ];
  assert.deepEqual(rejected(xdsService({ name: 'svc', clusters, hashPolicy: [{ header: 'x-user' }] })), []);
  assert.deepEqual(rejected(xdsService({ name: 'svc', clusters, inlineRoutes: true })), []);
});

test('every cluster and endpoint builder is accepted by lbtree', () => {
  const resources = [
    cluster({
      name: 'legacy-ring',
      lbPolicy: 'RING_HASH',
      ringHash: { minimumRingSize: 64, maximumRingSize: 4096 },
    }),
    cluster({ name: 'least', lbPolicy: 'LEAST_REQUEST' }),
    cluster({
      name: 'a52',
      edsServiceName: 'a52-eds',
      maxRequests: 100,
      outlierDetection: { interval: '1s', baseEjectionTime: '30s' },
      loadBalancingPolicy: [
        lbPolicies.custom('type.googleapis.com/no.such.Policy', { knob: 1 }),
        lbPolicies.ringHash({ minimumRingSize: 16 }),
      ],
    }),
    cluster({ name: 'wrr', loadBalancingPolicy: [lbPolicies.wrrLocality(lbPolicies.leastRequest(3))] }),
    cluster({ name: 'pf', loadBalancingPolicy: [lbPolicies.pickFirst(true)] }),
    cluster({ name: 'rr', loadBalancingPolicy: [lbPolicies.roundRobin()] }),
    aggregateCluster('agg', ['a52', 'legacy-ring']),
    logicalDnsCluster('dns', 'example.com:443'),
    clusterLoadAssignment(
      'a52-eds',
      [
        {
          zone: 'a',
          endpoints: [
            {
              address: '10.0.0.1:80',
              hashKey: 'k',
              healthStatus: 'DRAINING',
              additionalAddresses: ['[::1]:80'],
            },
          ],
        },
        { zone: 'b', priority: 1, weight: 2, endpoints: ['10.0.0.2:80'] },
      ],
      { dropOverloads: [{ category: 'lb', perMillion: 1000 }] },
    ),
    listener('l', {
      inline: [
        {
          domains: ['svc'],
          routes: [
            {
              path: '/a.B/C',
              weightedClusters: [{ name: 'a52', weight: 1 }],
              hashPolicy: [{ channelId: true, terminal: true }],
            },
          ],
        },
      ],
    }),
    routeConfiguration('r', [{ routes: [{ prefix: '/x', cluster: 'agg' }] }]),
  ];
  assert.deepEqual(rejected(resources), []);
});

test('examples/control-plane/resources.yaml is accepted by lbtree', () => {
  assert.deepEqual(
    rejected(parseResourceText(readFileSync('examples/control-plane/resources.yaml', 'utf8'))),
    [],
  );
});

test('and lbtree does NACK what the e2e test uses as an invalid cluster (legacy lb_policy MAGLEV)', () => {
  const [problem] = rejected([cluster({ name: 'c1', fields: { lbPolicy: 'MAGLEV' } })]);
  assert.match(problem ?? '', /lb_policy/);
});
