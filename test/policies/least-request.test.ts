import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type CompletePick,
  ConfigError,
  OK_STATUS,
  type PickArgs,
  type Picker,
  type PickResult,
  unavailable,
} from '../../src/core/index.js';
import {
  ActiveCounts,
  CallCounter,
  LeastRequestPicker,
  leastRequestFactory,
  parseLeastRequestConfig,
} from '../../src/policies/index.js';
import { Simulation, type SubchannelHandle, seededRandom } from '../../src/sim/index.js';
import { connectAll, picks, tally } from '../support/sim-picks.js';
import { CHI2_999, chiSquare } from '../support/stats.js';

const A = '10.0.0.1:80';
const B = '10.0.0.2:80';
const C = '10.0.0.3:80';
const ARGS: PickArgs = { metadata: { get: () => [] } };

function lr(choiceCount?: unknown): unknown[] {
  return [{ least_request_experimental: choiceCount === undefined ? {} : { choiceCount } }];
}

/** A sim whose given backends all connect after 1 ms, updated with them and advanced until connected. */
function readySim(
  keys: string[],
  config: unknown[] = lr(),
  options: ConstructorParameters<typeof Simulation>[0] = {},
): Simulation {
  const sim = connectAll(new Simulation(options), keys, config);
  assert.equal(sim.state, 'READY');
  return sim;
}

/** The raw result of one pick on the channel's current picker (hooks included), with the address picked. */
function rawPick(sim: Simulation): CompletePick & { address: string } {
  const r = sim.picker.pick(ARGS);
  assert.equal(r.type, 'complete');
  const c = r as CompletePick;
  return Object.assign(Object.create(null), c, { address: (c.subchannel as SubchannelHandle).key });
}

/**
 * Each endpoint's complete result on the current picker (the same object for every pick of one endpoint),
 * found by picking until every endpoint has shown up. Calling its hooks holds calls open on that endpoint.
 */
function resultsByAddress(sim: Simulation, keys: string[]): Map<string, CompletePick> {
  const found = new Map<string, CompletePick>();
  for (let i = 0; i < 10_000 && found.size < keys.length; i++) {
    const r = sim.picker.pick(ARGS);
    assert.equal(r.type, 'complete');
    const c = r as CompletePick;
    found.set((c.subchannel as SubchannelHandle).key, c);
  }
  assert.equal(found.size, keys.length, 'every endpoint was picked');
  return found;
}

/** Starts `n` calls on the endpoint of `result` and returns a function that ends them. */
function hold(result: CompletePick, n = 1): () => void {
  assert.ok(result.onCallStarted && result.onCallEnded, 'least_request results carry both call hooks');
  for (let i = 0; i < n; i++) result.onCallStarted();
  return () => {
    for (let i = 0; i < n; i++) result.onCallEnded!(OK_STATUS);
  };
}

/** Each endpoint's outstanding calls as the live view shows them (A48 counters), by address. */
function activeCalls(sim: Simulation): Record<string, number> {
  const node = sim.describe();
  assert.ok(node, 'a policy is running');
  return Object.fromEntries(
    (node.children ?? []).map((c) => [c.name, Number(c.facts?.activeCalls ?? Number.NaN)]),
  );
}

/**
 * With n endpoints whose loads are all different, ordered by load, the pick is the least loaded of the
 * `choiceCount` samples (drawn with replacement): P(endpoint k) = ((n-k)/n)^c - ((n-k-1)/n)^c.
 * Categories whose expectation is under 5 calls are merged into the last one that is not.
 */
function expectedShares(n: number, c: number, picks: number): { p: number[]; merge: (k: number) => number } {
  const raw = Array.from({ length: n }, (_, k) => ((n - k) / n) ** c - ((n - k - 1) / n) ** c);
  let last = n - 1;
  while (last > 0 && raw.slice(last).reduce((a, b) => a + b, 0) * picks < 5) last--;
  const p = raw.slice(0, last);
  p.push(raw.slice(last).reduce((a, b) => a + b, 0));
  return { p, merge: (k) => Math.min(k, last) };
}

