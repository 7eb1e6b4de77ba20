// The configs @grpc/grpc-js-xds generates, fed through grpc-js's own `parseLoadBalancingConfig` after both
// `register()`s (grpc-js-xds first, as the README says): every name lbtree registers resolves to lbtree's
// policy at every depth, invalid configs throw an Error naming the JSON path (grpc-js-xds NACKs on a throw),
// errors inside priority / weighted_target children are carried to the update instead (grpc-js-xds's cds
// builds those at update time), and nothing a parser throws escapes as anything but such an Error.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { experimental } from '@grpc/grpc-js';
import * as grpcJsXds from '@grpc/grpc-js-xds';
import { MAX_LB_CONFIG_DEPTH, type PolicyFactory } from '../../src/core/index.js';
import { register } from '../../src/grpc-js/index.js';
import type { LbtreeTypedConfig } from '../../src/grpc-js/policy-adapter.js';
import { defaultRegistry, registerPolicy } from '../../src/policies/index.js';

const parse = (json: object) =>
  experimental.parseLoadBalancingConfig(
    json as Parameters<typeof experimental.parseLoadBalancingConfig>[0],
  ) as LbtreeTypedConfig;

/** Is `config` one of lbtree's (an adapter config), holding lbtree's parsed config of `policy`? */
function isLbtree(config: experimental.TypedLoadBalancingConfig, name: string): boolean {
  return 'json' in config && 'error' in config && config.getLoadBalancerName() === name;
}

function throwingParser(name: string, thrown: unknown): PolicyFactory {
  return {
    name,
    parseConfig: () => {
      throw thrown;
    },
    create: () => ({ update: () => true, exitIdle() {}, resetBackoff() {}, destroy() {} }),
  };
}

/** `levels` policies nested one inside the other, `wrap` building each level around the one below. */
function nested(levels: number, wrap: (inner: object[]) => object): object {
  let config: object = { lbtree_round_robin: {} };
  for (let i = 0; i < levels; i++) config = wrap([config]);
  return config;
}

const priorityLevel = (inner: object[]) => ({
  priority: { children: { c: { config: inner, ignore_reresolution_requests: false } }, priorities: ['c'] },
});
const weightedTargetLevel = (inner: object[]) => ({
  weighted_target: { targets: { t: { weight: 1, childPolicy: inner } } },
});
const wrrLocalityLevel = (inner: object[]) => ({ xds_wrr_locality: { child_policy: inner } });

