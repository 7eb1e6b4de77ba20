import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  addressKey,
  ConfigError,
  HIERARCHICAL_PATH,
  type LbUpdate,
  type LoadBalancer,
  Registry,
  unavailable,
} from '../../src/core/index.js';
import {
  defaultRegistry,
  roundRobinFactory,
  WEIGHTED_TARGET,
  WeightedPicker,
  type WeightedTargetConfig,
  weightedTargetConfigFor,
  weightedTargetFactory,
  wrrLocalityFactory,
} from '../../src/policies/index.js';
import { type PlainEndpoint, Simulation } from '../../src/sim/index.js';
import { chiSquare } from '../support/stats.js';

const RR = [{ round_robin: {} }];

function wrr(childPolicy: unknown = RR): unknown[] {
  return [{ xds_wrr_locality_experimental: { childPolicy } }];
}

/** An endpoint in a locality; `weight` is the locality's weight (omit it to leave the attribute out). */
function ep(address: string, locality?: string, weight?: number, path?: string[]): PlainEndpoint {
  return {
    addresses: [address],
    attributes: {
      ...(locality !== undefined ? { locality } : {}),
      ...(weight !== undefined ? { localityWeight: weight } : {}),
      ...(path !== undefined ? { path } : {}),
    },
  };
}

function rejects(json: unknown, path: string, problem: RegExp, sim = new Simulation()): void {
  assert.equal(sim.update([ep('10.0.0.1:80', 'a', 1)], json), false);
  const e = sim.lastConfigError;
  assert.ok(e instanceof ConfigError, 'expected a ConfigError');
  assert.equal(e.path, path);
  assert.match(e.problem, problem);
}

/**
 * A sim whose weighted_target is the real one, wrapped to record every update it gets from wrr_locality,
 * shown as `{ targets: { locality: [weight, child policy name] }, endpoints: ['address [locality, ...path]'] }`.
 */
function recordingSim(): { sim: Simulation; last(): { targets: object; endpoints: string[] } } {
  const registry = defaultRegistry().clone();
  const updates: LbUpdate<WeightedTargetConfig>[] = [];
  registry.register(
    {
      name: WEIGHTED_TARGET,
      parseConfig: weightedTargetFactory.parseConfig,
      create(helper, lookup): LoadBalancer<WeightedTargetConfig> {
        const real = weightedTargetFactory.create(helper, lookup);
        return {
          update(update) {
            updates.push(update);
            return real.update(update);
          },
          exitIdle: () => real.exitIdle(),
          resetBackoff: () => real.resetBackoff(),
          destroy: () => real.destroy(),
        };
      },
    },
    { override: true },
  );
  const sim = new Simulation({ registry, trace: true });
  return {
    sim,
    last() {
      const u = updates.at(-1);
      assert.ok(u, 'weighted_target got an update');
      const targets = Object.fromEntries(
        [...u.config.targets].map(([name, t]) => [name, [t.weight, t.childPolicy.factory.name]]),
      );
      // Each endpoint as weighted_target routes it: the name of its target, then the path that target's policy
      // sees (the config names each endpoint's target by its locality: no path element is prepended for it).
      const childOf = u.config.childOf;
      assert.ok(childOf, 'the config deals endpoints by locality');
      const endpoints = u.endpoints.ok
        ? u.endpoints.value.flatMap((e) => {
            const target = childOf(e);
            if (target === undefined) return [];
            const route = [target, ...(e.attributes.get(HIERARCHICAL_PATH) ?? [])];
            return [`${addressKey(e.addresses[0]!)} ${JSON.stringify(route)}`];
          })
        : [];
      return { targets, endpoints };
    },
  };
}

/** A sim with every given address scripted to connect after 1 ms. */
function scripted(
  addresses: string[],
  options: ConstructorParameters<typeof Simulation>[0] = {},
): Simulation {
  const sim = new Simulation(options);
  for (const a of addresses) sim.script(a, { connectAfterMs: 1 });
  return sim;
}

