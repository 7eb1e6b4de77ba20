import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { addressKey } from '../../src/core/index.js';
import {
  decodeClusterLoadAssignment,
  encodeClusterLoadAssignment,
  localityKey,
  parseClusterLoadAssignment,
  type XdsEndpointResource,
  type XdsOptions,
} from '../../src/xds/index.js';
import {
  XDS_DUALSTACK_ENDPOINTS_ENV,
  XDS_ENDPOINT_HASH_KEY_BACKWARD_COMPAT_ENV,
} from '../../src/xds/resources/xds-options.js';
import { assignment, type LocalitySpec, lbEndpoint, nacks, zoneKey } from './helpers.js';

function parse(json: Record<string, unknown>, options: XdsOptions = {}): XdsEndpointResource {
  return parseClusterLoadAssignment(decodeClusterLoadAssignment(encodeClusterLoadAssignment(json)), options);
}

function parseLocalities(localities: LocalitySpec[], options: XdsOptions = {}): XdsEndpointResource {
  return parse(assignment(localities), options);
}

/** Each priority as `zone: [addresses]`. */
function shape(r: XdsEndpointResource): Record<string, string[]>[] {
  return r.priorities.map((localities) =>
    Object.fromEntries(
      localities.map((l) => [l.name.zone, l.endpoints.map((e) => e.addresses.map(addressKey).join('+'))]),
    ),
  );
}

function withEnv<T>(name: string, value: string, fn: () => T): T {
  const saved = process.env[name];
  process.env[name] = value;
  try {
    return fn();
  } finally {
    if (saved === undefined) delete process.env[name];
    else process.env[name] = saved;
  }
}