describe('least_request config (A48 "LB Policy Config")', () => {
  test('choiceCount defaults to 2; choice_count and decimal strings are accepted; above 10 means 10', () => {
    assert.deepEqual(parseLeastRequestConfig({}, '$'), { choiceCount: 2 });
    assert.deepEqual(parseLeastRequestConfig({ choiceCount: 3 }, '$'), { choiceCount: 3 });
    assert.deepEqual(parseLeastRequestConfig({ choice_count: 7 }, '$'), { choiceCount: 7 });
    assert.deepEqual(parseLeastRequestConfig({ choiceCount: '4' }, '$'), { choiceCount: 4 });
    assert.deepEqual(parseLeastRequestConfig({ choiceCount: 10 }, '$'), { choiceCount: 10 });
    assert.deepEqual(parseLeastRequestConfig({ choiceCount: 11 }, '$'), { choiceCount: 10 });
    assert.deepEqual(parseLeastRequestConfig({ choiceCount: 0xffff_ffff }, '$'), { choiceCount: 10 });
    const sim = new Simulation();
    assert.equal(sim.update([A], lr(1000)), true);
    assert.equal(sim.lastConfigError, undefined);
    assert.equal(leastRequestFactory.name, 'least_request_experimental');
  });

  test('choiceCount below 2 (or not a uint32) is rejected with a ConfigError naming its path', () => {
    const path = '$[0].least_request_experimental.choiceCount';
    const cases: [unknown, RegExp][] = [
      [1, /must be at least 2, got 1/],
      [0, /must be at least 2, got 0/],
      ['1', /must be at least 2, got 1/],
      [-3, /out of range/],
      [2 ** 32, /out of range/],
      [2.5, /expected an integer/],
      ['two', /expected an integer/],
    ];
    for (const [value, problem] of cases) {
      const sim = new Simulation();
      assert.equal(sim.update([A], lr(value)), false, `choiceCount ${JSON.stringify(value)}`);
      const e = sim.lastConfigError;
      assert.ok(e instanceof ConfigError, 'expected a ConfigError');
      assert.equal(e.path, path);
      assert.match(e.problem, problem);
    }
    const sim = new Simulation();
    assert.equal(sim.update([A], [{ least_request_experimental: { choice_count: 1 } }]), false);
    assert.equal(sim.lastConfigError?.path, '$[0].least_request_experimental.choice_count');
    assert.equal(sim.update([A], [{ least_request_experimental: [] }]), false);
    assert.equal(sim.lastConfigError?.path, '$[0].least_request_experimental');
  });

  test('a rejected config leaves the running policy serving', () => {
    const sim = readySim([A, B]);
    const picker = sim.picker;
    assert.equal(sim.update([A, B], lr(1)), false);
    assert.equal(sim.picker, picker);
    assert.equal(sim.state, 'READY');
  });
});

describe('least_request children (A48 "Subchannel connectivity management", A61 "Petiole policies")', () => {
  test('one pick_first child per endpoint, every one connected at once; multi-address endpoints too', () => {
    const sim = new Simulation();
    for (const k of [A, B, C]) sim.script(k, 'hang'); // attempts stay CONNECTING
    sim.update([A, B, { addresses: [C, '[2001:db8::3]:80'] }], lr());
    assert.deepEqual(
      [A, B, C].map((k) => sim.subchannel(k).connectionRequests),
      [1, 1, 1],
    );
    assert.equal(
      sim.subchannel('[2001:db8::3]:80').connectionRequests,
      0,
      'the second address waits its turn',
    );
    assert.equal(sim.state, 'CONNECTING');
  });

  test('duplicate endpoints collapse into one connection and get no extra weight (A48 "Duplicate addresses")', () => {
    const sim = readySim([A, B, A, A] as string[]);
    assert.equal(sim.subchannelsCreated, 2);
    const counts = tally(picks(sim, 4000));
    // Equal loads: uniform. Weighting A by its 3 copies would give it 75%.
    assert.ok(chiSquare([counts[A]!, counts[B]!], [0.5, 0.5]) < CHI2_999[1]!, JSON.stringify(counts));
  });

  test('an unchanged list reuses every child; a removed endpoint is released; a new one connects', () => {
    const sim = readySim([A, B]);
    const created = sim.subchannelsCreated;
    sim.update([A, B], lr());
    assert.equal(sim.subchannelsCreated, created);
    sim.script(C, { connectAfterMs: 1 });
    sim.update([B, C], lr());
    assert.equal(sim.subchannel(A).released, true);
    assert.equal(sim.subchannel(C).connectionRequests, 1);
    sim.advance(1);
    assert.deepEqual(Object.keys(tally(picks(sim, 100))).sort(), [B, C]);
  });

  test('a child that goes IDLE (connection dropped) is asked to reconnect at once', () => {
    const sim = readySim([A, B]);
    sim.subchannel(A).setState('IDLE');
    sim.flush();
    assert.equal(sim.subchannel(A).connectionRequests, 1, 'a fresh subchannel, asked to connect');
    assert.equal(sim.state, 'READY');
    sim.advance(1);
    assert.deepEqual(Object.keys(tally(picks(sim, 100))).sort(), [A, B]);
  });
});

