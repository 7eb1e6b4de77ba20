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
