// gRFC A44 "Converting Envoy RetryPolicy to gRPC RetryPolicy": retry_policy on a RouteAction and on a
// VirtualHost, decoded from the wire as a RouteConfiguration, with the NACKs naming the field. Values are the
// gRFC's literals (Envoy's documented defaults), never lbtree's constants.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Code } from '../../../src/core/index.js';
import { RouteConfigurationSchema } from '../../../src/protos/gen/envoy/config/route/v3/route_pb.js';
import {
  routeConfigurationResourceType,
  type XdsRetryPolicy,
  type XdsRouteConfiguration,
} from '../../../src/xds/resources/index.js';
import { accepted, decode, type Json, nacked } from './support.js';

const decodeRc = (json: Json) => decode(routeConfigurationResourceType, RouteConfigurationSchema, json);

/** A RouteConfiguration of one virtual host with one route to cluster `c`; retry policies where given. */
function rc(routePolicy?: Json, vhostPolicy?: Json): Json {
  return {
    name: 'routes',
    virtualHosts: [
      {
        name: 'vh',
        domains: ['*'],
        routes: [
          {
            match: { prefix: '' },
            route: { cluster: 'c', ...(routePolicy !== undefined ? { retryPolicy: routePolicy } : {}) },
          },
        ],
        ...(vhostPolicy !== undefined ? { retryPolicy: vhostPolicy } : {}),
      },
    ],
  };
}

function routePolicy(config: XdsRouteConfiguration): XdsRetryPolicy | undefined {
  const action = config.virtualHosts[0]!.routes[0]!.action;
  assert.equal(action.kind, 'cluster');
  return action.kind === 'cluster' ? action.retryPolicy : undefined;
}

/** The route's converted retry_policy (the resource must be accepted). */
const converted = (policy: Json): XdsRetryPolicy | undefined => routePolicy(accepted(decodeRc(rc(policy))));

const ROUTE_POLICY = 'virtual_hosts[0].routes[0].route.retry_policy';

describe('A44 "Converting Envoy RetryPolicy to gRPC RetryPolicy": retry_on → retryableStatusCodes', () => {
  test('the five x-envoy-retry-grpc-on conditions become their gRPC codes', () => {
    const p = converted({ retryOn: 'cancelled,deadline-exceeded,internal,resource-exhausted,unavailable' });
    assert.deepEqual(p?.retryableStatusCodes, [1, 4, 13, 8, 14]);
    assert.deepEqual(p?.retryableStatusCodes, [
      Code.CANCELLED,
      Code.DEADLINE_EXCEEDED,
      Code.INTERNAL,
      Code.RESOURCE_EXHAUSTED,
      Code.UNAVAILABLE,
    ]);
  });

  test('every other condition is ignored (x-envoy-retry-on values, unknown words, other spellings)', () => {
    const p = converted({
      retryOn:
        '5xx,gateway-error,connect-failure,refused-stream,retriable-status-codes,reset,UNAVAILABLE,unavailable',
    });
    assert.deepEqual(p?.retryableStatusCodes, [Code.UNAVAILABLE]);
  });

  test('whitespace around a condition is trimmed and a repeated condition counts once', () => {
    const p = converted({ retryOn: ' unavailable , cancelled,unavailable' });
    assert.deepEqual(p?.retryableStatusCodes, [Code.UNAVAILABLE, Code.CANCELLED]);
  });

  test("Istio's default policy (connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes; 2 retries)", () => {
    const p = converted({
      retryOn: 'connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes',
      numRetries: 2,
      hostSelectionRetryMaxAttempts: '5',
      retriableStatusCodes: [503],
    });
    assert.deepEqual(p, {
      retryableStatusCodes: [Code.UNAVAILABLE, Code.CANCELLED],
      maxAttempts: 3,
      initialBackoffMs: 25,
      maxBackoffMs: 250,
    });
  });

  test('a retry_on with no supported condition (or empty) is kept with no codes: no retry policy for the call', () => {
    assert.deepEqual(converted({ retryOn: '5xx,reset' })?.retryableStatusCodes, []);
    assert.deepEqual(converted({})?.retryableStatusCodes, []);
  });

  test('per_try_timeout and the other unsupported fields are ignored, not NACKed', () => {
    const p = converted({
      retryOn: 'unavailable',
      perTryTimeout: '0.001s',
      perTryIdleTimeout: '1s',
      retryPriority: { name: 'envoy.retry_priorities.previous_priorities' },
      retriableHeaders: [{ name: 'x-retry', presentMatch: true }],
      retriableRequestHeaders: [{ name: 'x-req', presentMatch: true }],
      rateLimitedRetryBackOff: { resetHeaders: [{ name: 'retry-after' }] },
    });
    assert.deepEqual(p?.retryableStatusCodes, [Code.UNAVAILABLE]);
  });
});

describe('A44: num_retries → maxAttempts = num_retries + 1', () => {
  test('num_retries defaults to 1: maxAttempts 2', () => {
    assert.equal(converted({ retryOn: 'unavailable' })?.maxAttempts, 2);
  });

  test("num_retries 1 → 2, 4 → 5; above 4 the value is kept (A6's cap of 5 is the retry machinery's, checked end to end)", () => {
    assert.equal(converted({ retryOn: 'unavailable', numRetries: 1 })?.maxAttempts, 2);
    assert.equal(converted({ retryOn: 'unavailable', numRetries: 4 })?.maxAttempts, 5);
    assert.equal(converted({ retryOn: 'unavailable', numRetries: 5 })?.maxAttempts, 6);
    assert.equal(converted({ retryOn: 'unavailable', numRetries: 4294967295 })?.maxAttempts, 4294967296);
  });

  test('num_retries must not be less than 1: 0 is NACKed naming the field', () => {
    nacked(
      decodeRc(rc({ retryOn: 'unavailable', numRetries: 0 })),
      `${ROUTE_POLICY}.num_retries`,
      'at least 1',
    );
  });
});