function countPicks(sim: Simulation, n: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const p = sim.pick();
    const key = p.type === 'complete' ? p.address : p.type;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

describe('xds_wrr_locality config (A52 "xDS WRR Locality Load Balancer")', () => {
  test('accepts childPolicy or child_policy; the child list is parsed as any LoadBalancingConfig list', () => {
    const sim = new Simulation();
    assert.equal(sim.update([ep('10.0.0.1:80', 'a', 1)], wrr()), true);
    assert.equal(
      sim.update(
        [ep('10.0.0.1:80', 'a', 1)],
        // A52's example: a custom policy this client does not have, then round_robin.
        [
          {
            xds_wrr_locality_experimental: {
              child_policy: [{ 'myorg.MyCustomLeastRequestPolicy': { choiceCount: 2 } }, { round_robin: {} }],
            },
          },
        ],
      ),
      true,
    );
    assert.equal(sim.lastConfigError, undefined);
    assert.equal(wrrLocalityFactory.name, 'xds_wrr_locality_experimental');
  });

  test('rejected configs name the JSON path of the problem, nested child policies included', () => {
    const base = '$[0].xds_wrr_locality_experimental';
    rejects([{ xds_wrr_locality_experimental: {} }], `${base}.childPolicy`, /required field is missing/);
    rejects([{ xds_wrr_locality_experimental: 'rr' }], base, /expected an object/);
    rejects(
      [{ xds_wrr_locality_experimental: { childPolicy: RR, child_policy: RR } }],
      `${base}.childPolicy`,
      /given twice/,
    );
    rejects(wrr([]), `${base}.childPolicy`, /empty LB policy list/);
    rejects(wrr([{ 'myorg.Unknown': {} }]), `${base}.childPolicy`, /no registered LB policy/);
    rejects(
      [
        {
          xds_wrr_locality_experimental: {
            child_policy: [{ least_request_experimental: { choiceCount: 1 } }],
          },
        },
      ],
      `${base}.child_policy[0].least_request_experimental.choiceCount`,
      /at least 2/,
    );
    rejects(
      wrr([{ pick_first: { shuffleAddressList: 'yes' } }]),
      `${base}.childPolicy[0].pick_first.shuffleAddressList`,
      /expected a boolean/,
    );
  });

  test('without weighted_target_experimental registered the config is rejected', () => {
    const registry = new Registry();
    registry.register(wrrLocalityFactory);
    registry.register(roundRobinFactory);
    rejects(
      wrr(),
      '$[0].xds_wrr_locality_experimental',
      /weighted_target_experimental.*not registered/,
      new Simulation({ registry }),
    );
  });

  test('a rejected config leaves the running tree serving', () => {
    const sim = scripted(['10.0.0.1:80']);
    sim.update([ep('10.0.0.1:80', 'a', 1)], wrr());
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    const picker = sim.picker;
    assert.equal(
      sim.update([ep('10.0.0.1:80', 'a', 1)], wrr([{ least_request_experimental: { choiceCount: 0 } }])),
      false,
    );
    assert.equal(sim.state, 'READY');
    assert.equal(sim.picker, picker);
    assert.equal(sim.pick().type, 'complete');
  });
});

describe('xds_wrr_locality builds the weighted_target config (A52 "xDS WRR Locality Load Balancer")', () => {
  test('the targets read as a map of every locality to its weight and the child policy, whichever way they are read', () => {
    const child = defaultRegistry().parseLbConfigList([{ round_robin: {} }]);
    const weights = new Map([
      ['zone-a', 3],
      ['zone-b', 1],
    ]);
    const { targets } = weightedTargetConfigFor(weights, child);
    const expected = [
      ['zone-a', { weight: 3, childPolicy: child }],
      ['zone-b', { weight: 1, childPolicy: child }],
    ];
    assert.equal(targets.size, 2);
    assert.equal(targets.has('zone-a'), true);
    assert.equal(targets.has('zone-c'), false);
    assert.deepEqual(targets.get('zone-b'), { weight: 1, childPolicy: child });
    assert.equal(targets.get('zone-c'), undefined);
    assert.deepEqual([...targets], expected);
    assert.deepEqual([...targets.entries()], expected);
    assert.deepEqual([...targets.keys()], ['zone-a', 'zone-b']);
    assert.deepEqual(
      [...targets.values()],
      expected.map(([, t]) => t),
    );
    const seen: unknown[] = [];
    targets.forEach((target, name, map) => {
      assert.equal(map, targets);
      seen.push([name, target]);
    });
    assert.deepEqual(seen, expected);
  });

  test('localities of equal weight share one target config (A52: every locality runs the same endpoint picking policy)', () => {
    const child = defaultRegistry().parseLbConfigList([{ round_robin: {} }]);
    const weights = new Map(Array.from({ length: 1000 }, (_, i) => [`l${i}`, 1 + (i % 3)]));
    const { targets } = weightedTargetConfigFor(weights, child);
    const distinct = new Set<unknown>();
    targets.forEach((target, name) => {
      assert.equal(target.weight, weights.get(name));
      assert.equal(target.childPolicy, child);
      distinct.add(target);
    });
    assert.equal(distinct.size, 3, 'one config per weight');
    assert.equal(targets.get('l0'), targets.get('l3'));
    assert.ok(Object.isFrozen(targets.get('l0')), 'shared, so never changed in place');
  });

  test('one target per locality with its locality weight and the child policy; each endpoint routed to its locality', () => {
    const w = recordingSim();
    const accepted = w.sim.update(
      [
        ep('10.0.0.1:80', 'region_a/zone_a/sub_a', 1),
        ep('10.0.0.2:80', 'region_b/zone_b/sub_b', 2),
        ep('10.0.0.3:80', 'region_a/zone_a/sub_a', 1),
        ep('10.0.0.4:80', 'region_c', 7, ['inner']),
      ],
      wrr([{ least_request_experimental: { choiceCount: 3 } }]),
    );
    assert.equal(accepted, true);
    assert.deepEqual(w.last(), {
      targets: {
        'region_a/zone_a/sub_a': [1, 'least_request_experimental'],
        'region_b/zone_b/sub_b': [2, 'least_request_experimental'],
        region_c: [7, 'least_request_experimental'],
      },
      endpoints: [
        '10.0.0.1:80 ["region_a/zone_a/sub_a"]',
        '10.0.0.2:80 ["region_b/zone_b/sub_b"]',
        '10.0.0.3:80 ["region_a/zone_a/sub_a"]',
        '10.0.0.4:80 ["region_c","inner"]',
      ],
    });
    // weighted_target split them: every endpoint got its own connection attempt.
    assert.equal(w.sim.subchannels.size, 4);
    assert.ok(
      [...w.sim.subchannels.values()].every((s) => s.connectionRequests === 1),
      'each endpoint connecting once',
    );
  });

  test('a locality seen with several weights keeps the first, and the others are traced as a warning', () => {
    const w = recordingSim();
    w.sim.update(
      [
        ep('10.0.0.1:80', 'a', 3),
        ep('10.0.0.2:80', 'b', 1),
        ep('10.0.0.3:80', 'a', 5),
        ep('10.0.0.4:80', 'a', 4),
      ],
      wrr(),
    );
    assert.deepEqual(w.last().targets, { a: [3, 'round_robin'], b: [1, 'round_robin'] });
    assert.equal(
      w.last().endpoints.length,
      4,
      'endpoints with a discarded weight still serve in their locality',
    );
    const warnings = w.sim.traces.filter((t) => /warning/.test(t));
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0]!, /locality a has weight 3 and also 5, 4; using the first, 3/);
  });

  test('endpoints without a locality or a locality weight (or weight 0) are dropped, with a trace', () => {
    const w = recordingSim();
    w.sim.update(
      [
        ep('10.0.0.1:80', 'a', 1),
        ep('10.0.0.2:80', 'a'),
        ep('10.0.0.3:80', undefined, 4),
        ep('10.0.0.4:80', 'b', 0),
        ep('10.0.0.5:80'),
      ],
      wrr(),
    );
    assert.deepEqual(w.last(), { targets: { a: [1, 'round_robin'] }, endpoints: ['10.0.0.1:80 ["a"]'] });
    assert.deepEqual([...w.sim.subchannels.keys()], ['10.0.0.1:80']);
    const dropped = w.sim.traces.filter((t) => /dropped/.test(t));
    assert.equal(dropped.length, 1);
    assert.match(
      dropped[0]!,
      /dropped 4 endpoint\(s\) without a locality and locality weight: 10\.0\.0\.2:80 .*, \.\.\.$/,
    );
  });

  test('each update regenerates the config: new weights, new and removed localities, new child policy', () => {
    const w = recordingSim();
    w.sim.update([ep('10.0.0.1:80', 'a', 1), ep('10.0.0.2:80', 'b', 1)], wrr());
    w.sim.update(
      [ep('10.0.0.1:80', 'a', 5), ep('10.0.0.3:80', 'c', 2)],
      wrr([{ least_request_experimental: {} }]),
    );
    assert.deepEqual(w.last(), {
      targets: { a: [5, 'least_request_experimental'], c: [2, 'least_request_experimental'] },
      endpoints: ['10.0.0.1:80 ["a"]', '10.0.0.3:80 ["c"]'],
    });
  });

  test('no endpoint with a locality weight: TF saying so, re-resolution, rejected; the next good list recovers with the same connections', () => {
    const sim = scripted(['10.0.0.1:80', '10.0.0.2:80']);
    const good = [ep('10.0.0.1:80', 'a', 1), ep('10.0.0.2:80', 'b', 1)];
    sim.update(good, wrr());
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    const created = sim.subchannelsCreated;
    assert.equal(sim.update([ep('10.0.0.1:80', 'a'), ep('10.0.0.2:80')], wrr()), false);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    assert.equal(
      sim.status.details,
      'xds_wrr_locality_experimental: none of 2 endpoint(s) has a locality and a locality weight',
    );
    assert.equal(sim.pick().type, 'fail');
    assert.equal(sim.reresolutionRequests, 1);
    assert.equal(sim.update([], wrr()), false);
    assert.match(sim.status.details, /empty endpoint list/);
    // weighted_target retained the localities: they come back READY on their old connections.
    assert.equal(sim.update(good, wrr()), true);
    assert.equal(sim.state, 'READY');
    assert.equal(sim.subchannelsCreated, created);
    assert.deepEqual([...countPicks(sim, 100).keys()].sort(), ['10.0.0.1:80', '10.0.0.2:80']);
  });

  test("after its own failure, the child's standing report passes up again even if the child has nothing new to say", () => {
    // A weighted_target stand-in that reports READY once, on its first update, and never again.
    const registry = defaultRegistry().clone();
    const picker = { pick: () => ({ type: 'queue' as const }) };
    registry.register(
      {
        name: WEIGHTED_TARGET,
        parseConfig: weightedTargetFactory.parseConfig,
        create(helper): LoadBalancer<WeightedTargetConfig> {
          let updates = 0;
          return {
            update(update) {
              if (updates++ === 0) helper.updateState('READY', { code: 0, details: '' }, picker);
              return update.config.targets.size > 0;
            },
            exitIdle() {},
            resetBackoff() {},
            destroy() {},
          };
        },
      },
      { override: true },
    );
    const sim = new Simulation({ registry });
    sim.update([ep('10.0.0.1:80', 'a', 1)], wrr());
    assert.equal(sim.state, 'READY');
    sim.update([ep('10.0.0.1:80')], wrr());
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    sim.update([ep('10.0.0.1:80', 'a', 1)], wrr());
    assert.equal(sim.state, 'READY');
    assert.equal(sim.picker, picker);
  });

  test('a resolver error: TF before any list; afterwards the localities in hand keep serving', () => {
    const sim = scripted(['10.0.0.1:80']);
    sim.createRoot(wrr());
    assert.equal(sim.updateError(unavailable('no such cluster')), false);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    assert.match(sim.status.details, /name resolution failed: no such cluster/);
    sim.update([ep('10.0.0.1:80', 'a', 1)], wrr());
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    assert.equal(sim.updateError(unavailable('xDS stream broke')), false);
    assert.equal(sim.state, 'READY');
    assert.equal(sim.pick().type, 'complete');
    assert.equal(sim.subchannel('10.0.0.1:80').released, false);
  });
});

