import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { ConfigError, Registry } from '../../src/core/index.js';
import {
  DEFAULT_PRIORITY_CHILD_RETENTION_MS,
  DEFAULT_PRIORITY_FAILOVER_TIMEOUT_MS,
  PRIORITY_CHILD_POLICY_CACHE_ARG,
  PRIORITY_CHILD_POLICY_CACHE_ENV,
  PRIORITY_CHILD_RETENTION_ARG,
  PRIORITY_FAILOVER_TIMEOUT_ARG,
  type PriorityConfig,
  registerAllPolicies,
} from '../../src/policies/index.js';
import { Simulation } from '../../src/sim/index.js';
import { type PuppetConfig, puppet, puppetWorld } from './puppet-policy.js';

type ChildSpec = unknown[] | { config: unknown; [field: string]: unknown };

function priorityConfig(children: Record<string, ChildSpec>, priorities: string[]): unknown[] {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(children))
    out[name] = Array.isArray(spec) ? { config: spec } : spec;
  return [{ priority_experimental: { children: out, priorities } }];
}

/** A priority config whose children are puppets named after themselves, in the given priority order. */
function puppets(names: string[], extra: Record<string, Partial<PuppetConfig>> = {}): unknown[] {
  return priorityConfig(Object.fromEntries(names.map((n) => [n, puppet(n, extra[n])])), names);
}

const MINUTE = 60_000;
const RETENTION = 15 * MINUTE;

function parse(json: unknown): PriorityConfig {
  return registerAllPolicies(new Registry()).parseLbConfigList(json).config as PriorityConfig;
}

function rejects(json: unknown, path: string, message: RegExp): void {
  const sim = new Simulation();
  assert.equal(sim.update([], json), false);
  const e = sim.lastConfigError;
  assert.ok(e instanceof ConfigError, 'expected a ConfigError');
  assert.equal(e.path, path);
  assert.match(e.problem, message);
}

describe('priority config (A56 "LB Policy Configuration")', () => {
  test('children, config lists and both spellings of ignore_reresolution_requests; default false', () => {
    const config = parse(
      priorityConfig(
        {
          a: { config: [{ round_robin: {} }], ignoreReresolutionRequests: true },
          b: { config: [{ made_up: {} }, { pick_first: {} }], ignore_reresolution_requests: true },
          c: { config: [{ round_robin: {} }] },
        },
        ['a', 'b', 'c'],
      ),
    );
    assert.deepEqual(config.priorities, ['a', 'b', 'c']);
    assert.equal(config.children.get('a')!.ignoreReresolutionRequests, true);
    assert.equal(config.children.get('b')!.ignoreReresolutionRequests, true);
    assert.equal(config.children.get('c')!.ignoreReresolutionRequests, false);
    assert.equal(config.children.get('b')!.config.factory.name, 'pick_first', 'first parseable entry wins');
  });

  test('a priority naming no child is rejected at its path', () => {
    rejects(
      priorityConfig({ a: [{ round_robin: {} }] }, ['a', 'nope']),
      '$[0].priority_experimental.priorities[1]',
      /no child named "nope"/,
    );
  });

  test('a duplicate priority is rejected at its path, naming the first', () => {
    rejects(
      priorityConfig({ a: [{ round_robin: {} }], b: [{ round_robin: {} }] }, ['a', 'b', 'a']),
      '$[0].priority_experimental.priorities[2]',
      /"a" is listed twice \(first at \$\[0\]\.priority_experimental\.priorities\[0\]\)/,
    );
  });

  test('a nested child config is validated at parse time, with its nested JSON path', () => {
    rejects(
      priorityConfig({ a: [{ pick_first: { shuffleAddressList: 'yes' } }] }, ['a']),
      '$[0].priority_experimental.children.a.config[0].pick_first.shuffleAddressList',
      /expected a boolean/,
    );
    // Two levels down: priority -> weighted_target -> pick_first.
    const wt = [
      {
        weighted_target_experimental: {
          targets: { l0: { weight: 1, childPolicy: [{ pick_first: { shuffleAddressList: 3 } }] } },
        },
      },
    ];
    rejects(
      priorityConfig({ 'child-0': wt }, ['child-0']),
      '$[0].priority_experimental.children["child-0"].config[0].weighted_target_experimental.targets.l0.childPolicy[0].pick_first.shuffleAddressList',
      /expected a boolean/,
    );
    rejects(
      priorityConfig({ a: [{ made_up: {} }] }, ['a']),
      '$[0].priority_experimental.children.a.config',
      /no registered LB policy among \[made_up\]/,
    );
  });

  test('missing or mistyped fields are rejected at their paths', () => {
    rejects(
      [{ priority_experimental: { priorities: [] } }],
      '$[0].priority_experimental.children',
      /missing/,
    );
    rejects(
      [{ priority_experimental: { children: {} } }],
      '$[0].priority_experimental.priorities',
      /missing/,
    );
    rejects(
      [{ priority_experimental: { children: {}, priorities: 'a' } }],
      '$[0].priority_experimental.priorities',
      /expected an array/,
    );
    rejects(
      [{ priority_experimental: { children: { a: {} }, priorities: ['a'] } }],
      '$[0].priority_experimental.children.a.config',
      /missing/,
    );
    rejects(
      priorityConfig({ a: { config: [{ round_robin: {} }], ignoreReresolutionRequests: 'no' } }, ['a']),
      '$[0].priority_experimental.children.a.ignoreReresolutionRequests',
      /expected a boolean/,
    );
    rejects(
      priorityConfig(
        {
          a: {
            config: [{ round_robin: {} }],
            ignoreReresolutionRequests: true,
            ignore_reresolution_requests: true,
          },
        },
        ['a'],
      ),
      '$[0].priority_experimental.children.a.ignoreReresolutionRequests',
      /given twice/,
    );
  });

  test('a rejected config leaves the running tree serving', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0']));
    w.get('p0').report('READY');
    const picker = w.sim.picker;
    assert.equal(w.sim.update([], priorityConfig({ p0: puppet('p0') }, ['p0', 'p0'])), false);
    assert.equal(w.sim.picker, picker);
    assert.equal(w.get('p0').destroyed, false);
  });

  test('children not listed in priorities are allowed and never created', () => {
    const w = puppetWorld();
    const config = priorityConfig({ p0: puppet('p0'), spare: puppet('spare') }, ['p0']);
    assert.equal(w.sim.update([], config), true);
    w.get('p0').report('TRANSIENT_FAILURE');
    w.sim.advance(RETENTION);
    assert.deepEqual(
      w.all.map((p) => p.name),
      ['p0'],
    );
  });

  test('an empty priority list is valid and reports TRANSIENT_FAILURE "priority policy has empty priority list"', () => {
    const sim = new Simulation();
    assert.equal(
      sim.update(['10.0.0.1:80'], [{ priority_experimental: { children: {}, priorities: [] } }]),
      false,
    );
    assert.equal(sim.lastConfigError, undefined);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    assert.deepEqual(sim.status, { code: 14, details: 'priority policy has empty priority list' });
    const pick = sim.pick();
    assert.equal(pick.type, 'fail');
  });
});