describe('least_request state (A48 "Aggregated Connectivity State", A62 sticky TF)', () => {
  test('READY if any child is READY, and only READY children are picked; CONNECTING before', () => {
    const sim = new Simulation();
    sim.script(A, { connectAfterMs: 5 });
    sim.script(B, 'hang');
    sim.update([A, B], lr());
    assert.equal(sim.state, 'CONNECTING');
    assert.deepEqual(sim.pick(), { type: 'queue' });
    sim.advance(5);
    assert.equal(sim.state, 'READY');
    assert.deepEqual(picks(sim, 20), Array(20).fill(A));
  });

  test("TF once every child failed, with a child's real error; sticky until a child is READY", () => {
    const sim = new Simulation({ backoffMs: 1000 });
    sim.script(A, { failAfterMs: 10, details: 'connect ECONNREFUSED 10.0.0.1:80' });
    sim.script(B, { failAfterMs: 20, details: 'connect ECONNREFUSED 10.0.0.2:80' });
    sim.update([A, B], lr());
    sim.advance(10);
    assert.equal(sim.state, 'CONNECTING', 'B is still connecting');
    sim.advance(10);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    const pick = sim.pick();
    assert.equal(pick.type, 'fail');
    assert.match(pick.type === 'fail' ? pick.status.details : '', /ECONNREFUSED 10\.0\.0\.2:80$/);
    sim.advance(2000); // children retry (CONNECTING again) while the policy stays in TF
    assert.ok(sim.subchannel(A).connectionRequests >= 2, 'A retried');
    assert.ok(sim.history.slice(1).every((h) => h.state === 'TRANSIENT_FAILURE'));
    sim.script(B, { connectAfterMs: 1 });
    sim.advance(1000);
    assert.equal(sim.state, 'READY');
    assert.deepEqual(picks(sim, 3), [B, B, B]);
  });

  test('a new endpoint added while in TF does not leave TF until it is READY (sticky TF)', () => {
    const sim = new Simulation();
    sim.script(A, { failAfterMs: 10 });
    sim.update([A], lr());
    sim.advance(10);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    sim.script(B, { connectAfterMs: 50 });
    sim.update([A, B], lr());
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    sim.advance(50);
    assert.equal(sim.state, 'READY');
    assert.deepEqual(picks(sim, 3), [B, B, B]);
  });

  test('re-resolution: per failed child pass, per dropped connection, per READY child turned unhealthy', () => {
    const sim = readySim([A, B]);
    sim.subchannel(A).setState('IDLE');
    sim.flush();
    assert.equal(sim.reresolutionRequests, 1);
    sim.subchannel(B).setHealth('TRANSIENT_FAILURE');
    sim.flush();
    assert.equal(sim.reresolutionRequests, 2);
    sim.script(C, { failAfterMs: 5 });
    sim.update([A, B, C], lr());
    sim.advance(5);
    assert.equal(sim.reresolutionRequests, 3);
  });

  test('an unhealthy READY child leaves the picker and comes back (A61 generic health reporting)', () => {
    const sim = readySim([A, B]);
    sim.subchannel(A).setHealth('TRANSIENT_FAILURE', unavailable('NOT_SERVING'));
    sim.flush();
    assert.deepEqual(picks(sim, 10), Array(10).fill(B));
    sim.subchannel(A).setHealth('READY');
    sim.flush();
    assert.deepEqual(Object.keys(tally(picks(sim, 100))).sort(), [A, B]);
  });

  test('an empty list: TF, re-resolution, not accepted; a resolver error keeps serving', () => {
    const sim = readySim([A]);
    assert.equal(sim.updateError(unavailable('xDS stream broke')), false);
    assert.equal(sim.state, 'READY');
    assert.equal(sim.update([], lr()), false);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    assert.match(sim.status.details, /empty endpoint list/);
    assert.equal(sim.reresolutionRequests, 1);
    assert.equal(sim.subchannel(A).released, true);
    const fresh = new Simulation();
    fresh.createRoot(lr());
    assert.equal(fresh.updateError(unavailable('no such host')), false);
    assert.equal(fresh.state, 'TRANSIENT_FAILURE');
    assert.match(fresh.status.details, /name resolution failed: no such host/);
  });

  test('destroy() releases every subchannel and leaves no timer behind', () => {
    const sim = readySim([A, B]);
    sim.destroy();
    assert.equal(sim.subchannel(A).released && sim.subchannel(B).released, true);
    assert.equal(sim.clock.pendingTimers, 0);
  });
});