describe('xds_wrr_locality traffic (A52: weighted_target "with a weighted policy selection for each locale")', () => {
  test('calls split across localities by locality weight, then by the child policy within one (chi-square, seeded RNG)', () => {
    const weights = [1, 2, 3, 4];
    const addresses = weights.flatMap((_, l) => [`10.0.${l}.1:80`, `10.0.${l}.2:80`]);
    const sim = scripted(addresses, { seed: 17 });
    sim.update(
      addresses.map((a, i) => ep(a, `l${Math.floor(i / 2)}`, weights[Math.floor(i / 2)])),
      wrr(),
    );
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    const N = 20_000;
    const counts = countPicks(sim, N);
    const perLocality = weights.map(
      (_, l) => (counts.get(`10.0.${l}.1:80`) ?? 0) + (counts.get(`10.0.${l}.2:80`) ?? 0),
    );
    assert.equal(
      perLocality.reduce((a, b) => a + b, 0),
      N,
      'every pick completed',
    );
    // 3 degrees of freedom: 16.27 is the 0.999 quantile. Ignoring the weights would score in the thousands.
    const x2 = chiSquare(perLocality, weights);
    assert.ok(x2 < 16.27, `chi-square ${x2.toFixed(2)} for ${perLocality}`);
    assert.ok(chiSquare(perLocality, [1, 1, 1, 1]) > 1000, 'the test can tell weighted from uniform');
    // round_robin inside each locality: its two endpoints alternate, so they differ by at most one pick.
    weights.forEach((_, l) => {
      assert.ok(Math.abs((counts.get(`10.0.${l}.1:80`) ?? 0) - (counts.get(`10.0.${l}.2:80`) ?? 0)) <= 1);
    });
  });

  test('with least_request as the endpoint picking policy (A52 example tree), end to end', () => {
    const addresses = ['10.0.0.1:80', '10.0.1.1:80'];
    const sim = scripted(addresses, { seed: 23 });
    sim.update(
      [ep(addresses[0]!, 'a', 1), ep(addresses[1]!, 'b', 3)],
      wrr([{ least_request_experimental: { choiceCount: 2 } }]),
    );
    sim.advance(1);
    const counts = countPicks(sim, 8000);
    const x2 = chiSquare([counts.get(addresses[0]!) ?? 0, counts.get(addresses[1]!) ?? 0], [1, 3]);
    assert.ok(x2 < 10.83, `chi-square ${x2.toFixed(2)}`);
    // The call hooks of the leaf policy reach the channel unchanged through both parents.
    const r = sim.picker.pick({ metadata: { get: () => [] } });
    assert.ok(r.type === 'complete' && r.onCallStarted && r.onCallEnded);
  });

  test('an endpoint moving to another locality takes its share from there', () => {
    const [a1, a2, b1] = ['10.0.0.1:80', '10.0.0.2:80', '10.0.1.1:80'];
    const sim = scripted([a1!, a2!, b1!], { seed: 29 });
    sim.update([ep(a1!, 'a', 1), ep(a2!, 'a', 1), ep(b1!, 'b', 1)], wrr());
    sim.advance(1);
    let counts = countPicks(sim, 8000);
    let x2 = chiSquare(
      [a1!, a2!, b1!].map((k) => counts.get(k) ?? 0),
      [1, 1, 2],
    );
    assert.ok(x2 < 13.82, `before: chi-square ${x2.toFixed(2)}`);
    sim.update([ep(a1!, 'a', 1), ep(a2!, 'b', 1), ep(b1!, 'b', 1)], wrr());
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    counts = countPicks(sim, 8000);
    x2 = chiSquare(
      [a1!, a2!, b1!].map((k) => counts.get(k) ?? 0),
      [2, 1, 1],
    );
    assert.ok(x2 < 13.82, `after: chi-square ${x2.toFixed(2)}`);
    assert.ok(
      chiSquare(
        [a1!, a2!, b1!].map((k) => counts.get(k) ?? 0),
        [1, 1, 2],
      ) > 1000,
      'the test can tell the old split from the new',
    );
  });
});