describe('priority children are created lazily (A56 "Child Lifetime Management")', () => {
  test('only the first priority is created; a lower one only when the choice reaches it', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1', 'p2']));
    assert.deepEqual(
      w.all.map((p) => p.name),
      ['p0'],
    );
    w.get('p0').report('TRANSIENT_FAILURE');
    assert.deepEqual(
      w.all.map((p) => p.name),
      ['p0', 'p1'],
    );
    w.get('p1').report('READY');
    w.sim.advance(RETENTION * 2);
    assert.deepEqual(
      w.all.map((p) => p.name),
      ['p0', 'p1'],
      'p2 is never created while p1 is READY',
    );
    assert.equal(w.current(), 'p1');
  });

  test('a child that reports READY from inside its first update is used at once', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1'], { p0: { reportOnUpdate: 'READY' } }));
    assert.equal(w.current(), 'p0');
    assert.deepEqual(
      w.sim.history.map((h) => h.state),
      ['READY'],
    );
    assert.equal(w.all.length, 1);
  });

  test('each child gets its share of the endpoints with the first path element stripped (A56 "Hierarchical Addresses")', () => {
    const w = puppetWorld();
    const endpoints = [
      { addresses: ['10.0.0.1:80'], attributes: { path: ['p0', 'localityA'] } },
      { addresses: ['10.0.0.2:80'], attributes: { path: ['p1', 'localityC'] } },
      { addresses: ['10.0.0.3:80'], attributes: { path: ['p0'] } },
      { addresses: ['10.0.0.4:80'] },
      { addresses: ['10.0.0.5:80'], attributes: { path: ['elsewhere', 'x'] } },
    ];
    w.sim.update(endpoints, puppets(['p0', 'p1']));
    assert.deepEqual(w.get('p0').endpoints, ['10.0.0.1:80 ["localityA"]', '10.0.0.3:80']);
    w.get('p0').report('TRANSIENT_FAILURE');
    assert.deepEqual(w.get('p1').endpoints, ['10.0.0.2:80 ["localityC"]'], 'a lazily created child too');
    // A child no endpoint names gets an empty list.
    w.sim.update(endpoints.slice(0, 1), puppets(['p0', 'p1']));
    assert.deepEqual(w.get('p1').endpoints, []);
    assert.equal(w.get('p1').updates.at(-1)!.endpoints.ok, true);
  });
});