describe('least_request outstanding request counters (A48 "Outstanding request counters")', () => {
  test('calls held open steer picks away from an endpoint; ending them brings it back', () => {
    const sim = readySim([A, B], lr(), { seed: 3 });
    const results = resultsByAddress(sim, [A, B]);
    const endA = hold(results.get(A)!, 1);
    // A loaded, B idle, 2 samples with replacement: A only when both samples are A, 1 time in 4.
    let counts = tally(picks(sim, 4000));
    assert.ok(chiSquare([counts[A]!, counts[B]!], [0.25, 0.75]) < CHI2_999[1]!, JSON.stringify(counts));
    assert.ok(chiSquare([counts[A]!, counts[B]!], [0.5, 0.5]) > 100, 'the test can tell loaded from not');
    endA();
    counts = tally(picks(sim, 4000));
    assert.ok(chiSquare([counts[A]!, counts[B]!], [0.5, 0.5]) < CHI2_999[1]!, JSON.stringify(counts));
  });

  test('calls picked and started through the picker spread evenly as they pile up', () => {
    const sim = readySim([A, B, C], lr(10), { seed: 5 });
    const open: Record<string, number> = { [A]: 0, [B]: 0, [C]: 0 };
    for (let i = 0; i < 300; i++) {
      const r = rawPick(sim);
      r.onCallStarted!();
      open[r.address]!++;
    }
    // Each pick goes to the least loaded endpoint unless 10 samples all missed it (under 2% of picks).
    for (const k of [A, B, C]) assert.ok(Math.abs(open[k]! - 100) <= 3, JSON.stringify(open));
  });

  test('a call ended with any status counts down once, and never below zero', () => {
    const sim = readySim([A, B], lr(10), { seed: 2 });
    const results = resultsByAddress(sim, [A, B]);
    const a = results.get(A)!;
    const b = results.get(B)!;
    a.onCallStarted!();
    a.onCallStarted!();
    b.onCallStarted!();
    assert.ok(tally(picks(sim, 200))[B]! > 190, 'A has more open calls');
    a.onCallEnded!(unavailable('stream reset'));
    a.onCallEnded!({ code: 4, details: 'deadline exceeded' });
    assert.ok(tally(picks(sim, 200))[A]! > 190, 'A has fewer open calls now');
    a.onCallEnded!(OK_STATUS); // a stray end: A stays at zero
    b.onCallEnded!(OK_STATUS);
    const counts = tally(picks(sim, 4000));
    assert.ok(chiSquare([counts[A]!, counts[B]!], [0.5, 0.5]) < CHI2_999[1]!, JSON.stringify(counts));
  });

  test('counters survive picker rebuilds and endpoint list updates for endpoints that stay', () => {
    const sim = readySim([A, B], lr(10), { seed: 9 });
    const endA = hold(resultsByAddress(sim, [A, B]).get(A)!, 2);
    const before = sim.picker;
    sim.script(C, { connectAfterMs: 1 });
    sim.update([A, B, C], lr(10));
    sim.advance(1);
    // A child changing state also rebuilds the picker.
    sim.subchannel(B).setHealth('TRANSIENT_FAILURE');
    sim.flush();
    sim.subchannel(B).setHealth('READY');
    sim.flush();
    assert.notEqual(sim.picker, before);
    assert.ok((tally(picks(sim, 300))[A] ?? 0) < 3, 'A still has its 2 open calls');
    endA(); // calls started on an old picker end on the same counter
    assert.ok((tally(picks(sim, 300))[A] ?? 0) > 60, 'A is back');
  });

  test('a pick_first child reconnecting (a new subchannel) keeps its endpoint counter', () => {
    const sim = readySim([A, B], lr(10), { seed: 4 });
    const old = resultsByAddress(sim, [A, B]).get(A)!;
    const endA = hold(old, 1);
    sim.subchannel(A).setState('IDLE'); // connection lost; pick_first reconnects on a fresh subchannel
    sim.flush();
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    const fresh = resultsByAddress(sim, [A, B]).get(A)!;
    assert.notEqual(fresh.subchannel, old.subchannel, 'a new subchannel, so a new result');
    assert.ok((tally(picks(sim, 300))[A] ?? 0) < 3, 'the open call still counts');
    endA();
    assert.ok((tally(picks(sim, 300))[A] ?? 0) > 100, 'A is back');
  });

  test('an endpoint removed and added back starts from zero; its old calls end harmlessly', () => {
    const sim = readySim([A, B], lr(10), { seed: 6 });
    const endA = hold(resultsByAddress(sim, [A, B]).get(A)!, 5);
    sim.update([B], lr(10));
    sim.update([A, B], lr(10));
    sim.advance(1);
    const counts = tally(picks(sim, 4000));
    assert.ok(chiSquare([counts[A]!, counts[B]!], [0.5, 0.5]) < CHI2_999[1]!, JSON.stringify(counts));
    endA();
    const after = tally(picks(sim, 4000));
    assert.ok(chiSquare([after[A]!, after[B]!], [0.5, 0.5]) < CHI2_999[1]!, JSON.stringify(after));
  });

  test('each endpoint keeps its count through a reordering update; calls end on it after the update', () => {
    const D = '10.0.0.4:80';
    const sim = readySim([A, B], lr(10), { seed: 8 });
    const results = resultsByAddress(sim, [A, B]);
    const endA = hold(results.get(A)!, 3);
    const endB = hold(results.get(B)!, 1);
    sim.script(C, { connectAfterMs: 1 });
    sim.script(D, { connectAfterMs: 1 });
    // Another order and two new endpoints: the READY set starts over, in list order.
    sim.update([C, B, A, D], lr(10));
    sim.advance(1);
    assert.deepEqual(activeCalls(sim), { [C]: 0, [B]: 1, [A]: 3, [D]: 0 });
    // 10 samples over 4: the loaded two only when every sample misses both idle ones (under 0.1%).
    const counts = tally(picks(sim, 2000));
    assert.ok((counts[A] ?? 0) + (counts[B] ?? 0) < 10, JSON.stringify(counts));
    endA();
    endB();
    assert.deepEqual(activeCalls(sim), { [C]: 0, [B]: 0, [A]: 0, [D]: 0 });
  });

  test("a removed endpoint's calls ending later leave the endpoint added after it alone", () => {
    const E = '10.0.0.5:80';
    const sim = readySim([A, B], lr(10), { seed: 7 });
    const endA = hold(resultsByAddress(sim, [A, B]).get(A)!, 5);
    sim.update([B], lr(10)); // A leaves with 5 calls in flight
    sim.script(E, { connectAfterMs: 1 });
    sim.update([B, E], lr(10)); // E arrives, from zero
    sim.advance(1);
    assert.deepEqual(activeCalls(sim), { [B]: 0, [E]: 0 });
    const endE = hold(resultsByAddress(sim, [B, E]).get(E)!, 2);
    endA(); // A's calls end now: they counted on A, not on E
    assert.deepEqual(activeCalls(sim), { [B]: 0, [E]: 2 });
    endE();
    assert.deepEqual(activeCalls(sim), { [B]: 0, [E]: 0 });
  });

  test('picks do not allocate: one prebuilt result per endpoint, kept across picker rebuilds', () => {
    const sim = readySim([A, B, C], lr(3));
    const first = resultsByAddress(sim, [A, B, C]);
    for (let i = 0; i < 300; i++) {
      const r = sim.picker.pick(ARGS) as CompletePick;
      assert.equal(r, first.get((r.subchannel as SubchannelHandle).key), 'the same object every time');
    }
    sim.update([A, B, C], lr(5)); // a new picker over the same children
    const second = resultsByAddress(sim, [A, B, C]);
    for (const k of [A, B, C]) assert.equal(second.get(k), first.get(k));
  });
});

