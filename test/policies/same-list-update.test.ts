// A resolver re-delivering the list it delivered last (DNS re-resolution, an unchanged xDS resource) changes
// nothing: no new picker, no update below the first policy that sees it is the same, and the picker's
// behaviour carries on. Anything that differs, down to one attribute or the order, is applied in full.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { unavailable } from '../../src/core/index.js';
import { sameConfig } from '../../src/policies/shared/last-update.js';
import { type PlainEndpoint, Simulation } from '../../src/sim/index.js';
import { connectAll, picks } from '../support/sim-picks.js';
import { chiSquare } from '../support/stats.js';
import { puppet, puppetWorld } from './puppet-policy.js';

const RR = [{ round_robin: {} }];
const A = '10.0.0.1:80';
const B = '10.0.0.2:80';
const C = '10.0.0.3:80';

describe('a petiole given the same list again (A61 "Endpoint list updates")', () => {
  test('round_robin: no new picker, no new subchannel, and the rotation carries on where it was', () => {
    const sim = connectAll(new Simulation({ seed: 3 }), [A, B, C], RR);
    const picker = sim.picker;
    const history = sim.history.length;
    const created = sim.subchannelsCreated;
    const before = picks(sim, 2);
    // Fresh endpoint objects and a config parsed again, as a channel re-resolving delivers them.
    assert.equal(sim.update([A, B, C], [{ round_robin: {} }]), true);
    assert.equal(sim.picker, picker, 'the same picker');
    assert.equal(sim.history.length, history, 'nothing reported');
    assert.equal(sim.subchannelsCreated, created);
    const after = picks(sim, 4);
    const order = [A, B, C];
    const next = (address: string, k: number) => order[(order.indexOf(address) + k) % 3];
    assert.deepEqual(after, [
      next(before[1]!, 1),
      next(before[1]!, 2),
      next(before[1]!, 3),
      next(before[1]!, 4),
    ]);
  });

  test('round_robin: another order, another attribute, or one endpoint more is a new list: a new picker', () => {
    const sim = connectAll(new Simulation(), [A, B, C], RR);
    let picker = sim.picker;
    sim.update([C, B, A], RR);
    assert.notEqual(sim.picker, picker, 'another order');
    picker = sim.picker;
    sim.update([C, B, { addresses: [A], attributes: { weight: 5 } }], RR);
    assert.notEqual(sim.picker, picker, 'another attribute on one endpoint');
    picker = sim.picker;
    sim.update([C, B, { addresses: [A], attributes: { weight: 5 } }], RR);
    assert.equal(sim.picker, picker, 'that list again');
    sim.script('10.0.0.4:80', { connectAfterMs: 1 });
    sim.update([C, B, { addresses: [A], attributes: { weight: 5 } }, '10.0.0.4:80'], RR);
    sim.advance(1);
    assert.notEqual(sim.picker, picker, 'one endpoint more');
    assert.deepEqual(new Set(picks(sim, 8)), new Set([A, B, C, '10.0.0.4:80']));
  });

  test('least_request: another choiceCount is a new config, so a new picker (A48 "LB Policy Config")', () => {
    const lr = (choiceCount: number) => [{ least_request_experimental: { choiceCount } }];
    const sim = connectAll(new Simulation(), [A, B, C], lr(2));
    const picker = sim.picker;
    sim.update([A, B, C], lr(2));
    assert.equal(sim.picker, picker, 'the same list and an equal config');
    sim.update([A, B, C], lr(3));
    assert.notEqual(sim.picker, picker, 'choiceCount 3');
  });

  test('an empty list is applied every time it comes: TF and a re-resolution request each time', () => {
    const sim = connectAll(new Simulation(), [A, B], RR);
    assert.equal(sim.update([], RR), false);
    assert.equal(sim.reresolutionRequests, 1);
    assert.equal(sim.update([], RR), false);
    assert.equal(sim.reresolutionRequests, 2);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    // The list it had before the empty one is a new list now: its endpoints connect again.
    sim.script(A, { connectAfterMs: 1 });
    sim.script(B, { connectAfterMs: 1 });
    sim.update([A, B], RR);
    sim.advance(1);
    assert.equal(sim.state, 'READY');
  });
});