describe('priority failover timer (A56 "Child Connectivity State Tracking")', () => {
  test('a child moving to another state is traced; a READY child re-reporting READY goes up untraced', () => {
    const w = puppetWorld({ trace: true });
    w.sim.update([], puppets(['p0']));
    w.get('p0').report('READY');
    w.get('p0').report('READY');
    w.get('p0').report('TRANSIENT_FAILURE');
    const reported = w.sim.traces.filter((t) => /priority: child p0 reported/.test(t));
    assert.deepEqual(
      reported.map((t) => t.replace(/^.*reported /, '')),
      ['READY', 'TRANSIENT_FAILURE'],
    );
  });

  test('fires at exactly 10,000 ms after creation: 9,999 ms is still waiting on the child', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']));
    w.get('p0').report('CONNECTING');
    assert.equal(DEFAULT_PRIORITY_FAILOVER_TIMEOUT_MS, 10_000);
    w.sim.advance(9_999);
    assert.equal(w.all.length, 1);
    assert.equal(w.current(), 'p0');
    w.sim.advance(1);
    assert.deepEqual(
      w.all.map((p) => p.name),
      ['p0', 'p1'],
    );
    w.get('p1').report('CONNECTING');
    assert.equal(w.current(), 'p1', 'p1 is CONNECTING with its own timer running');
  });

  test(`is settable per channel with "${PRIORITY_FAILOVER_TIMEOUT_ARG}"`, () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']), { [PRIORITY_FAILOVER_TIMEOUT_ARG]: 250 });
    w.sim.advance(249);
    assert.equal(w.all.length, 1);
    w.sim.advance(1);
    assert.equal(w.all.length, 2);
  });

  test('is cancelled by READY, IDLE and TRANSIENT_FAILURE', () => {
    for (const state of ['READY', 'IDLE'] as const) {
      const w = puppetWorld();
      w.sim.update([], puppets(['p0', 'p1']));
      w.sim.advance(5_000);
      w.get('p0').report(state);
      w.sim.advance(MINUTE);
      assert.equal(w.all.length, 1, `${state} cancels the timer`);
      assert.equal(w.current(), 'p0');
      assert.equal(w.sim.state, state);
    }
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']));
    w.sim.advance(5_000);
    w.get('p0').report('TRANSIENT_FAILURE');
    assert.equal(w.all.length, 2, 'TRANSIENT_FAILURE fails over at once');
  });

  test('restarts when the child moves into CONNECTING after READY (exact boundary)', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']));
    w.get('p0').report('READY');
    w.sim.advance(20_000);
    w.get('p0').report('CONNECTING');
    assert.equal(w.current(), 'p0', 'the restarted timer makes the choice wait on p0');
    w.sim.advance(9_999);
    assert.equal(w.all.length, 1);
    w.sim.advance(1);
    assert.equal(w.all.length, 2);
  });

  test('restarts when the child moves into CONNECTING after IDLE', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']));
    w.get('p0').report('IDLE');
    w.sim.advance(20_000);
    w.get('p0').report('CONNECTING');
    w.sim.advance(9_999);
    assert.equal(w.all.length, 1);
    assert.equal(w.current(), 'p0');
    w.sim.advance(1);
    assert.equal(w.all.length, 2);
  });

  test('does not restart on a move into CONNECTING after TRANSIENT_FAILURE', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']));
    w.get('p0').report('READY');
    w.get('p0').report('TRANSIENT_FAILURE');
    w.get('p1').report('CONNECTING');
    assert.equal(w.current(), 'p1');
    w.get('p0').report('CONNECTING');
    // Had p0's timer restarted, the choice would wait on p0 again.
    assert.equal(w.current(), 'p1');
    // Once p1's own timer runs out, the fall-through picks the first CONNECTING child: p0.
    w.sim.advance(9_999);
    assert.equal(w.current(), 'p1');
    w.sim.advance(1);
    assert.equal(w.current(), 'p0');
  });

  test('a repeated CONNECTING does not restart it (upstream A56 refinement)', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']));
    w.get('p0').report('READY');
    w.sim.advance(1_000);
    w.get('p0').report('CONNECTING'); // timer runs until t=11,000
    w.sim.advance(5_000);
    w.get('p0').report('CONNECTING'); // a duplicate: no restart
    w.sim.advance(4_999);
    assert.equal(w.all.length, 1);
    w.sim.advance(1);
    assert.equal(w.all.length, 2, 'failed over 10 s after the move into CONNECTING, not after the repeat');
    w.get('p1').report('CONNECTING');
    assert.equal(w.current(), 'p1');
    // Another duplicate after the timer fired must not start a new timer (which would pull the choice back).
    w.get('p0').report('CONNECTING');
    assert.equal(w.current(), 'p1');
  });

  test("when it fires the choice runs again and the child's state stays CONNECTING (upstream A56 refinement)", () => {
    // The seed text treated the child as TRANSIENT_FAILURE, which would fall through to the last priority
    // (p1, failing). Upstream, p0 is still CONNECTING, so the fall-through picks p0.
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1'], { p1: { reportOnUpdate: 'TRANSIENT_FAILURE' } }));
    w.get('p0').report('CONNECTING');
    w.sim.advance(10_000);
    assert.equal(w.all.length, 2);
    assert.equal(w.get('p1').state, 'TRANSIENT_FAILURE');
    assert.equal(w.current(), 'p0');
    assert.equal(w.sim.state, 'CONNECTING');
  });
});