describe('xds_wrr_locality state (A52: a parent to weighted_target_experimental)', () => {
  test("weighted_target's state and picker pass up unchanged", () => {
    const sim = new Simulation();
    sim.script('10.0.0.1:80', { connectAfterMs: 5 });
    sim.script('10.0.1.1:80', 'hang');
    sim.update([ep('10.0.0.1:80', 'a', 1), ep('10.0.1.1:80', 'b', 1)], wrr());
    assert.equal(sim.state, 'CONNECTING');
    assert.deepEqual(sim.pick(), { type: 'queue' });
    sim.advance(5);
    assert.equal(sim.state, 'READY');
    assert.ok(sim.picker instanceof WeightedPicker, "weighted_target's own picker");
    assert.deepEqual([...countPicks(sim, 50).keys()], ['10.0.0.1:80']);
  });

  test("every locality failing: TF with a child's real connection error", () => {
    const sim = new Simulation();
    sim.script('10.0.0.1:80', { failAfterMs: 5, details: 'connect ECONNREFUSED 10.0.0.1:80' });
    sim.script('10.0.1.1:80', { failAfterMs: 10, details: 'connect ECONNREFUSED 10.0.1.1:80' });
    sim.update([ep('10.0.0.1:80', 'a', 1), ep('10.0.1.1:80', 'b', 1)], wrr());
    sim.advance(10);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    assert.match(sim.status.details, /ECONNREFUSED 10\.0\.1\.1:80/);
  });

  test('re-resolution requests pass up', () => {
    const sim = scripted(['10.0.0.1:80']);
    sim.update([ep('10.0.0.1:80', 'a', 1)], wrr());
    sim.advance(1);
    assert.equal(sim.reresolutionRequests, 0);
    sim.subchannel('10.0.0.1:80').setState('IDLE'); // the connection dropped
    sim.flush();
    assert.equal(sim.reresolutionRequests, 1);
  });

  test('exitIdle reaches the leaves (pick_first as the endpoint picking policy goes IDLE on a dropped connection)', () => {
    const sim = scripted(['10.0.0.1:80']);
    sim.update([ep('10.0.0.1:80', 'a', 1)], wrr([{ pick_first: {} }]));
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    sim.subchannel('10.0.0.1:80').setState('IDLE');
    sim.flush();
    assert.equal(sim.state, 'IDLE');
    const created = sim.subchannelsCreated;
    sim.advance(10_000);
    assert.equal(sim.subchannelsCreated, created, 'IDLE until asked');
    sim.exitIdle();
    // pick_first let the dropped subchannel go: it connects on a new one.
    assert.equal(sim.subchannelsCreated, created + 1);
    assert.equal(sim.subchannel('10.0.0.1:80').state, 'CONNECTING');
    sim.advance(1);
    assert.equal(sim.state, 'READY');
  });

  test('resetBackoff reaches the subchannels', () => {
    const sim = new Simulation({ backoffMs: 60_000 });
    sim.script('10.0.0.1:80', { failAfterMs: 1 });
    sim.update([ep('10.0.0.1:80', 'a', 1)], wrr());
    sim.advance(1);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    const before = sim.subchannel('10.0.0.1:80').connectionRequests;
    sim.resetBackoff();
    assert.equal(
      sim.subchannel('10.0.0.1:80').connectionRequests,
      before + 1,
      'retried without waiting out the backoff',
    );
  });

  test('destroy() releases every subchannel and leaves no timer behind', () => {
    const sim = scripted(['10.0.0.1:80', '10.0.1.1:80']);
    sim.update([ep('10.0.0.1:80', 'a', 1), ep('10.0.1.1:80', 'b', 2)], wrr());
    sim.advance(1);
    sim.update([ep('10.0.0.1:80', 'a', 1)], wrr()); // b retained by weighted_target, with a timer
    assert.ok(sim.clock.pendingTimers > 0, 'a retention timer');
    sim.destroy();
    assert.ok(
      [...sim.subchannels.values()].every((s) => s.released),
      'every subchannel released',
    );
    assert.equal(sim.clock.pendingTimers, 0);
    const history = sim.history.length;
    sim.advance(60 * 60_000);
    assert.equal(sim.history.length, history, 'nothing reported after destroy');
  });
});