describe('priority given the same list again (A56 "Configuration Updates")', () => {
  const config = (ignore = false) => [
    {
      priority_experimental: {
        children: { p0: { config: puppet('p0'), ignore_reresolution_requests: ignore } },
        priorities: ['p0'],
      },
    },
  ];
  const list = (last = 'x'): PlainEndpoint[] => [
    { addresses: [A], attributes: { path: ['p0', 'x'] } },
    { addresses: [B], attributes: { path: ['p0', last] } },
  ];

  test('the child gets no second update and nothing is reported; another path or config reaches it', () => {
    const w = puppetWorld();
    w.sim.update(list(), config());
    w.get('p0').report('READY');
    const history = w.sim.history.length;
    assert.equal(w.sim.update(list(), config()), true);
    assert.equal(w.get('p0').updates.length, 1, 'the same list: no update for the child');
    assert.equal(w.sim.history.length, history);
    assert.equal(w.current(), 'p0');
    w.sim.update(list('y'), config());
    assert.equal(w.get('p0').updates.length, 2, 'one path element changed');
    assert.deepEqual(w.get('p0').endpoints, ['10.0.0.1:80 ["x"]', '10.0.0.2:80 ["y"]']);
    w.sim.update(list('y'), config(true));
    assert.equal(w.get('p0').updates.length, 3, 'another child config');
  });

  test('after a resolver error the same list is applied again (the error went down to the child)', () => {
    const w = puppetWorld();
    w.sim.update(list(), config());
    w.get('p0').report('READY');
    w.sim.updateError(unavailable('DNS down'));
    assert.equal(w.get('p0').updates.at(-1)!.endpoints.ok, false);
    w.sim.update(list(), config());
    assert.equal(w.get('p0').updates.at(-1)!.endpoints.ok, true, 'the list, not the error, is the latest');
  });
});

describe('xds_wrr_locality given the same list again (A52 "xDS WRR Locality Load Balancer")', () => {
  const weights = [1, 2, 3, 4];
  const addresses = weights.flatMap((_, l) => [`10.0.${l}.1:80`, `10.0.${l}.2:80`]);
  const wrr = [{ xds_wrr_locality_experimental: { childPolicy: RR } }];
  const list = (w: readonly number[]): PlainEndpoint[] =>
    addresses.map((a, i) => ({
      addresses: [a],
      attributes: { locality: `l${i >> 1}`, localityWeight: w[i >> 1]! },
    }));
  function perLocality(sim: Simulation, n: number): number[] {
    const counts = weights.map(() => 0);
    for (const address of picks(sim, n)) counts[Number(address.split('.')[2])]!++;
    return counts;
  }

  test('no new picker, and calls still split by locality weight; a changed weight is applied (chi-square, seeded RNG)', () => {
    const sim = new Simulation({ seed: 29 });
    for (const a of addresses) sim.script(a, { connectAfterMs: 1 });
    sim.update(list(weights), wrr);
    sim.advance(1);
    const picker = sim.picker;
    const history = sim.history.length;
    assert.equal(sim.update(list(weights), wrr), true);
    assert.equal(sim.picker, picker, 'fresh attributes with equal localities and weights: the same picker');
    assert.equal(sim.history.length, history);
    const n = 20_000;
    // 3 degrees of freedom: 16.27 is the 0.999 quantile.
    const counts = perLocality(sim, n);
    assert.ok(chiSquare(counts, weights) < 16.27, `${counts} against ${weights}`);
    // One locality weight changed: the whole list is applied, and the shares follow the new weights.
    const changed = [4, 2, 3, 1];
    sim.update(list(changed), wrr);
    assert.notEqual(sim.picker, picker);
    const after = perLocality(sim, n);
    assert.ok(chiSquare(after, changed) < 16.27, `${after} against ${changed}`);
    assert.ok(chiSquare(after, weights) > 1000, 'the old weights no longer hold');
  });

  test('a list with no usable locality weight is applied every time: TF and re-resolution each time', () => {
    const sim = new Simulation();
    const none = addresses.map((a) => ({ addresses: [a], attributes: { locality: 'l0' } }));
    assert.equal(sim.update(none, wrr), false);
    const requests = sim.reresolutionRequests;
    assert.equal(sim.update(none, wrr), false);
    assert.ok(sim.reresolutionRequests > requests);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
  });
});

describe('sameConfig: configs parsed again compare by value', () => {
  test('plain objects, arrays and Maps (in order) by value; any other object by identity', () => {
    assert.ok(sameConfig({ a: [1, { b: 'x' }], c: undefined }, { a: [1, { b: 'x' }], c: undefined }));
    assert.equal(sameConfig({ a: 1 }, { a: 1, c: undefined }), false, 'one key more');
    assert.equal(sameConfig({ a: [1, 2] }, { a: [2, 1] }), false);
    const map = (entries: [string, unknown][]) => new Map(entries);
    assert.ok(sameConfig(map([['x', { w: 1 }]]), map([['x', { w: 1 }]])));
    assert.equal(
      sameConfig(
        map([
          ['x', 1],
          ['y', 2],
        ]),
        map([
          ['y', 2],
          ['x', 1],
        ]),
      ),
      false,
      'another order',
    );
    class Factory {}
    const f = new Factory();
    assert.ok(sameConfig({ factory: f }, { factory: f }));
    assert.equal(sameConfig({ factory: new Factory() }, { factory: new Factory() }), false);
    // Deeper than any parsed config: called different (the update is then applied in full).
    const deep = (d: number): unknown => (d === 0 ? 1 : { d: deep(d - 1) });
    assert.ok(sameConfig(deep(31), deep(31)));
    assert.equal(sameConfig(deep(33), deep(33)), false);
  });
});