describe('priority config updates (A56 "Configuration Updates")', () => {
  test('a child reporting from inside its update does not trigger a choice until every child is updated', () => {
    const w = puppetWorld();
    const fail = { reportOnUpdate: 'TRANSIENT_FAILURE' } as const;
    const ready = { reportOnUpdate: 'READY' } as const;
    // a and b fail, c is used.
    w.sim.update([], puppets(['a', 'b', 'c'], { a: fail, b: fail, c: ready }));
    assert.equal(w.current(), 'c');
    // Now b comes first and a and b both turn READY. Children are updated in creation order: a, b, c. A
    // choice made when a reports would see the half-updated tree (b still failing) and pass a's picker up.
    const before = w.sim.history.length;
    w.sim.update(
      [],
      priorityConfig({ a: puppet('a', ready), b: puppet('b', ready), c: puppet('c', ready) }, [
        'b',
        'a',
        'c',
      ]),
    );
    assert.equal(
      w.get('b').historyAtUpdate.at(-1),
      before,
      'nothing was reported while b waited for its update',
    );
    assert.equal(w.get('c').historyAtUpdate.at(-1), before);
    assert.equal(w.current(), 'b');
    assert.equal(w.sim.history.length, before + 1, 'one report, after the update');
  });

  test('existing children get the new config and endpoints, deactivated lower priorities included', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']));
    w.get('p0').report('TRANSIENT_FAILURE');
    w.get('p1').report('READY');
    w.get('p0').report('READY'); // p1 is now deactivated
    const p1Updates = w.get('p1').updates.length;
    w.sim.update([{ addresses: ['10.0.0.9:80'], attributes: { path: ['p1'] } }], puppets(['p0', 'p1']));
    assert.equal(w.get('p1').updates.length, p1Updates + 1);
    assert.deepEqual(w.get('p1').endpoints, ['10.0.0.9:80']);
    assert.equal(w.all.length, 2, 'updated in place, not recreated');
  });

  test('a child whose config names another policy is rebuilt under the same name', () => {
    const w = puppetWorld();
    w.sim.script('10.0.0.1:80', { connectAfterMs: 1 });
    w.sim.update([{ addresses: ['10.0.0.1:80'], attributes: { path: ['p0'] } }], puppets(['p0']));
    w.get('p0').report('TRANSIENT_FAILURE');
    w.sim.update(
      [{ addresses: ['10.0.0.1:80'], attributes: { path: ['p0'] } }],
      priorityConfig({ p0: [{ round_robin: {} }] }, ['p0']),
    );
    assert.equal(w.get('p0').destroyed, true);
    assert.equal(w.sim.state, 'CONNECTING', 'the new policy starts out connecting');
    w.sim.advance(1);
    assert.equal(w.sim.state, 'READY');
    assert.equal((w.sim.pick() as { address: string }).address, '10.0.0.1:80');
  });

  test('a resolver error keeps existing children on their endpoints; a new child gets its share of the last list', () => {
    const w = puppetWorld();
    const endpoints = [
      { addresses: ['10.0.0.1:80'], attributes: { path: ['p0'] } },
      { addresses: ['10.0.0.2:80'], attributes: { path: ['p1'] } },
    ];
    w.sim.update(endpoints, puppets(['p0', 'p1']));
    assert.equal(w.sim.updateError({ code: 14, details: 'DNS down' }), false);
    assert.equal(w.get('p0').updates.at(-1)!.endpoints.ok, false, 'the error is passed on to p0');
    w.get('p0').report('TRANSIENT_FAILURE');
    assert.deepEqual(w.get('p1').endpoints, ['10.0.0.2:80']);
  });
});