describe('A44: retry_back_off → initialBackoff / maxBackoff', () => {
  test('retry_back_off unset: base_interval 25 ms, max_interval 250 ms', () => {
    const p = converted({ retryOn: 'unavailable' });
    assert.equal(p?.initialBackoffMs, 25);
    assert.equal(p?.maxBackoffMs, 250);
  });

  test('max_interval unset: 10 times base_interval', () => {
    const p = converted({ retryOn: 'unavailable', retryBackOff: { baseInterval: '0.100s' } });
    assert.equal(p?.initialBackoffMs, 100);
    assert.equal(p?.maxBackoffMs, 1000);
  });

  test('both set: taken as they are; max_interval equal to base_interval is allowed', () => {
    const p = converted({
      retryOn: 'unavailable',
      retryBackOff: { baseInterval: '0.2s', maxInterval: '3s' },
    });
    assert.equal(p?.initialBackoffMs, 200);
    assert.equal(p?.maxBackoffMs, 3000);
    const equal = converted({
      retryOn: 'unavailable',
      retryBackOff: { baseInterval: '1s', maxInterval: '1s' },
    });
    assert.equal(equal?.maxBackoffMs, 1000);
  });

  test('values under 1 ms are treated as 1 ms; 1 ms and above are kept', () => {
    const under = converted({
      retryOn: 'unavailable',
      retryBackOff: { baseInterval: '0.000000001s', maxInterval: '0.000999999s' },
    });
    assert.equal(under?.initialBackoffMs, 1);
    assert.equal(under?.maxBackoffMs, 1);
    const at = converted({
      retryOn: 'unavailable',
      retryBackOff: { baseInterval: '0.001s', maxInterval: '0.002s' },
    });
    assert.equal(at?.initialBackoffMs, 1);
    assert.equal(at?.maxBackoffMs, 2);
    // The default max_interval is 10 times the base_interval as configured: 0.5 ms → 5 ms.
    const defaultMax = converted({ retryOn: 'unavailable', retryBackOff: { baseInterval: '0.0005s' } });
    assert.equal(defaultMax?.initialBackoffMs, 1);
    assert.equal(defaultMax?.maxBackoffMs, 5);
  });

  test('base_interval is required when retry_back_off is set', () => {
    nacked(
      decodeRc(rc({ retryOn: 'unavailable', retryBackOff: { maxInterval: '1s' } })),
      `${ROUTE_POLICY}.retry_back_off.base_interval`,
      'not present',
    );
  });

  test('base_interval and max_interval must be greater than 0', () => {
    nacked(
      decodeRc(rc({ retryOn: 'unavailable', retryBackOff: { baseInterval: '0s' } })),
      `${ROUTE_POLICY}.retry_back_off.base_interval`,
      'greater than 0',
    );
    nacked(
      decodeRc(rc({ retryOn: 'unavailable', retryBackOff: { baseInterval: '0s', maxInterval: '0s' } })),
      `${ROUTE_POLICY}.retry_back_off.base_interval`,
      'greater than 0',
    );
    nacked(
      decodeRc(
        rc({ retryOn: 'unavailable', retryBackOff: { baseInterval: '0.000000001s', maxInterval: '0s' } }),
      ),
      `${ROUTE_POLICY}.retry_back_off.max_interval`,
      'greater than 0',
    );
    nacked(
      decodeRc(rc({ retryOn: 'unavailable', retryBackOff: { baseInterval: '-1s' } })),
      `${ROUTE_POLICY}.retry_back_off.base_interval.seconds`,
      'out of range',
    );
  });

  test('max_interval must be no less than base_interval (compared as configured, before the 1 ms floor)', () => {
    nacked(
      decodeRc(
        rc({ retryOn: 'unavailable', retryBackOff: { baseInterval: '1s', maxInterval: '0.999999999s' } }),
      ),
      `${ROUTE_POLICY}.retry_back_off.max_interval`,
      'less than base_interval',
    );
    nacked(
      decodeRc(
        rc({ retryOn: 'unavailable', retryBackOff: { baseInterval: '0.0005s', maxInterval: '0.0004s' } }),
      ),
      `${ROUTE_POLICY}.retry_back_off.max_interval`,
      'less than base_interval',
    );
  });

  test('the checks apply even when retry_on names no supported condition', () => {
    nacked(decodeRc(rc({ retryOn: '5xx', numRetries: 0 })), `${ROUTE_POLICY}.num_retries`);
  });
});

describe("A44: the virtual host's retry_policy", () => {
  test('it is validated and kept on the virtual host; a route without its own has none on its action', () => {
    const config = accepted(decodeRc(rc(undefined, { retryOn: 'internal', numRetries: 3 })));
    assert.deepEqual(config.virtualHosts[0]!.retryPolicy, {
      retryableStatusCodes: [Code.INTERNAL],
      maxAttempts: 4,
      initialBackoffMs: 25,
      maxBackoffMs: 250,
    });
    assert.equal(routePolicy(config), undefined);
  });

  test("an invalid one is NACKed naming the virtual host's field", () => {
    nacked(
      decodeRc(rc(undefined, { retryOn: 'unavailable', retryBackOff: {} })),
      'virtual_hosts[0].retry_policy.retry_back_off.base_interval',
    );
  });

  test('neither set: no retry policy anywhere', () => {
    const config = accepted(decodeRc(rc()));
    assert.equal(config.virtualHosts[0]!.retryPolicy, undefined);
    assert.equal(routePolicy(config), undefined);
  });
});
