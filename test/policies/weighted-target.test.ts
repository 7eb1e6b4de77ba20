import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ConfigError,
  type ConnectivityState,
  err,
  NO_CHANNEL_ARGS,
  type Picker,
  queuePicker,
  unavailable,
} from '../../src/core/index.js';
import {
  AliasTable,
  defaultRegistry,
  ReadyWeights,
  SnapshotArray,
  WeightedPicker,
} from '../../src/policies/index.js';
import { Simulation } from '../../src/sim/index.js';
import { chiSquare } from '../support/stats.js';
import { type PuppetConfig, pickedPuppet, puppet, puppetWorld } from './puppet-policy.js';

type Target = { weight: unknown; childPolicy?: unknown; child_policy?: unknown };

function wtConfig(targets: Record<string, Target>): unknown[] {
  return [{ weighted_target_experimental: { targets } }];
}

/** Targets that are puppets named after themselves, weight 1 unless given. */
function puppets(
  names: string[],
  weights: Record<string, number> = {},
  extra: Record<string, Partial<PuppetConfig>> = {},
): unknown[] {
  return wtConfig(
    Object.fromEntries(names.map((n) => [n, { weight: weights[n] ?? 1, childPolicy: puppet(n, extra[n]) }])),
  );
}

const RR = [{ round_robin: {} }];
const MINUTE = 60_000;
const RETENTION = 15 * MINUTE;

function rejects(json: unknown, path: string, message: RegExp): void {
  const sim = new Simulation();
  assert.equal(sim.update([], json), false);
  const e = sim.lastConfigError;
  assert.ok(e instanceof ConfigError, 'expected a ConfigError');
  assert.equal(e.path, path);
  assert.match(e.problem, message);
}

describe('weighted_target config (A28 "Weighted target LB policy")', () => {
  test('accepts childPolicy and child_policy, weights as numbers or decimal strings', () => {
    const sim = new Simulation();
    const ok = sim.update(
      [],
      wtConfig({ a: { weight: 3, childPolicy: RR }, b: { weight: '4294967295', child_policy: RR } }),
    );
    assert.equal(sim.lastConfigError, undefined);
    assert.equal(ok, true);
  });

  test('weight must be a uint32 of at least 1', () => {
    const base = '$[0].weighted_target_experimental.targets.a.weight';
    rejects(wtConfig({ a: { weight: 0, childPolicy: RR } }), base, /out of range \[1, 4294967295\]/);
    rejects(wtConfig({ a: { weight: 2 ** 32, childPolicy: RR } }), base, /out of range/);
    rejects(wtConfig({ a: { weight: 1.5, childPolicy: RR } }), base, /expected an integer/);
    rejects(wtConfig({ a: { weight: undefined, childPolicy: RR } }), base, /missing/);
  });

  test('nested child policies are validated at parse time, with their JSON path', () => {
    rejects(
      wtConfig({
        a: { weight: 1, childPolicy: RR },
        b: { weight: 1, child_policy: [{ pick_first: { shuffleAddressList: 0 } }] },
      }),
      '$[0].weighted_target_experimental.targets.b.child_policy[0].pick_first.shuffleAddressList',
      /expected a boolean/,
    );
    rejects(
      wtConfig({ a: { weight: 1 } }),
      '$[0].weighted_target_experimental.targets.a.childPolicy',
      /missing/,
    );
    rejects([{ weighted_target_experimental: {} }], '$[0].weighted_target_experimental.targets', /missing/);
  });
});