describe('priority choice (A56 "Algorithm for Choosing a Priority")', () => {
  test('with nothing READY or IDLE and no timer pending, the first CONNECTING child is used', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1', 'p2']));
    w.get('p0').report('TRANSIENT_FAILURE');
    w.get('p1').report('CONNECTING');
    w.sim.advance(10_000); // p1's timer runs out; p2 is created
    w.get('p2').report('TRANSIENT_FAILURE');
    assert.equal(w.current(), 'p1');
    assert.equal(w.sim.state, 'CONNECTING');
  });

  test('with no child CONNECTING either, the last priority is used', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1', 'p2']));
    w.get('p0').report('TRANSIENT_FAILURE', 'p0 down');
    w.get('p1').report('TRANSIENT_FAILURE', 'p1 down');
    w.get('p2').report('TRANSIENT_FAILURE', 'p2 down');
    assert.equal(w.current(), 'p2');
    assert.deepEqual(w.sim.status, { code: 14, details: 'p2 down' });
    // p0 recovering to CONNECTING (no timer: it failed last) is preferred over the failing last priority.
    w.get('p0').report('CONNECTING');
    assert.equal(w.current(), 'p0');
  });

  test('IDLE counts as usable: it is chosen and lower priorities are deactivated', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']));
    w.get('p0').report('TRANSIENT_FAILURE');
    w.get('p1').report('READY');
    w.get('p0').report('IDLE');
    assert.equal(w.current(), 'p0');
    assert.equal(w.sim.state, 'IDLE');
    w.sim.advance(RETENTION);
    assert.equal(w.get('p1').destroyed, true);
  });

  test('lower priorities are deactivated only when a READY or IDLE child is chosen', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']));
    w.get('p0').report('TRANSIENT_FAILURE');
    w.get('p1').report('READY');
    // p0 comes back CONNECTING: no timer (it failed last), so p1 stays in use and is not deactivated.
    w.get('p0').report('CONNECTING');
    assert.equal(w.current(), 'p1');
    w.sim.advance(RETENTION * 2);
    assert.equal(w.get('p1').destroyed, false);
  });

  test('a child chosen because its failover timer is pending does not deactivate lower priorities', () => {
    const w = puppetWorld();
    const args = { [PRIORITY_CHILD_RETENTION_ARG]: 1_000 }; // shorter than the failover timeout
    w.sim.update([], puppets(['p1']), args);
    w.get('p1').report('READY');
    // A new higher priority appears: created, CONNECTING, its timer pending, so it is chosen.
    w.sim.update([], puppets(['p0', 'p1']), args);
    w.get('p0').report('CONNECTING');
    assert.equal(w.current(), 'p0');
    w.sim.advance(5_000);
    assert.equal(w.get('p1').destroyed, false, 'p1 was not deactivated');
    w.get('p0').report('READY');
    w.sim.advance(1_000);
    assert.equal(w.get('p1').destroyed, true, 'a READY p0 deactivates it');
  });

  test('is idempotent: the same state chooses the same child and reports nothing new', () => {
    const w = puppetWorld();
    const config = puppets(['p0', 'p1', 'p2']);
    w.sim.update([], config);
    w.get('p0').report('TRANSIENT_FAILURE');
    w.get('p1').report('READY');
    const reports = w.sim.history.length;
    w.sim.update([], config);
    w.sim.update([], config);
    w.get('p0').report('TRANSIENT_FAILURE'); // a repeat
    assert.equal(w.sim.history.length, reports);
    assert.equal(w.current(), 'p1');
  });

  test("the chosen child's state, status and picker are what the policy reports", () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0']));
    w.get('p0').report('TRANSIENT_FAILURE', 'connect ECONNREFUSED');
    assert.equal(w.sim.state, 'TRANSIENT_FAILURE');
    assert.deepEqual(w.sim.status, { code: 14, details: 'connect ECONNREFUSED' });
    assert.equal(w.sim.picker, w.get('p0').picker);
  });
});