describe('least_request picker (A48 "Picker Behavior")', () => {
  test('the least loaded of the sampled children wins; on a tie, the first sampled', () => {
    const pickers: Picker[] = [0, 1, 2, 3].map((i) => ({
      pick: (): PickResult => ({ type: 'drop', status: unavailable(`child ${i}`) }),
    }));
    const store = new ActiveCounts();
    const counters = [0, 1, 2, 3].map(() => new CallCounter(store));
    const loads = [3, 1, 1, 0];
    counters.forEach((c, i) => {
      for (let j = 0; j < loads[i]!; j++) c.onCallStarted();
    });
    let queue: number[] = [];
    const random = () => {
      const u = queue.shift();
      assert.ok(u !== undefined, 'asked for more draws than choiceCount needs');
      return u;
    };
    // One draw u gives two samples over the 4 children: ⌊4u⌋, then ⌊4f⌋ of the remainder f = 4u − ⌊4u⌋.
    const draws = (samples: number[]): number[] => {
      const out: number[] = [];
      for (let i = 0; i < samples.length; i += 2) {
        const second = i + 1 < samples.length ? (samples[i + 1]! + 0.5) / 4 : 0.5;
        out.push((samples[i]! + second) / 4);
      }
      return out;
    };
    const pickWith = (choiceCount: number, samples: number[]): string => {
      queue = draws(samples);
      const r = LeastRequestPicker.of(pickers, counters, choiceCount, random).pick(ARGS);
      assert.equal(queue.length, 0, 'exactly one draw per two samples');
      return r.type === 'drop' ? r.status.details : r.type;
    };
    // choiceCount = number of children and every child sampled: the least loaded, whatever the order.
    assert.equal(pickWith(4, [0, 1, 2, 3]), 'child 3');
    assert.equal(pickWith(4, [3, 2, 1, 0]), 'child 3');
    // Sampling is with replacement (A48 "Allow picking same candidate multiple times"): a child never
    // sampled cannot win, however idle.
    assert.equal(pickWith(4, [0, 0, 2, 0]), 'child 2');
    assert.equal(pickWith(2, [0, 0]), 'child 0');
    // Equal loads: the first sampled.
    assert.equal(pickWith(2, [2, 1]), 'child 2');
    assert.equal(pickWith(3, [1, 2, 0]), 'child 1');
    // An odd choiceCount: its last sample is a draw of its own.
    assert.equal(pickWith(3, [0, 0, 3]), 'child 3');
    // The largest random() can return still lands on a child.
    queue = [];
    const edge = LeastRequestPicker.of(pickers, counters, 2, () => 1 - 2 ** -53).pick(ARGS);
    assert.deepEqual(edge, { type: 'drop', status: unavailable('child 3') });
    assert.throws(() => LeastRequestPicker.of([], [], 2, Math.random), RangeError);
    // The counts a pick compares live in one typed array: counters of another store cannot join.
    assert.throws(
      () => LeastRequestPicker.of(pickers.slice(0, 2), [counters[0]!, new CallCounter()], 2, Math.random),
      RangeError,
    );
  });

  test('a child without a constant result is asked per pick, and what it completes is counted', () => {
    const sub = { key: 'x' } as unknown as SubchannelHandle;
    let childEnded = 0;
    const child: Picker = {
      pick: () => ({ type: 'complete', subchannel: sub, onCallEnded: () => childEnded++ }),
    };
    const counter = new CallCounter();
    const picker = LeastRequestPicker.of([child], [counter], 2, () => 0);
    const r = picker.pick(ARGS) as CompletePick;
    r.onCallStarted!();
    assert.equal(counter.active, 1);
    r.onCallEnded!(OK_STATUS);
    assert.equal(counter.active, 0);
    assert.equal(childEnded, 1, "the child's own hook still runs");
  });

  for (const [n, configured, effective] of [
    [10, 2, 2],
    [10, 10, 10],
    [10, 11, 10],
    [10, 1000, 10],
    [4, 4, 4],
  ] as const) {
    test(`${n} endpoints, choiceCount ${configured}: P(k-th least loaded) = ((n-k)/n)^c - ((n-k-1)/n)^c with c = ${effective}`, () => {
      const keys = Array.from({ length: n }, (_, i) => `10.0.1.${i + 1}:80`);
      const sim = readySim(keys, lr(configured), { seed: 11 });
      const results = resultsByAddress(sim, keys);
      // Endpoint k holds k open calls.
      keys.forEach((k, i) => {
        hold(results.get(k)!, i);
      });
      const N = 20_000;
      const perEndpoint: number[] = keys.map(() => 0);
      for (const a of picks(sim, N)) perEndpoint[keys.indexOf(a)]!++;
      /** Chi-square of the observed picks against choiceCount c, and its 0.999 critical value. */
      const fit = (c: number): [number, number] => {
        const { p, merge } = expectedShares(n, c, N);
        const counts: number[] = p.map(() => 0);
        perEndpoint.forEach((x, k) => {
          counts[merge(k)]! += x;
        });
        return [chiSquare(counts, p), CHI2_999[p.length - 1]!];
      };
      const [x2, critical] = fit(effective);
      assert.ok(x2 < critical, `chi-square ${x2.toFixed(2)} for ${perEndpoint}`);
      // The test can tell the effective count from its neighbours (so, the clamp from no clamp).
      for (const other of [effective - 1, effective + 1]) {
        const [y2, otherCritical] = fit(other);
        assert.ok(y2 > otherCritical, `choiceCount ${other} would fit too (${y2.toFixed(2)})`);
      }
    });
  }

  test('two samples from one draw (A48 "Picker Behavior"): at 1,000 children the least loaded of two follows ((n-k)/n)^2 - ((n-k-1)/n)^2, and with equal loads the first sampled is uniform', () => {
    const n = 1000;
    const pickers: Picker[] = Array.from({ length: n }, (_, i) => ({
      pick: (): PickResult => ({ type: 'drop', status: unavailable(String(i)) }),
    }));
    const N = 100_000;
    // Children by tenths: child i is in tenth ⌊i / 100⌋.
    const tenths = (picker: LeastRequestPicker): number[] => {
      const counts = new Array<number>(10).fill(0);
      for (let j = 0; j < N; j++) {
        const r = picker.pick(ARGS);
        assert.equal(r.type, 'drop');
        counts[Math.floor(Number(r.type === 'drop' ? r.status.details : -1) / 100)]!++;
      }
      return counts;
    };
    // P(min of two in tenth d) = ((10-d)/10)^2 - ((9-d)/10)^2: 0.19, 0.17, …, 0.01.
    const minShares = Array.from({ length: 10 }, (_, d) => ((10 - d) / 10) ** 2 - ((9 - d) / 10) ** 2);
    const uniform = new Array<number>(10).fill(0.1);
    for (const [name, random] of [
      ['Math.random', Math.random],
      ["the simulator's 32-bit random", seededRandom(5)],
    ] as const) {
      const idle = new ActiveCounts(n);
      const idleCounters = pickers.map(() => new CallCounter(idle));
      const first = tenths(LeastRequestPicker.of(pickers, idleCounters, 2, random));
      assert.ok(chiSquare(first, uniform) < CHI2_999[9]!, `${name}: first sampled ${first}`);
      const store = new ActiveCounts(n);
      const counters = pickers.map(() => new CallCounter(store));
      // Child i holds i calls: the pick is the smaller of the two samples.
      counters.forEach((c, i) => {
        store.counts[c.slot] = i;
      });
      const least = tenths(LeastRequestPicker.of(pickers, counters, 2, random));
      assert.ok(chiSquare(least, minShares) < CHI2_999[9]!, `${name}: least loaded ${least}`);
      // The test tells two samples from one (uniform) and from three.
      assert.ok(chiSquare(least, uniform) > CHI2_999[9]!);
      const threeShares = Array.from({ length: 10 }, (_, d) => ((10 - d) / 10) ** 3 - ((9 - d) / 10) ** 3);
      assert.ok(chiSquare(least, threeShares) > CHI2_999[9]!);
    }
  });

  test('a choiceCount update takes effect on the same children', () => {
    const keys = Array.from({ length: 10 }, (_, i) => `10.0.1.${i + 1}:80`);
    const sim = readySim(keys, lr(2), { seed: 13 });
    const results = resultsByAddress(sim, keys);
    keys.forEach((k, i) => {
      hold(results.get(k)!, i);
    });
    const share = () => (tally(picks(sim, 5000))[keys[0]!] ?? 0) / 5000;
    // P(least loaded) = 1 - 0.9^c: 0.19 for c = 2, 0.65 for c = 10.
    const before = share();
    assert.ok(Math.abs(before - 0.19) < 0.03, `share ${before} with choiceCount 2`);
    sim.update(keys, lr(10));
    const after = share();
    assert.ok(Math.abs(after - 0.651) < 0.03, `share ${after} with choiceCount 10`);
  });
});
