import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ConfigError,
  ConfigReader,
  type PolicyFactory,
  protoFieldName,
  Registry,
} from '../../src/core/index.js';
import { registerAllPolicies } from '../../src/policies/index.js';

function fakeFactory(
  name: string,
  parse: (json: unknown, path: string) => unknown = () => ({}),
): PolicyFactory {
  return {
    name,
    parseConfig: parse,
    create: () => ({ update: () => true, exitIdle() {}, resetBackoff() {}, destroy() {} }),
  };
}

describe('Registry (A24 LB policy config)', () => {
  test('registering a taken name throws unless { override: true }', () => {
    const r = registerAllPolicies(new Registry());
    assert.throws(() => r.register(fakeFactory('round_robin')), /already registered.*override/);
    const replacement = fakeFactory('round_robin');
    r.register(replacement, { override: true });
    assert.equal(r.get('round_robin'), replacement);
  });

  test('parseLbConfigList takes the first registered entry, skipping unknown policies', () => {
    const r = registerAllPolicies(new Registry());
    const parsed = r.parseLbConfigList([{ made_up_policy: {} }, { round_robin: {} }, { pick_first: {} }]);
    assert.equal(parsed.factory.name, 'round_robin');
  });

  test('parseLbConfigList skips a registered entry whose config does not parse', () => {
    const r = registerAllPolicies(new Registry());
    const parsed = r.parseLbConfigList([{ pick_first: { shuffleAddressList: 1 } }, { round_robin: {} }]);
    assert.equal(parsed.factory.name, 'round_robin');
  });

  test('when nothing parses, the error is the first parse error, with its JSON path', () => {
    const r = registerAllPolicies(new Registry());
    assert.throws(
      () =>
        r.parseLbConfigList(
          [{ nope: {} }, { pick_first: { shuffleAddressList: 'x' } }],
          '$.loadBalancingConfig',
        ),
      (e: ConfigError) =>
        e instanceof ConfigError &&
        e.path === '$.loadBalancingConfig[1].pick_first.shuffleAddressList' &&
        /expected a boolean/.test(e.message),
    );
  });

  test('when no policy is registered, the error lists what was offered', () => {
    const r = registerAllPolicies(new Registry());
    assert.throws(() => r.parseLbConfigList([{ nope: {} }]), /no registered LB policy among \[nope\]/);
    assert.throws(() => r.parseLbConfigList([]), /empty LB policy list/);
    assert.throws(
      () => r.parseLbConfigList([{ a: {}, b: {} }]),
      (e: ConfigError) => e.path === '$[0]' && /exactly one policy name/.test(e.problem),
    );
    assert.throws(
      () => r.parseLbConfigList('round_robin'),
      (e: ConfigError) => e.path === '$',
    );
  });

  test('aliases resolve to the canonical policy at every depth; replacing a policy replaces all its names', () => {
    const r = registerAllPolicies(new Registry());
    assert.equal(r.get('priority'), r.get('priority_experimental'));
    assert.equal(r.get('lbtree_round_robin'), r.get('round_robin'));
    assert.ok(r.allNames().includes('xds_wrr_locality') && !r.names().includes('xds_wrr_locality'));
    const parsed = r.parseLbConfigList({
      priority: {
        children: {
          c: { config: [{ xds_wrr_locality: { child_policy: [{ lbtree_round_robin: {} }] } }] },
        },
        priorities: ['c'],
      },
    });
    assert.equal(parsed.factory.name, 'priority_experimental');
    assert.throws(() => r.register(fakeFactory('ring_hash')), /"ring_hash" is already registered/);
    const replacement = fakeFactory('ring_hash_experimental');
    r.register(replacement, { override: true });
    assert.equal(r.get('ring_hash'), replacement, 'the alias follows the replacement');
    assert.deepEqual(r.clone().aliasesOf('ring_hash_experimental'), ['ring_hash']);
  });

  test('whatever a parser throws becomes a ConfigError naming the entry, and the next entry is tried', () => {
    const r = new Registry();
    r.register(
      fakeFactory('custom', () => {
        throw new TypeError('boom');
      }),
    );
    r.register(fakeFactory('fallback'));
    assert.equal(r.parseLbConfigList([{ custom: {} }, { fallback: {} }]).factory.name, 'fallback');
    assert.throws(
      () => r.parseLbConfigList([{ custom: {} }], '$.lb'),
      (e: ConfigError) =>
        e instanceof ConfigError &&
        e.path === '$.lb[0].custom' &&
        /custom config parser failed: TypeError: boom/.test(e.message),
    );
  });

  test('NaN and Infinity read as themselves in errors, not as JSON null', () => {
    const r = registerAllPolicies(new Registry());
    assert.throws(
      () => r.parseLbConfigList({ ring_hash_experimental: { minRingSize: Number.NaN } }),
      /got number NaN/,
    );
    assert.throws(
      () => r.parseLbConfigList({ least_request_experimental: { choiceCount: Number.NEGATIVE_INFINITY } }),
      /got number -Infinity/,
    );
  });

  test('a single entry object is accepted as a one-element list', () => {
    const r = registerAllPolicies(new Registry());
    assert.equal(r.parseLbConfigList({ pick_first: {} }).factory.name, 'pick_first');
  });
});

describe('ConfigReader (proto3 JSON field names)', () => {
  test('accepts the JSON name and the proto field name', () => {
    assert.equal(protoFieldName('childPolicy'), 'child_policy');
    assert.equal(new ConfigReader({ childPolicy: 1 }, '$').field('childPolicy')?.path, '$.childPolicy');
    assert.equal(new ConfigReader({ child_policy: 1 }, '$').field('childPolicy')?.path, '$.child_policy');
  });

  test('rejects a field given under both names, and missing or mistyped fields, naming the path', () => {
    assert.throws(
      () => new ConfigReader({ childPolicy: 1, child_policy: 1 }, '$').field('childPolicy'),
      /given twice/,
    );
    assert.throws(
      () => new ConfigReader({}, '$.x').required('minRingSize'),
      (e: ConfigError) => e.path === '$.x.minRingSize',
    );
    assert.throws(
      () => new ConfigReader({ min_ring_size: 0 }, '$').optionalInteger('minRingSize', 1, 10),
      (e: ConfigError) => e.path === '$.min_ring_size' && /out of range/.test(e.problem),
    );
    assert.equal(new ConfigReader({ n: '42' }, '$').optionalInteger('n', 0, 100), 42, 'int64 as a string');
    assert.throws(() => new ConfigReader([], '$'), /expected an object, got an array/);
  });
});