describe('priority deactivation and retention (A56 "Child Lifetime Management")', () => {
  test('a lower priority left behind is destroyed exactly 15 minutes later', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']));
    w.get('p0').report('TRANSIENT_FAILURE');
    w.get('p1').report('READY');
    w.sim.advance(1_000);
    w.get('p0').report('READY');
    assert.equal(w.current(), 'p0');
    assert.equal(DEFAULT_PRIORITY_CHILD_RETENTION_MS, RETENTION);
    w.sim.advance(RETENTION - 1);
    assert.equal(w.get('p1').destroyed, false);
    w.sim.advance(1);
    assert.equal(w.get('p1').destroyed, true);
    // Needed again later, it is created anew.
    w.get('p0').report('TRANSIENT_FAILURE');
    assert.equal(w.all.length, 3);
    assert.equal(w.all[2]!.destroyed, false);
  });

  test('reactivated when chosen again before 15 minutes; deactivated anew later with a fresh timer', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']));
    w.get('p0').report('TRANSIENT_FAILURE');
    w.get('p1').report('READY');
    w.get('p0').report('READY'); // p1 deactivated at t=0
    w.sim.advance(10 * MINUTE);
    w.get('p0').report('TRANSIENT_FAILURE'); // p1 reactivated at t=10min
    assert.equal(w.current(), 'p1');
    w.sim.advance(10 * MINUTE);
    assert.equal(w.get('p1').destroyed, false, 'the first timer was cancelled');
    w.get('p0').report('READY'); // deactivated again at t=20min
    w.sim.advance(RETENTION - 1);
    assert.equal(w.get('p1').destroyed, false);
    w.sim.advance(1);
    assert.equal(w.get('p1').destroyed, true);
    assert.equal(w.all.length, 2, 'the same child was reused throughout');
  });

  test(`retention is settable per channel with "${PRIORITY_CHILD_RETENTION_ARG}"`, () => {
    const w = puppetWorld();
    const args = { [PRIORITY_CHILD_RETENTION_ARG]: 5_000 };
    w.sim.update([], puppets(['p0', 'p1']), args);
    w.get('p0').report('TRANSIENT_FAILURE');
    w.get('p1').report('READY');
    w.get('p0').report('READY');
    w.sim.advance(4_999);
    assert.equal(w.get('p1').destroyed, false);
    w.sim.advance(1);
    assert.equal(w.get('p1').destroyed, true);
  });

  test('a child removed from the config is deactivated, not destroyed, and is destroyed after 15 minutes', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']));
    w.get('p0').report('TRANSIENT_FAILURE');
    w.get('p1').report('READY');
    w.sim.update([], puppets(['p0']));
    assert.equal(w.get('p1').destroyed, false);
    assert.equal(w.current(), 'p0');
    w.sim.advance(RETENTION - 1);
    assert.equal(w.get('p1').destroyed, false);
    w.sim.advance(1);
    assert.equal(w.get('p1').destroyed, true);
  });

  test('a removed child re-added by name gets its new config but stays deactivated unless chosen', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']));
    w.get('p0').report('TRANSIENT_FAILURE');
    w.get('p1').report('READY');
    w.sim.update([], puppets(['p0'])); // p1 removed at t=0
    w.get('p0').report('READY');
    w.sim.advance(5 * MINUTE);
    const endpoints = [{ addresses: ['10.0.0.7:80'], attributes: { path: ['p1', 'x'] } }];
    w.sim.update(endpoints, puppets(['p0', 'p1']));
    assert.equal(w.all.length, 2, 'the retained child is reused');
    assert.deepEqual(w.get('p1').endpoints, ['10.0.0.7:80 ["x"]'], 'it received the new update');
    // p0 is READY, so p1 is not chosen: its original timer still runs out 15 minutes after removal.
    w.sim.advance(RETENTION - 5 * MINUTE - 1);
    assert.equal(w.get('p1').destroyed, false);
    w.sim.advance(1);
    assert.equal(w.get('p1').destroyed, true);
  });

  test('a removed child re-added and then chosen is reactivated', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']));
    w.get('p0').report('TRANSIENT_FAILURE');
    w.get('p1').report('READY');
    w.sim.update([], puppets(['p0']));
    w.sim.advance(5 * MINUTE);
    w.sim.update([], puppets(['p0', 'p1'])); // p0 is still failing: the choice reaches p1
    assert.equal(w.current(), 'p1');
    w.sim.advance(RETENTION * 2);
    assert.equal(w.get('p1').destroyed, false);
    assert.equal(w.all.length, 2);
  });

  test('a child that is no longer a priority counts as removed even if it is still among the children', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']));
    w.get('p0').report('TRANSIENT_FAILURE');
    w.get('p1').report('READY');
    const updates = w.get('p1').updates.length;
    w.sim.update([], priorityConfig({ p0: puppet('p0'), p1: puppet('p1') }, ['p0']));
    assert.equal(w.get('p1').updates.length, updates, 'an unlisted child is ignored');
    w.sim.advance(RETENTION);
    assert.equal(w.get('p1').destroyed, true);
  });
});