describe('weighted_target children (A28 "Weighted target LB policy", A56 "Hierarchical Addresses")', () => {
  test('every target is created at once and gets its share of the endpoints', () => {
    const sim = new Simulation();
    sim.update(
      [
        { addresses: ['10.0.0.1:80'], attributes: { path: ['a'] } },
        { addresses: ['10.0.0.2:80'], attributes: { path: ['b'] } },
        { addresses: ['10.0.0.3:80'], attributes: { path: ['b'] } },
        { addresses: ['10.0.0.4:80'], attributes: { path: ['unknown'] } },
        { addresses: ['10.0.0.5:80'] },
      ],
      wtConfig({ a: { weight: 1, childPolicy: RR }, b: { weight: 1, childPolicy: RR } }),
    );
    assert.deepEqual([...sim.subchannels.keys()], ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80']);
    assert.ok([...sim.subchannels.values()].every((s) => s.connectionRequests === 1));
  });

  test('each target gets exactly the endpoints naming it, whatever their order; a retained target and unknown names get none', () => {
    const w = puppetWorld();
    const at = (address: string, ...path: string[]) => ({ addresses: [address], attributes: { path } });
    w.sim.update(
      [at('10.0.0.1:80', 'a'), at('10.0.0.2:80', 'b'), at('10.0.0.3:80', 'c')],
      puppets(['a', 'b', 'c']),
    );
    const cUpdates = w.get('c').updates.length;
    // c is removed (retained), the endpoints come in another order than the targets, interleaved.
    w.sim.update(
      [
        at('10.0.0.4:80', 'b', 'x'),
        at('10.0.0.5:80', 'a'),
        at('10.0.0.6:80', 'c'),
        at('10.0.0.7:80', 'nobody'),
        at('10.0.0.8:80', 'b'),
        at('10.0.0.9:80', 'a', 'y'),
        { addresses: ['10.0.0.10:80'] },
      ],
      puppets(['a', 'b']),
    );
    assert.deepEqual(w.get('a').endpoints, ['10.0.0.5:80', '10.0.0.9:80 ["y"]']);
    assert.deepEqual(w.get('b').endpoints, ['10.0.0.4:80 ["x"]', '10.0.0.8:80']);
    assert.equal(w.get('c').updates.length, cUpdates, 'a retained target gets no update');
  });

  test('targets are kept by name, not position: a reordered update, a new target in between and a returning one keep every child, and weights follow names', () => {
    // A28: targets are a map by name. An update finds each target at its old position first and by name
    // only when that misses; whatever order the names come in, each must reach its own child.
    const w = puppetWorld();
    const counts = () => {
      const seen: Record<string, number> = {};
      for (let i = 0; i < 400; i++) {
        const name = pickedPuppet(w.sim);
        seen[name] = (seen[name] ?? 0) + 1;
      }
      return seen;
    };
    w.sim.update([], puppets(['a', 'b', 'c', 'd'], { a: 1, b: 1, c: 1, d: 1 }));
    for (const name of ['a', 'b', 'c', 'd']) w.get(name).report('READY');
    // d removed (retained); the rest reordered, with a new target e in between.
    w.sim.update([], puppets(['c', 'e', 'a', 'b'], { a: 1, b: 1, c: 97, e: 1 }));
    assert.equal(w.all.length, 5, 'only e is new');
    w.get('e').report('READY');
    const reordered = counts();
    assert.equal(reordered.d, undefined, 'd is retained, never picked');
    assert.ok(reordered.c! > 330, `c has 97 of 100 weight: ${JSON.stringify(reordered)}`);
    // d comes back first, in another order again: its retained child, with its new weight.
    w.sim.update([], puppets(['d', 'b', 'a', 'c', 'e'], { a: 1, b: 1, c: 1, d: 96, e: 1 }));
    assert.equal(w.all.length, 5, 'd is reused from retention');
    assert.equal(w.get('d').destroyed, false);
    const back = counts();
    assert.ok(back.d! > 330, `d has 96 of 100 weight: ${JSON.stringify(back)}`);
    w.sim.advance(RETENTION * 2);
    assert.ok(
      ['a', 'b', 'c', 'd', 'e'].every((name) => !w.get(name).destroyed),
      'no current target is left in retention',
    );
  });

  test('a target new in an update carrying a resolver error gets its share of the last good list; the others keep theirs', () => {
    const sim = new Simulation();
    const config = (names: string[]) =>
      wtConfig(Object.fromEntries(names.map((n) => [n, { weight: 1, childPolicy: RR }])));
    const root = sim.createRoot(config(['a']));
    sim.update(
      [
        { addresses: ['10.0.0.1:80'], attributes: { path: ['a'] } },
        { addresses: ['10.0.0.2:80'], attributes: { path: ['b'] } },
      ],
      config(['a']),
    );
    assert.deepEqual([...sim.subchannels.keys()], ['10.0.0.1:80']);
    const accepted = root.update({
      endpoints: err(unavailable('DNS down')),
      config: defaultRegistry().parseLbConfigList(config(['a', 'b'])).config,
      attributes: NO_CHANNEL_ARGS,
    });
    assert.equal(accepted, false);
    sim.flush();
    assert.deepEqual([...sim.subchannels.keys()], ['10.0.0.1:80', '10.0.0.2:80'], 'b connects to its share');
    assert.equal(sim.subchannel('10.0.0.1:80').released, false, 'a keeps its endpoint');
  });

  test('a target no endpoint names gets an empty list (and fails), without failing its siblings', () => {
    const sim = new Simulation();
    sim.script('10.0.0.1:80', { connectAfterMs: 1 });
    sim.update(
      [{ addresses: ['10.0.0.1:80'], attributes: { path: ['a'] } }],
      wtConfig({ a: { weight: 1, childPolicy: RR }, empty: { weight: 1, childPolicy: RR } }),
    );
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    for (let i = 0; i < 10; i++) assert.equal(sim.pick().type, 'complete');
  });

  test('child reports made during an update are aggregated once, after every target is updated', () => {
    const w = puppetWorld();
    const before = w.sim.history.length;
    w.sim.update(
      [],
      puppets(['a', 'b'], {}, { a: { reportOnUpdate: 'READY' }, b: { reportOnUpdate: 'TRANSIENT_FAILURE' } }),
    );
    assert.equal(w.get('b').historyAtUpdate.at(-1), before);
    assert.deepEqual(
      w.sim.history.map((h) => h.state),
      ['READY'],
    );
  });
});

describe('weighted_target child policy changes (A28 "Weighted target LB policy": a target\'s config is its child policy)', () => {
  test('a target given another policy: the new instance takes over, and nothing the replaced ones report reaches the channel', () => {
    const w = puppetWorld();
    const withA = (childPolicy: unknown[]) =>
      wtConfig({ a: { weight: 1, childPolicy }, b: { weight: 1, childPolicy: puppet('b') } });
    w.sim.update([], withA(puppet('a')));
    const first = w.get('a');
    first.report('READY');
    w.get('b').report('CONNECTING');
    assert.equal(pickedPuppet(w.sim), 'a');
    // round_robin with no endpoints fails: the target leaves READY with it.
    w.sim.update([], withA(RR));
    assert.equal(first.destroyed, true);
    assert.equal(w.sim.state, 'CONNECTING');
    const picker = w.sim.picker;
    first.report('READY');
    assert.equal(w.sim.picker, picker, 'the replaced instance is muted');
    assert.equal(w.sim.state, 'CONNECTING');
    // Back to a puppet: a third instance; the first one (the target's first helper) stays muted.
    w.sim.update([], withA(puppet('a')));
    const third = w.get('a');
    assert.notEqual(third, first);
    first.report('READY');
    assert.equal(w.sim.state, 'CONNECTING');
    third.report('READY');
    assert.equal(w.sim.state, 'READY');
    assert.equal(pickedPuppet(w.sim), 'a');
    w.sim.update([], withA(RR));
    third.report('READY');
    assert.equal(w.sim.state, 'CONNECTING', 'a replaced later instance is muted too');
  });
});

describe('weighted_target state (A28: "the aggregated state of all child policies")', () => {
  const table: [ConnectivityState[], ConnectivityState][] = [
    [['READY', 'TRANSIENT_FAILURE', 'CONNECTING'], 'READY'],
    [['IDLE', 'READY'], 'READY'],
    [['CONNECTING', 'IDLE', 'TRANSIENT_FAILURE'], 'CONNECTING'],
    [['TRANSIENT_FAILURE', 'CONNECTING'], 'CONNECTING'],
    [['IDLE', 'TRANSIENT_FAILURE'], 'IDLE'],
    [['IDLE', 'IDLE'], 'IDLE'],
    [['TRANSIENT_FAILURE', 'TRANSIENT_FAILURE'], 'TRANSIENT_FAILURE'],
  ];
  for (const [states, expected] of table) {
    test(`children ${states.join(' + ')} -> ${expected}`, () => {
      const w = puppetWorld();
      const names = states.map((_, i) => `t${i}`);
      w.sim.update([], puppets(names));
      states.forEach((s, i) => {
        w.get(names[i]!).report(s);
      });
      assert.equal(w.sim.state, expected);
    });
  }

  test("TRANSIENT_FAILURE carries a child's real error, and picks fail with the children's errors", () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['a', 'b']));
    w.get('a').report('TRANSIENT_FAILURE', 'a: connect ECONNREFUSED');
    w.get('b').report('TRANSIENT_FAILURE', 'b: connect ETIMEDOUT');
    assert.deepEqual(
      w.sim.status,
      { code: 14, details: 'b: connect ETIMEDOUT' },
      'the child that failed last',
    );
    const details = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const p = w.sim.pick();
      assert.equal(p.type, 'fail');
      if (p.type === 'fail') details.add(p.status.details);
    }
    assert.deepEqual([...details].sort(), ['a: connect ECONNREFUSED', 'b: connect ETIMEDOUT']);
  });

  test('no targets: TRANSIENT_FAILURE saying so', () => {
    const sim = new Simulation();
    assert.equal(sim.update([], wtConfig({})), false);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    assert.match(sim.status.details, /no targets/);
  });

  test('IDLE: a pick asks every child to leave IDLE, off the data path', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['a', 'b']));
    w.get('a').report('IDLE');
    w.get('b').report('IDLE');
    assert.deepEqual(w.sim.pick(), { type: 'queue' });
    assert.deepEqual(
      w.all.map((p) => p.exitIdleCalls),
      [1, 1],
    );
  });

  test('only READY children are picked, whatever their weights', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['a', 'b', 'c', 'd'], { a: 1, b: 100, c: 100, d: 100 }));
    w.get('a').report('READY');
    w.get('b').report('CONNECTING');
    w.get('c').report('TRANSIENT_FAILURE');
    w.get('d').report('IDLE');
    const picked = new Set<string>();
    for (let i = 0; i < 200; i++) picked.add(pickedPuppet(w.sim));
    assert.deepEqual([...picked], ['a']);
    w.get('c').report('READY');
    for (let i = 0; i < 200; i++) picked.add(pickedPuppet(w.sim));
    assert.deepEqual([...picked].sort(), ['a', 'c']);
    w.get('a').report('CONNECTING');
    picked.clear();
    for (let i = 0; i < 200; i++) picked.add(pickedPuppet(w.sim));
    assert.deepEqual([...picked], ['c'], 'a child leaving READY leaves the picker');
  });
});

