// What the builders and the example file produce is what a gRPC client accepts: every resource decodes and
// validates with lbtree's own xDS resource types (the gRFC A27 / A28 / A37 / A42 / A52 / A61 validation
// that NACKs a bad resource), so a test or demo built on them is not silently NACKed.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE_URL,
  CLUSTER_TYPE_URL,
  cluster,
  LISTENER_TYPE_URL,
  parseResourceText,
  type ResourceInput,
  ResourceSet,
  ROUTE_CONFIGURATION_TYPE_URL,
  routeConfiguration,
  xdsService,
} from '../../src/control-plane/index.js';
import type { XdsResourceType } from '../../src/xds/client/resource-type.js';
import {
  clusterResourceType,
  endpointResourceType,
  listenerResourceType,
  routeConfigurationResourceType,
} from '../../src/xds/resources/index.js';
import type { XdsRouteConfiguration } from '../../src/xds/resources/types.js';
import { resolveXdsOptions } from '../../src/xds/resources/xds-options.js';
import { everyBuilder } from './every-builder.js';

const TYPES: ReadonlyMap<string, XdsResourceType<unknown>> = new Map<string, XdsResourceType<unknown>>([
  [LISTENER_TYPE_URL, listenerResourceType],
  [ROUTE_CONFIGURATION_TYPE_URL, routeConfigurationResourceType],
  [CLUSTER_TYPE_URL, clusterResourceType],
  [CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, endpointResourceType],
]);

/** Decodes every resource with lbtree's resource types; returns "Type name: NACK reason" for each rejected one. */
function rejected(inputs: readonly ResourceInput[]): string[] {
  const set = ResourceSet.build('1', inputs);
  const context = resolveXdsOptions();
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

test('routeConfiguration: A44 retry policies (virtual host and route) and header matchers arrive as lbtree reads them', () => {
  const [resource] = ResourceSet.build('1', [
    routeConfiguration('retries', [
      {
        retryPolicy: { retryOn: 'unavailable', numRetries: 2 },
        routes: [
          {
            cluster: 'canary',
            headers: [{ name: 'x-canary', presentMatch: true }],
            retryPolicy: {
              retryOn: 'cancelled,deadline-exceeded',
              numRetries: 3,
              retryBackOff: { baseInterval: '0.1s', maxInterval: '1s' },
            },
          },
          { cluster: 'main' },
        ],
      },
    ]),
  ]).ofType(ROUTE_CONFIGURATION_TYPE_URL);
  const decoded = routeConfigurationResourceType.decode(resource![1].any.value, resolveXdsOptions());
  assert.ok(decoded.ok, decoded.ok ? '' : decoded.error);
  const [vh] = (decoded.value as XdsRouteConfiguration).virtualHosts;
  // retry_on unavailable → UNAVAILABLE (14); num_retries 2 → 3 attempts; base 25 ms and max 10 × base by default.
  assert.deepEqual(vh!.retryPolicy, {
    retryableStatusCodes: [14],
    maxAttempts: 3,
    initialBackoffMs: 25,
    maxBackoffMs: 250,
  });
  const [canary, main] = vh!.routes;
  assert.deepEqual(canary!.match.headers, [
    { name: 'x-canary', match: { kind: 'present', present: true }, invert: false },
  ]);
  assert.ok(canary!.action.kind === 'cluster');
  assert.deepEqual(canary!.action.retryPolicy, {
    retryableStatusCodes: [1, 4],
    maxAttempts: 4,
    initialBackoffMs: 100,
    maxBackoffMs: 1000,
  });
  assert.deepEqual(main!.match.headers, []);
  assert.ok(main!.action.kind === 'cluster');
  assert.equal(main!.action.retryPolicy, undefined, "a route without one takes the virtual host's");
});

test('every cluster and endpoint builder is accepted by lbtree', () => {
  assert.deepEqual(rejected(everyBuilder()), []);
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