describe('priority without retention of removed children (A115)', () => {
  const saved = process.env[PRIORITY_CHILD_POLICY_CACHE_ENV];
  afterEach(() => {
    if (saved === undefined) delete process.env[PRIORITY_CHILD_POLICY_CACHE_ENV];
    else process.env[PRIORITY_CHILD_POLICY_CACHE_ENV] = saved;
  });

  function removedChildDestroyedAtOnce(args: Record<string, unknown>): boolean {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']), args);
    w.get('p0').report('TRANSIENT_FAILURE');
    w.get('p1').report('READY');
    w.sim.update([], puppets(['p0']), args);
    return w.get('p1').destroyed;
  }

  test(`${PRIORITY_CHILD_POLICY_CACHE_ENV}=false destroys a removed child at once`, () => {
    process.env[PRIORITY_CHILD_POLICY_CACHE_ENV] = 'false';
    assert.equal(removedChildDestroyedAtOnce({}), true);
    process.env[PRIORITY_CHILD_POLICY_CACHE_ENV] = 'true';
    assert.equal(removedChildDestroyedAtOnce({}), false);
  });

  test(`the update attribute "${PRIORITY_CHILD_POLICY_CACHE_ARG}" does the same and wins over the environment`, () => {
    delete process.env[PRIORITY_CHILD_POLICY_CACHE_ENV];
    assert.equal(removedChildDestroyedAtOnce({}), false, 'retention is the default');
    assert.equal(removedChildDestroyedAtOnce({ [PRIORITY_CHILD_POLICY_CACHE_ARG]: false }), true);
    process.env[PRIORITY_CHILD_POLICY_CACHE_ENV] = 'false';
    assert.equal(removedChildDestroyedAtOnce({ [PRIORITY_CHILD_POLICY_CACHE_ARG]: true }), false);
  });

  test('lower priorities left behind are still retained, and a re-added child is created anew', () => {
    const args = { [PRIORITY_CHILD_POLICY_CACHE_ARG]: false };
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']), args);
    w.get('p0').report('TRANSIENT_FAILURE');
    w.get('p1').report('READY');
    w.get('p0').report('READY');
    w.sim.advance(RETENTION - 1);
    assert.equal(w.get('p1').destroyed, false, 'deactivated, not destroyed');
    w.get('p0').report('TRANSIENT_FAILURE');
    w.sim.update([], puppets(['p0']), args);
    assert.equal(w.get('p1').destroyed, true);
    w.sim.update([], puppets(['p0', 'p1']), args);
    assert.equal(w.all.length, 3);
    assert.equal(w.get('p1').destroyed, false);
  });
});

describe('priority re-resolution, exitIdle, resetBackoff, destroy (A56, A37 "ignore_reresolution_requests")', () => {
  test('re-resolution requests are forwarded unless the child has ignoreReresolutionRequests', () => {
    const w = puppetWorld();
    w.sim.update(
      [],
      priorityConfig({ p0: puppet('p0'), p1: { config: puppet('p1'), ignoreReresolutionRequests: true } }, [
        'p0',
        'p1',
      ]),
    );
    w.get('p0').report('TRANSIENT_FAILURE');
    w.get('p0').helper.requestReresolution();
    assert.equal(w.sim.reresolutionRequests, 1);
    w.get('p1').helper.requestReresolution();
    assert.equal(w.sim.reresolutionRequests, 1);
    // The flag follows the config.
    w.sim.update([], puppets(['p0', 'p1']));
    w.get('p1').helper.requestReresolution();
    assert.equal(w.sim.reresolutionRequests, 2);
  });

  test('exitIdle goes to the current child only; resetBackoff to every child', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1']));
    w.get('p0').report('TRANSIENT_FAILURE');
    w.get('p1').report('IDLE');
    w.sim.exitIdle();
    assert.deepEqual(
      w.all.map((p) => p.exitIdleCalls),
      [0, 1],
    );
    w.sim.resetBackoff();
    assert.deepEqual(
      w.all.map((p) => p.resetBackoffCalls),
      [1, 1],
    );
  });

  test('destroy destroys every child and cancels every timer', () => {
    const w = puppetWorld();
    w.sim.update([], puppets(['p0', 'p1', 'p2']));
    w.get('p0').report('TRANSIENT_FAILURE');
    w.get('p1').report('READY');
    w.get('p0').report('READY'); // p1 retained (retention timer); p0 READY
    w.sim.update([], puppets(['p2'])); // p0, p1 removed; p2 created with a failover timer
    assert.ok(w.sim.clock.pendingTimers > 0);
    w.sim.destroy();
    assert.equal(w.sim.clock.pendingTimers, 0);
    assert.ok(w.all.every((p) => p.destroyed));
    const reports = w.sim.history.length;
    w.get('p2').report('READY');
    assert.equal(w.sim.history.length, reports, 'a destroyed policy passes nothing up');
  });
});