describe('A27 "ClusterLoadAssignment Proto": grouping', () => {
  test('localities are grouped by priority (unset is 0), each with its weight and endpoints', () => {
    const r = parseLocalities([
      { zone: 'b', priority: 1, weight: 5, endpoints: ['10.0.0.3'] },
      { zone: 'a', weight: 2, endpoints: ['10.0.0.1', { address: '10.0.0.2', weight: 7 }] },
    ]);
    assert.deepEqual(shape(r), [{ a: ['10.0.0.1:80', '10.0.0.2:80'] }, { b: ['10.0.0.3:80'] }]);
    const a = r.priorities[0]![0]!;
    assert.equal(a.weight, 2);
    assert.equal(a.key, zoneKey('a'));
    assert.equal(a.key, localityKey({ region: 'r', zone: 'a', subZone: '' }));
    assert.deepEqual(
      a.endpoints.map((e) => e.weight),
      [1, 7],
    );
    assert.equal(r.clusterName, 'cluster-a');
  });

  test('localities with an unset or zero weight are ignored', () => {
    const r = parseLocalities([
      { zone: 'a', endpoints: ['10.0.0.1'] },
      { zone: 'b', weight: null, endpoints: ['10.0.0.2'] },
      { zone: 'c', weight: 0, endpoints: ['not-an-ip'] }, // ignored before its endpoints are looked at
    ]);
    assert.deepEqual(shape(r), [{ a: ['10.0.0.1:80'] }]);
  });

  test('only UNKNOWN, HEALTHY and (A55) DRAINING endpoints are used', () => {
    const statuses = ['UNKNOWN', 'HEALTHY', 'UNHEALTHY', 'DRAINING', 'TIMEOUT', 'DEGRADED'];
    const r = parseLocalities([
      { zone: 'a', endpoints: statuses.map((health, i) => ({ address: `10.0.0.${i + 1}`, health })) },
    ]);
    assert.deepEqual(shape(r), [{ a: ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.4:80'] }]);
    assert.deepEqual(
      r.priorities[0]![0]!.endpoints.map((e) => e.healthStatus),
      ['UNKNOWN', 'HEALTHY', 'DRAINING'],
    );
    const off = parseLocalities(
      [{ zone: 'a', endpoints: statuses.map((health, i) => ({ address: `10.0.0.${i + 1}`, health })) }],
      { overrideHost: false },
    );
    assert.deepEqual(
      shape(off),
      [{ a: ['10.0.0.1:80', '10.0.0.2:80'] }],
      'A55 switch off: DRAINING is ignored',
    );
  });

  test('a locality may appear in several priorities; empty localities and no localities are allowed', () => {
    const r = parseLocalities([
      { zone: 'a', endpoints: ['10.0.0.1'] },
      { zone: 'a', priority: 1, endpoints: [] },
    ]);
    assert.deepEqual(shape(r), [{ a: ['10.0.0.1:80'] }, { a: [] }]);
    assert.deepEqual(parse({ clusterName: 'x' }).priorities, []);
  });

  test('A76: the envoy.lb hash_key metadata is the endpoint hash key (strings only); the backward-compat switch ignores it', () => {
    const localities: LocalitySpec[] = [
      {
        zone: 'a',
        endpoints: [
          { address: '10.0.0.1', hashKey: 'key-1' },
          { address: '10.0.0.2', hashKey: 17 },
          { address: '10.0.0.3', hashKey: '' },
          '10.0.0.4',
        ],
      },
    ];
    const keys = (r: XdsEndpointResource) => r.priorities[0]![0]!.endpoints.map((e) => e.hashKey);
    assert.deepEqual(keys(parseLocalities(localities)), ['key-1', undefined, undefined, undefined]);
    assert.deepEqual(keys(parseLocalities(localities, { endpointHashKey: false })), [
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    withEnv(XDS_ENDPOINT_HASH_KEY_BACKWARD_COMPAT_ENV, 'true', () =>
      assert.equal(keys(parseLocalities(localities))[0], undefined),
    );
  });

  test('drop_overloads become parts per million', () => {
    const r = parse({
      ...assignment([{ zone: 'a', endpoints: ['10.0.0.1'] }]),
      policy: {
        dropOverloads: [
          { category: 'lb', dropPercentage: { numerator: 5, denominator: 'HUNDRED' } },
          { category: 'throttle', dropPercentage: { numerator: 30, denominator: 'TEN_THOUSAND' } },
          { category: 'all', dropPercentage: { numerator: 2_000_000, denominator: 'MILLION' } },
        ],
      },
    });
    assert.deepEqual(r.drops, [
      { category: 'lb', perMillion: 50_000 },
      { category: 'throttle', perMillion: 3000 },
      { category: 'all', perMillion: 1_000_000 },
    ]);
  });
});

describe('A27 "ClusterLoadAssignment Proto": validation errors', () => {
  test('priorities must be contiguous from 0', () => {
    nacks(
      () =>
        parseLocalities([
          { zone: 'a', endpoints: ['10.0.0.1'] },
          { zone: 'b', priority: 2, endpoints: ['10.0.0.2'] },
        ]),
      'endpoints[1].priority',
      /priority 2 has no priority 1 before it/,
    );
    nacks(
      () => parseLocalities([{ zone: 'a', priority: 1, endpoints: ['10.0.0.1'] }]),
      'endpoints[0].priority',
      /no priority 0/,
    );
    // A priority whose only locality is ignored (weight 0) leaves a gap too.
    nacks(
      () =>
        parseLocalities([
          { zone: 'a', endpoints: ['10.0.0.1'] },
          { zone: 'b', priority: 1, weight: 0, endpoints: ['10.0.0.2'] },
          { zone: 'c', priority: 2, endpoints: ['10.0.0.3'] },
        ]),
      'endpoints[2].priority',
      /no priority 1/,
    );
  });

  test('a locality listed twice in one priority is an error', () => {
    nacks(
      () =>
        parseLocalities([
          { zone: 'a', endpoints: ['10.0.0.1'] },
          { zone: 'a', endpoints: ['10.0.0.2'] },
        ]),
      'endpoints[1].locality',
      /duplicate locality \{region=r,zone=a,sub_zone=\} in priority 0 \(also endpoints\[0\]\)/,
    );
  });

  test('locality weights summing past uint32 in one priority are an error', () => {
    nacks(
      () =>
        parseLocalities([
          { zone: 'a', weight: 0xffff_fff0, endpoints: ['10.0.0.1'] },
          { zone: 'b', weight: 0x20, endpoints: ['10.0.0.2'] },
        ]),
      'endpoints[1].load_balancing_weight',
      /add up to more than 4294967295/,
    );
  });

  test('addresses must be IPv4 or IPv6 literals with a port', () => {
    nacks(
      () => parseLocalities([{ zone: 'a', endpoints: ['backend.example.com'] }]),
      'endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address',
      /"backend\.example\.com" is not an IPv4 or IPv6 address/,
    );
    const base = (endpoint: unknown) => ({
      endpoints: [{ loadBalancingWeight: 1, lbEndpoints: [endpoint] }],
    });
    nacks(() => parse(base({})), 'endpoints[0].lb_endpoints[0].endpoint', /field not present/);
    nacks(
      () => parse(base({ endpointName: 'named' })),
      'endpoints[0].lb_endpoints[0].endpoint',
      /field not present/,
    );
    nacks(
      () => parse(base({ endpoint: {} })),
      'endpoints[0].lb_endpoints[0].endpoint.address',
      /field not present/,
    );
    nacks(
      () => parse(base({ endpoint: { address: { pipe: { path: '/tmp/s' } } } })),
      'endpoints[0].lb_endpoints[0].endpoint.address.socket_address',
      /pipe addresses are not supported/,
    );
    nacks(
      () => parse(base({ endpoint: { address: { socketAddress: { address: '10.0.0.1' } } } })),
      'endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value',
      /field not present/,
    );
    nacks(
      () =>
        parse(base({ endpoint: { address: { socketAddress: { address: '10.0.0.1', namedPort: 'http' } } } })),
      'endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value',
      /named ports are not supported/,
    );
    nacks(
      () =>
        parse(base({ endpoint: { address: { socketAddress: { address: '10.0.0.1', portValue: 70000 } } } })),
      'endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value',
      /70000 is not a valid port/,
    );
  });

  test('an endpoint weight of 0 is an error; unset is 1', () => {
    nacks(
      () => parseLocalities([{ zone: 'a', endpoints: [{ address: '10.0.0.1', weight: 0 }] }]),
      'endpoints[0].lb_endpoints[0].load_balancing_weight',
      /must be greater than 0/,
    );
  });

  test('an address used twice in the cluster is an error (across localities and priorities)', () => {
    nacks(
      () =>
        parseLocalities([
          { zone: 'a', endpoints: ['10.0.0.1'] },
          { zone: 'b', priority: 1, endpoints: ['10.0.0.2', '10.0.0.1'] },
        ]),
      'endpoints[1].lb_endpoints[1].endpoint.address',
      /duplicate endpoint address 10\.0\.0\.1:80 \(also at endpoints\[0\]\.lb_endpoints\[0\]\.endpoint\.address\)/,
    );
    // The same IP on another port is another address.
    const r = parseLocalities([{ zone: 'a', endpoints: ['10.0.0.1', { address: '10.0.0.1', port: 81 }] }]);
    assert.deepEqual(shape(r), [{ a: ['10.0.0.1:80', '10.0.0.1:81'] }]);
  });
});

describe('A61 "Support Multiple Addresses Per Endpoint in xDS": additional_addresses', () => {
  test('additional addresses follow the main address in one endpoint', () => {
    const r = parseLocalities([
      { zone: 'a', endpoints: [{ address: '10.0.0.1', additional: ['fd00::1', '10.1.0.1'] }] },
    ]);
    assert.deepEqual(shape(r), [{ a: ['10.0.0.1:80+[fd00::1]:80+10.1.0.1:80'] }]);
  });

  test('an additional address without `address` rejects the resource', () => {
    const json = assignment([{ zone: 'a', endpoints: ['10.0.0.1'] }]);
    const lb = lbEndpoint('10.0.0.2') as { endpoint: Record<string, unknown> };
    lb.endpoint.additionalAddresses = [{}];
    (json.endpoints as { lbEndpoints: unknown[] }[])[0]!.lbEndpoints.push(lb);
    nacks(
      () => parse(json),
      'endpoints[0].lb_endpoints[1].endpoint.additional_addresses[0].address',
      /field not present/,
    );
  });

  test('additional addresses are validated like the main one: IP literals, unique in the cluster', () => {
    nacks(
      () => parseLocalities([{ zone: 'a', endpoints: [{ address: '10.0.0.1', additional: ['localhost'] }] }]),
      'endpoints[0].lb_endpoints[0].endpoint.additional_addresses[0].address.socket_address.address',
      /"localhost" is not an IPv4 or IPv6 address/,
    );
    nacks(
      () =>
        parseLocalities([
          { zone: 'a', endpoints: ['10.0.0.2', { address: '10.0.0.1', additional: ['10.0.0.2'] }] },
        ]),
      'endpoints[0].lb_endpoints[1].endpoint.additional_addresses[0].address',
      /duplicate endpoint address 10\.0\.0\.2:80/,
    );
    nacks(
      () => parseLocalities([{ zone: 'a', endpoints: [{ address: '10.0.0.1', additional: ['10.0.0.1'] }] }]),
      'endpoints[0].lb_endpoints[0].endpoint.additional_addresses[0].address',
      /duplicate endpoint address 10\.0\.0\.1:80/,
    );
  });

  test('A61 "Temporary environment variable protection": GRPC_EXPERIMENTAL_XDS_DUALSTACK_ENDPOINTS=false ignores them', () => {
    const localities: LocalitySpec[] = [
      { zone: 'a', endpoints: [{ address: '10.0.0.1', additional: ['not-an-ip'] }] },
    ];
    assert.deepEqual(shape(parseLocalities(localities, { dualstackEndpoints: false })), [
      { a: ['10.0.0.1:80'] },
    ]);
    withEnv(XDS_DUALSTACK_ENDPOINTS_ENV, 'false', () =>
      assert.deepEqual(shape(parseLocalities(localities)), [{ a: ['10.0.0.1:80'] }]),
    );
    withEnv(XDS_DUALSTACK_ENDPOINTS_ENV, 'true', () =>
      assert.throws(() => parseLocalities(localities), /not an IPv4 or IPv6 address/),
    );
  });
});