describe('grpc-js-xds-shaped configs through grpc-js parseLoadBalancingConfig', () => {
  before(() => {
    grpcJsXds.register();
    registerPolicy(throwingParser('test.throws_type_error', new TypeError('cannot read x of undefined')));
    registerPolicy(throwingParser('test.throws_string', 'a bare string'));
    register();
  });

  test('every name lbtree registers is lbtree’s in grpc-js, aliases included', () => {
    const names = register();
    for (const name of [
      'priority',
      'priority_experimental',
      'weighted_target',
      'weighted_target_experimental',
      'xds_wrr_locality',
      'xds_wrr_locality_experimental',
      'ring_hash',
      'ring_hash_experimental',
      'least_request',
      'least_request_experimental',
      'lbtree_pick_first',
      'lbtree_round_robin',
    ]) {
      assert.ok(names.includes(name), `${name} registered`);
      assert.ok(
        isLbtree(
          parse({
            [name]: name.includes('priority')
              ? { children: {}, priorities: [] }
              : name.includes('weighted_target')
                ? { targets: {} }
                : name.includes('wrr_locality')
                  ? { child_policy: [{ round_robin: {} }] }
                  : {},
          }),
          name,
        ),
        name,
      );
    }
    assert.ok(!names.includes('pick_first') && !names.includes('round_robin'), 'grpc-js keeps its built-ins');
    // grpc-js-xds's cds puts grpc-js's outlier_detection above its own xds_cluster_impl: lbtree's
    // outlier_detection_experimental must not take that name.
    assert.ok(names.includes('outlier_detection_experimental') && !names.includes('outlier_detection'));
  });

  test('the legacy ROUND_ROBIN cluster tree (cds → priority → xds_wrr_locality → round_robin) parses as lbtree’s', () => {
    const child = 'cluster=c, child_number=0';
    const config = parse({
      priority: {
        children: {
          [child]: {
            config: [{ xds_wrr_locality: { child_policy: [{ round_robin: {} }] } }],
            ignore_reresolution_requests: true,
          },
        },
        priorities: [child],
      },
    });
    assert.ok(isLbtree(config, 'priority'));
    assert.equal(config.error, null);
    const parsed = config.config as {
      children: Map<string, { config: { factory: { name: string }; config: unknown } }>;
    };
    assert.equal(parsed.children.get(child)?.config.factory.name, 'xds_wrr_locality_experimental');
  });

  test('lbtree_* names and suffix-less names resolve to lbtree’s policies at every depth', () => {
    const config = parse({
      weighted_target: {
        targets: {
          a: { weight: 1, childPolicy: [{ lbtree_round_robin: {} }] },
          b: { weight: 1, childPolicy: [{ lbtree_pick_first: {} }] },
          c: { weight: 1, childPolicy: [{ ring_hash: { min_ring_size: 8, max_ring_size: 16 } }] },
          d: { weight: 1, childPolicy: [{ least_request: { choiceCount: 3 } }] },
          e: {
            weight: 1,
            childPolicy: [
              priorityLevel([{ xds_wrr_locality: { child_policy: [{ lbtree_pick_first: {} }] } }]),
            ],
          },
        },
      },
    });
    assert.equal(config.error, null);
    const targets = (config.config as { targets: Map<string, { childPolicy: { factory: PolicyFactory } }> })
      .targets;
    assert.deepEqual(
      [...targets.values()].map((t) => t.childPolicy.factory.name),
      [
        'round_robin',
        'pick_first',
        'ring_hash_experimental',
        'least_request_experimental',
        'priority_experimental',
      ],
    );
    const registry = defaultRegistry();
    for (const [alias, canonical] of [
      ['priority', 'priority_experimental'],
      ['lbtree_round_robin', 'round_robin'],
      ['xds_wrr_locality', 'xds_wrr_locality_experimental'],
    ] as const) {
      assert.equal(registry.get(alias), registry.get(canonical), `${alias} is ${canonical}`);
    }
  });

  test('what grpc-js-xds’s RingHash converters emit parses; invalid ring sizes throw with the JSON path', () => {
    assert.ok(isLbtree(parse({ ring_hash: { min_ring_size: 1024, max_ring_size: 8388608 } }), 'ring_hash'));
    for (const [fields, pattern] of [
      [
        { min_ring_size: 0, max_ring_size: 4096 },
        /\$\.ring_hash\.min_ring_size: 0 is out of range \[1, 8388608\]/,
      ],
      [
        { min_ring_size: 2048, max_ring_size: 1024 },
        /\$\.ring_hash\.max_ring_size: maxRingSize \(1024\) is smaller/,
      ],
      [
        { min_ring_size: 1024, max_ring_size: 8388609 },
        /\$\.ring_hash\.max_ring_size: 8388609 is out of range/,
      ],
      [{ min_ring_size: Number.NaN }, /\$\.ring_hash\.min_ring_size: expected an integer, got number NaN/],
      [{ max_ring_size: Number.POSITIVE_INFINITY }, /expected an integer, got number Infinity/],
    ] as const) {
      assert.throws(() => parse({ ring_hash: fields }), pattern, JSON.stringify(fields));
    }
  });

  test('an invalid child of xds_wrr_locality (a Cluster’s endpoint-picking policy) throws, so grpc-js-xds NACKs', () => {
    assert.throws(
      () => parse(wrrLocalityLevel([{ ring_hash: { min_ring_size: 0 } }])),
      /\$\.xds_wrr_locality\.child_policy\[0\]\.ring_hash\.min_ring_size: 0 is out of range/,
    );
    assert.throws(
      () => parse(wrrLocalityLevel([{ no_such_policy: {} }])),
      /\$\.xds_wrr_locality\.child_policy: no registered LB policy among \[no_such_policy\]/,
    );
  });

  test('priority and weighted_target throw for their own fields but carry a child’s error to the update', () => {
    assert.throws(
      () => parse({ priority: { children: {}, priorities: ['missing'] } }),
      /\$\.priority\.priorities\[0\]: no child named "missing"/,
    );
    assert.throws(
      () => parse({ weighted_target: { targets: { t: { weight: 0, childPolicy: [{ round_robin: {} }] } } } }),
      /\$\.weighted_target\.targets\.t\.weight: 0 is out of range/,
    );
    // Own fields are checked even after a child failed.
    assert.throws(
      () =>
        parse({
          priority: {
            children: { c: { config: [{ ring_hash: { min_ring_size: 0 } }] } },
            priorities: ['c', 'c'],
          },
        }),
      /\$\.priority\.priorities\[1\]: "c" is listed twice/,
    );
    const carried = parse(priorityLevel([{ ring_hash: { min_ring_size: 0 } }]));
    assert.match(
      carried.error?.message ?? '',
      /^\$\.priority\.children\.c\.config\[0\]\.ring_hash\.min_ring_size: 0 is out of range/,
    );
    const carriedWt = parse(weightedTargetLevel([{ no_such_policy: {} }]));
    assert.match(
      carriedWt.error?.message ?? '',
      /\$\.weighted_target\.targets\.t\.childPolicy: no registered/,
    );
  });

  test('whatever a custom policy’s parser throws comes out as an Error naming the path, never as itself', () => {
    for (const name of ['test.throws_type_error', 'test.throws_string']) {
      assert.throws(
        () => parse({ [name]: {} }),
        (e: unknown) =>
          e instanceof Error &&
          !(e instanceof TypeError) &&
          e.message.includes(`$.${name}: the ${name} config parser failed`),
      );
      // Under grpc-js-xds-shaped parents: thrown by xds_wrr_locality, carried by weighted_target / priority.
      assert.throws(() => parse(wrrLocalityLevel([{ [name]: {} }])), /config parser failed/);
      const carried = parse(weightedTargetLevel([{ [name]: {} }]));
      assert.match(
        carried.error?.message ?? '',
        /childPolicy\[0\]\["test\.throws_\w+"\]: the .* config parser failed/,
      );
    }
    assert.doesNotThrow(() =>
      experimental.selectLbConfigFromList([{ 'test.throws_type_error': {} }, { round_robin: {} }]),
    );
  });

  test(`configs nested 1,000 and 3,000 levels deep give a ConfigError at level ${MAX_LB_CONFIG_DEPTH + 1}, not a RangeError`, () => {
    for (const levels of [1_000, 3_000]) {
      for (const [name, wrap] of [
        ['priority', priorityLevel],
        ['weighted_target', weightedTargetLevel],
      ] as const) {
        const config = parse(nested(levels, wrap));
        assert.match(
          config.error?.message ?? '',
          new RegExp(
            `^\\$\\.${name}\\..*: LB policy configs nested more than ${MAX_LB_CONFIG_DEPTH} levels deep$`,
          ),
          `${levels} levels of ${name}`,
        );
        // The path names level MAX + 1, the first one refused.
        const levelsInPath = (config.error?.path.split(`.${name}`).length ?? 0) - 1;
        assert.equal(levelsInPath, MAX_LB_CONFIG_DEPTH + 1, 'the path stops at the limit');
      }
      assert.throws(
        () => parse(nested(levels, wrrLocalityLevel)),
        new RegExp(`LB policy configs nested more than ${MAX_LB_CONFIG_DEPTH} levels deep`),
      );
    }
    // At the limit itself, a config parses.
    assert.equal(parse(nested(MAX_LB_CONFIG_DEPTH - 1, priorityLevel)).error, null);
  });
});