describe('weighted_target picks (A28: "The WRR algorithm will be random based")', () => {
  test('READY children are picked in proportion to their weights (chi-square, seeded RNG)', () => {
    const weights = [1, 2, 3, 4];
    const keys = ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80', '10.0.0.4:80'];
    const sim = new Simulation({ seed: 7 });
    for (const k of keys) sim.script(k, { connectAfterMs: 1 });
    sim.update(
      keys.map((k, i) => ({ addresses: [k], attributes: { path: [`l${i}`] } })),
      wtConfig(Object.fromEntries(keys.map((_, i) => [`l${i}`, { weight: weights[i], childPolicy: RR }]))),
    );
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    const counts = [0, 0, 0, 0];
    const N = 20_000;
    for (let i = 0; i < N; i++) {
      const p = sim.pick();
      assert.equal(p.type, 'complete');
      if (p.type === 'complete') counts[keys.indexOf(p.address)]!++;
    }
    // 3 degrees of freedom: 16.27 is the 0.999 quantile. Uniform picking would score in the thousands.
    const x2 = chiSquare(counts, weights);
    assert.ok(x2 < 16.27, `chi-square ${x2.toFixed(2)} for counts ${counts}`);
    assert.ok(chiSquare(counts, [1, 1, 1, 1]) > 1000, 'the test can tell weighted from uniform');
  });

  test('with only some targets READY, each READY one still gets exactly its share (the redraw over READY weights)', () => {
    const weights = [1, 2, 3, 4, 50, 50];
    const keys = weights.map((_, i) => `10.0.0.${i + 1}:80`);
    const sim = new Simulation({ seed: 11 });
    // The two heaviest targets never connect: most first draws land on them and are redrawn.
    keys.forEach((k, i) => {
      sim.script(k, i < 4 ? { connectAfterMs: 1 } : 'hang');
    });
    sim.update(
      keys.map((k, i) => ({ addresses: [k], attributes: { path: [`l${i}`] } })),
      wtConfig(Object.fromEntries(keys.map((_, i) => [`l${i}`, { weight: weights[i], childPolicy: RR }]))),
    );
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 20_000; i++) {
      const p = sim.pick();
      assert.equal(p.type, 'complete');
      if (p.type === 'complete') counts[keys.indexOf(p.address)]!++;
    }
    const x2 = chiSquare(counts, weights.slice(0, 4));
    assert.ok(x2 < 16.27, `chi-square ${x2.toFixed(2)} for counts ${counts}`);
  });

  test('an older picker keeps redrawing over the READY weights it was built with, after the tree has moved on', () => {
    // The READY-weights tree changes in place; a picker built before a change (a call racing with it) samples
    // exactly the READY set it saw, as a tree built fresh for that set does, for every r.
    const weights = [3, 1, 4, 1, 5, 9, 2, 6];
    const ready = [true, false, true, true, false, false, true, false];
    const slots = new SnapshotArray<string | null>();
    weights.forEach((_, slot) => {
      slots.push(ready[slot] ? `t${slot}` : null);
    });
    const table = new AliasTable(weights);
    // Each picker is a snapshot of the slots as they are when it is made.
    const pickerOver = (readyWeights: ReadyWeights) =>
      WeightedPicker.over(slots as SnapshotArray<Picker | null>, {
        table,
        random: () => 0,
        ready: readyWeights,
      });
    const live = new ReadyWeights(weights, (slot) => ready[slot]!);
    const old = pickerOver(live);
    // The same slots, over READY weights of their own that never change: what `old` must go on sampling.
    const reference = pickerOver(new ReadyWeights(weights, (slot) => ready[slot]!));
    // Then targets 5 and 7 turn READY and target 0 leaves READY, as a storm would do it.
    for (const [slot, delta] of [
      [5, 9],
      [7, 6],
      [0, -3],
    ] as const) {
      live.add(slot, delta);
      slots.set(slot, delta > 0 ? `t${slot}` : null);
    }
    const now = pickerOver(live);
    const fresh = pickerOver(new ReadyWeights(weights, (slot) => now.at(slot) !== null));
    assert.equal(old.readyTotal, 3 + 4 + 1 + 2);
    assert.equal(now.readyTotal, 4 + 1 + 9 + 2 + 6);
    for (let k = 0; k < 1000; k++) {
      const r = k / 1000;
      assert.equal(old.sampleReady(r), reference.sampleReady(r), `old picker, r = ${r}`);
      assert.ok(ready[old.sampleReady(r)], 'an old picker draws only targets READY when it was built');
      assert.equal(now.sampleReady(r), fresh.sampleReady(r), `newest picker, r = ${r}`);
    }
  });

  test('the alias table gives each child exactly its share of the random range, in O(1) per pick', () => {
    const cases: number[][] = [[1, 2, 1], [5], [1, 1, 1, 1], [7, 1, 3, 0xffff_ffff, 2], [1, 1000]];
    for (const weights of cases) {
      const used = weights.map(() => 0);
      const pickers: Picker[] = weights.map((_, i) => ({
        pick: () => {
          used[i]!++;
          return { type: 'queue' };
        },
      }));
      let r = 0;
      const picker = WeightedPicker.of(pickers, weights, () => r);
      const total = weights.reduce((a, b) => a + b, 0);
      // A grid over [0, 1) fine enough that every column threshold falls between grid points.
      const K = weights.length * Math.min(total, 4000) * 4;
      for (let k = 0; k < K; k++) {
        r = (k + 0.5) / K;
        picker.pick({ metadata: { get: () => [] } });
      }
      const expected = weights.map((w) => (w / total) * K);
      used.forEach((u, i) => {
        assert.ok(Math.abs(u - expected[i]!) <= weights.length, `weights ${weights}: ${used} vs ${expected}`);
      });
      // The largest random() can return still lands on a child.
      r = 1 - 2 ** -53;
      picker.pick({ metadata: { get: () => [] } });
    }
    assert.throws(() => WeightedPicker.of([], [], () => 0), RangeError);
    assert.throws(() => WeightedPicker.of([queuePicker], [1, 2], () => 0), RangeError);
    assert.throws(() => WeightedPicker.of([queuePicker], [0], () => 0), RangeError);
  });

  test('one target: its own picker goes up as it is (every weighted pick lands on it), a second target brings the weighted picker back', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['a']));
    w.get('a').report('READY');
    assert.equal(w.sim.picker, w.get('a').picker, 'the only target picks every call');
    w.get('a').report('READY');
    assert.equal(w.sim.picker, w.get('a').picker, 'and each new picker of it goes up in turn');
    w.sim.update([], puppets(['a', 'b']));
    assert.ok(w.sim.picker instanceof WeightedPicker, 'two targets: picked by weight');
    assert.equal(pickedPuppet(w.sim), 'a', 'b is not READY');
  });

  test('a weight change takes effect with the update', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['a', 'b'], { a: 1, b: 1 }));
    w.get('a').report('READY');
    w.get('b').report('READY');
    const before = w.sim.picker;
    w.sim.update([], puppets(['a', 'b'], { a: 1, b: 9 }));
    assert.notEqual(w.sim.picker, before, 'a new picker with the new weights');
  });
});

