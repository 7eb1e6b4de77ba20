// Issue 10 §2: LB configs nested hundreds of levels deep overflowed the stack while parsing. The simulator's
// registry refuses them with a ConfigError naming the path of the first level past MAX_LB_CONFIG_DEPTH, and a
// running tree keeps serving (A56 / A28 parents; the limit is lbtree's, documented in the README).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, MAX_LB_CONFIG_DEPTH } from '../../src/core/index.js';
import { Simulation } from '../../src/sim/index.js';

function nested(levels: number, wrap: (inner: object[]) => object): object {
  let config: object = { round_robin: {} };
  for (let i = 0; i < levels; i++) config = wrap([config]);
  return config;
}
const levels = {
  priority_experimental: (inner: object[]) => ({
    priority_experimental: { children: { c: { config: inner } }, priorities: ['c'] },
  }),
  weighted_target_experimental: (inner: object[]) => ({
    weighted_target_experimental: { targets: { t: { weight: 1, childPolicy: inner } } },
  }),
  xds_wrr_locality_experimental: (inner: object[]) => ({
    xds_wrr_locality_experimental: { childPolicy: inner },
  }),
};

describe('LB configs nested deeper than the limit (simulator)', () => {
  for (const depth of [1_000, 3_000]) {
    for (const [name, wrap] of Object.entries(levels)) {
      test(`${depth} levels of ${name}: a ConfigError at level ${MAX_LB_CONFIG_DEPTH + 1}; the running tree keeps serving`, () => {
        const sim = new Simulation();
        assert.equal(sim.update(['10.0.0.1:80'], { round_robin: {} }), true);
        sim.subchannel('10.0.0.1:80').setState('READY');
        sim.flush();
        assert.equal(sim.state, 'READY');
        assert.equal(sim.update(['10.0.0.1:80'], nested(depth, wrap)), false);
        const error = sim.lastConfigError;
        assert.ok(error instanceof ConfigError);
        assert.match(error.problem, new RegExp(`nested more than ${MAX_LB_CONFIG_DEPTH} levels deep`));
        assert.equal(error.path.split(`.${name}`).length - 1, MAX_LB_CONFIG_DEPTH + 1);
        assert.equal(sim.state, 'READY', 'the previous config keeps serving');
        assert.equal(sim.pick().type, 'complete');
      });
    }
  }
});