describe('priority failover through a real tree (A56, scripted subchannels)', () => {
  // priority -> weighted_target (two localities) -> round_robin -> pick_first, one endpoint per locality.
  const A1 = '10.0.0.1:80';
  const A2 = '10.0.0.2:80';
  const B1 = '10.0.1.1:80';
  const B2 = '10.0.1.2:80';
  const C1 = '10.0.2.1:80';
  const C2 = '10.0.2.2:80';
  const endpoints = [
    { addresses: [A1], attributes: { path: ['p0', 'a1'] } },
    { addresses: [A2], attributes: { path: ['p0', 'a2'] } },
    { addresses: [B1], attributes: { path: ['p1', 'b1'] } },
    { addresses: [B2], attributes: { path: ['p1', 'b2'] } },
    { addresses: [C1], attributes: { path: ['p2', 'c1'] } },
    { addresses: [C2], attributes: { path: ['p2', 'c2'] } },
  ];
  const wt = (localities: string[]) => [
    {
      weighted_target_experimental: {
        targets: Object.fromEntries(
          localities.map((l) => [l, { weight: 1, childPolicy: [{ round_robin: {} }] }]),
        ),
      },
    },
  ];
  const config = priorityConfig({ p0: wt(['a1', 'a2']), p1: wt(['b1', 'b2']), p2: wt(['c1', 'c2']) }, [
    'p0',
    'p1',
    'p2',
  ]);

  /** Which priority's backends the picks go to ('-' when calls queue or fail). */
  function chosen(sim: Simulation): string {
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const p = sim.pick();
      if (p.type !== 'complete') return `- (${sim.state})`;
      seen.add({ '10.0.0': 'p0', '10.0.1': 'p1', '10.0.2': 'p2' }[p.address.slice(0, 6)]!);
    }
    return [...seen].join(',');
  }
  const exists = (sim: Simulation, key: string) => sim.findSubchannel(key) !== undefined;
  const live = (sim: Simulation, key: string) => sim.findSubchannel(key)?.released === false;

  test('three priorities: failover, recovery, reactivation and retention, checked after every step', () => {
    const sim = new Simulation();
    // Every attempt hangs in CONNECTING until the test moves the subchannel.
    for (const e of endpoints) sim.script(e.addresses[0]!, 'hang');
    sim.update(endpoints, config);
    assert.equal(sim.state, 'CONNECTING');
    assert.deepEqual([...sim.subchannels.keys()], [A1, A2], 'step 1: only p0 exists');

    sim.advance(9_999);
    assert.equal(exists(sim, B1), false, 'step 2: p0 still has time');
    sim.advance(1);
    assert.ok(exists(sim, B1) && exists(sim, B2), 'step 2: p0 failed over to p1 at 10 s');
    assert.equal(exists(sim, C1), false);
    assert.equal(sim.state, 'CONNECTING');

    sim.subchannel(B1).setState('TRANSIENT_FAILURE');
    sim.subchannel(B2).setState('TRANSIENT_FAILURE');
    sim.flush();
    assert.ok(exists(sim, C1), 'step 3: p1 failed, p2 is created at once');
    assert.equal(sim.state, 'CONNECTING', 'step 3: p2 connecting (its timer runs)');

    sim.subchannel(C1).setState('READY');
    sim.flush();
    assert.equal(chosen(sim), 'p2', 'step 4: p2 serves');

    sim.subchannel(A2).setState('READY');
    sim.flush();
    assert.equal(chosen(sim), 'p0', 'step 5: p0 recovered and serves; p1 and p2 deactivated');

    sim.advance(5 * MINUTE);
    sim.subchannel(A2).setState('IDLE'); // the connection drops; round_robin reconnects at once
    sim.flush();
    assert.equal(sim.state, 'CONNECTING', 'step 6: p0 READY -> CONNECTING restarts its failover timer');
    assert.equal(chosen(sim), '- (CONNECTING)');

    sim.advance(9_999);
    assert.equal(sim.state, 'CONNECTING', 'step 7: still waiting on p0');
    sim.advance(1);
    assert.equal(chosen(sim), 'p2', 'step 7: p0 timed out, p1 still failing, p2 reactivated and serving');

    sim.advance(11 * MINUTE);
    assert.ok(live(sim, C1) && live(sim, B1), 'step 8: reactivation cancelled the 15-minute timers');

    sim.subchannel(A1).setState('READY');
    sim.flush();
    assert.equal(chosen(sim), 'p0', 'step 9: p0 back; p1 and p2 deactivated again');
    sim.advance(RETENTION - 1);
    assert.ok(live(sim, C1) && live(sim, B1), 'step 10: retained for 15 minutes');
    sim.advance(1);
    assert.ok(!live(sim, C1) && !live(sim, C2) && !live(sim, B1) && !live(sim, B2), 'step 10: destroyed');
    assert.equal(chosen(sim), 'p0');

    sim.subchannel(A1).setState('IDLE');
    sim.flush();
    assert.equal(sim.state, 'CONNECTING', 'step 11: p0 lost its last connection and waits on its timer');
    assert.equal(live(sim, B1), false);
    sim.advance(10_000);
    assert.ok(live(sim, B1) && live(sim, B2), 'step 12: p0 timed out again; p1 is created anew');
    assert.equal(live(sim, C1), false, 'step 12: p1 is connecting with its timer: p2 is not created yet');
  });
});