describe('weighted_target retention of removed targets (A28: "When a child policy is removed, it will be cached for 15 minutes")', () => {
  test('a removed target stops being picked, is kept 15 minutes, then destroyed', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['a', 'b']));
    w.get('a').report('READY');
    w.get('b').report('CONNECTING');
    w.sim.update([], puppets(['b']));
    assert.equal(w.sim.state, 'CONNECTING', 'a no longer counts');
    assert.equal(w.get('a').destroyed, false);
    w.sim.advance(RETENTION - 1);
    assert.equal(w.get('a').destroyed, false);
    w.sim.advance(1);
    assert.equal(w.get('a').destroyed, true);
  });

  test('a removed target that comes back within 15 minutes is reused, with its new config and endpoints', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['a', 'b']));
    w.get('a').report('READY');
    w.get('b').report('READY');
    w.sim.update([], puppets(['b']));
    w.sim.advance(10 * MINUTE);
    w.sim.update([{ addresses: ['10.0.0.1:80'], attributes: { path: ['a', 'x'] } }], puppets(['a', 'b']));
    assert.equal(w.all.length, 2, 'no new child');
    assert.deepEqual(w.get('a').endpoints, ['10.0.0.1:80 ["x"]']);
    assert.equal(w.sim.state, 'READY');
    w.get('b').report('TRANSIENT_FAILURE');
    assert.equal(pickedPuppet(w.sim), 'a', 'a is picked again');
    w.sim.advance(RETENTION * 2);
    assert.equal(w.get('a').destroyed, false, 'the retention timer was cancelled');
  });

  test('reports from a retained target change nothing', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['a', 'b']));
    w.get('a').report('CONNECTING');
    w.get('b').report('CONNECTING');
    w.sim.update([], puppets(['b']));
    const reports = w.sim.history.length;
    w.get('a').report('READY');
    assert.equal(w.sim.history.length, reports);
    assert.equal(w.sim.state, 'CONNECTING');
  });

  test('a retained target reuses its connections when it comes back (no new subchannels)', () => {
    const sim = new Simulation();
    const endpoints = [
      { addresses: ['10.0.0.1:80'], attributes: { path: ['a'] } },
      { addresses: ['10.0.0.2:80'], attributes: { path: ['b'] } },
    ];
    for (const e of endpoints) sim.script(e.addresses[0]!, { connectAfterMs: 1 });
    const both = wtConfig({ a: { weight: 1, childPolicy: RR }, b: { weight: 1, childPolicy: RR } });
    sim.update(endpoints, both);
    sim.advance(1);
    sim.update(endpoints, wtConfig({ b: { weight: 1, childPolicy: RR } }));
    assert.equal(sim.subchannel('10.0.0.1:80').released, false, 'kept while retained');
    const created = sim.subchannelsCreated;
    sim.update(endpoints, both);
    assert.equal(sim.subchannelsCreated, created);
    const seen = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const p = sim.pick();
      if (p.type === 'complete') seen.add(p.address);
    }
    assert.deepEqual([...seen].sort(), ['10.0.0.1:80', '10.0.0.2:80']);
  });
});
