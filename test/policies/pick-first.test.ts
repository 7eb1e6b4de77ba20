import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Code, ConfigError, parseAddress, unavailable } from '../../src/core/index.js';
import {
  CONNECTION_ATTEMPT_DELAY_ARG,
  type FlatAddress,
  HEALTH_WATCH_ARG,
  interleaveFamilies,
} from '../../src/policies/index.js';
import { Simulation } from '../../src/sim/index.js';

const PF = [{ pick_first: {} }];

/** The addresses whose subchannels have been asked to connect, in the order of their first request. */
function requestOrder(sim: Simulation): string[] {
  return [...sim.subchannels.values()].filter((s) => s.connectionRequests > 0).map((s) => s.key);
}

function requested(sim: Simulation, key: string): number {
  return sim.findSubchannel(key)?.connectionRequests ?? 0;
}

describe('pick_first config (A62 "Enable random shuffling of address list")', () => {
  test('accepts shuffleAddressList under its JSON and proto names and rejects a non-boolean with its path', () => {
    const sim = new Simulation();
    assert.equal(sim.update(['10.0.0.1:80'], [{ pick_first: { shuffleAddressList: true } }]), true);
    assert.equal(sim.update(['10.0.0.1:80'], [{ pick_first: { shuffle_address_list: false } }]), true);
    assert.equal(sim.update(['10.0.0.1:80'], [{ pick_first: { shuffleAddressList: 'yes' } }]), false);
    assert.ok(sim.lastConfigError instanceof ConfigError);
    assert.equal(sim.lastConfigError.path, '$[0].pick_first.shuffleAddressList');
  });
});

describe('pick_first Happy Eyeballs (A61 "Happy Eyeballs in pick_first")', () => {
  test('the 250 ms Connection Attempt Delay starts the next address without cancelling the previous one', () => {
    const sim = new Simulation();
    for (const a of ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80']) sim.script(a, 'hang');
    sim.update(['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80'], PF);
    assert.equal(sim.state, 'CONNECTING');
    assert.deepEqual(requestOrder(sim), ['10.0.0.1:80']);
    sim.advance(249);
    assert.equal(requested(sim, '10.0.0.2:80'), 0);
    sim.advance(1);
    assert.equal(requested(sim, '10.0.0.2:80'), 1);
    assert.equal(sim.subchannel('10.0.0.1:80').state, 'CONNECTING', 'first attempt still in flight');
    assert.equal(sim.subchannel('10.0.0.1:80').released, false);
    sim.advance(250);
    assert.deepEqual(requestOrder(sim), ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80']);
    // The last address starts no timer: nothing further happens however long we wait.
    assert.equal(sim.clock.pendingTimers, 0);
    sim.advance(10_000);
    assert.equal(sim.state, 'CONNECTING');
    assert.deepEqual(
      ['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80'].map((a) => requested(sim, a)),
      [1, 1, 1],
    );
  });

  for (const [setting, expected] of [
    [50, 100],
    [400, 400],
    [5000, 2000],
  ] as const) {
    test(`a Connection Attempt Delay of ${setting} ms is clamped to [100 ms, 2 s] → ${expected} ms`, () => {
      const sim = new Simulation();
      sim.script('10.0.0.1:80', 'hang');
      sim.script('10.0.0.2:80', 'hang');
      sim.update(['10.0.0.1:80', '10.0.0.2:80'], PF, { [CONNECTION_ATTEMPT_DELAY_ARG]: setting });
      sim.advance(expected - 1);
      assert.equal(requested(sim, '10.0.0.2:80'), 0);
      sim.advance(1);
      assert.equal(requested(sim, '10.0.0.2:80'), 1);
    });
  }

  test('the first subchannel to become READY wins; the timer stops and every other subchannel is released', () => {
    const sim = new Simulation();
    sim.script('10.0.0.1:80', 'hang');
    sim.script('10.0.0.2:80', { connectAfterMs: 30 });
    sim.script('10.0.0.3:80', 'hang');
    sim.update(['10.0.0.1:80', '10.0.0.2:80', '10.0.0.3:80'], PF);
    sim.advance(280);
    assert.equal(sim.state, 'READY');
    assert.equal(sim.subchannel('10.0.0.1:80').released, true, 'in-flight attempt cancelled');
    assert.equal(requested(sim, '10.0.0.3:80'), 0, 'timer cancelled: the third attempt never started');
    assert.equal(sim.subchannel('10.0.0.3:80').released, true);
    assert.equal(sim.clock.pendingTimers, 0);
    const pick = sim.pick();
    assert.equal(pick.type === 'complete' && pick.address, '10.0.0.2:80');
  });

  test('a subchannel that becomes READY without being asked is chosen too', () => {
    const sim = new Simulation();
    sim.script('10.0.0.1:80', 'hang');
    sim.update(['10.0.0.1:80', '10.0.0.2:80'], PF);
    assert.equal(requested(sim, '10.0.0.2:80'), 0);
    sim.subchannel('10.0.0.2:80').setState('READY');
    sim.flush();
    assert.equal(sim.state, 'READY');
    assert.equal(sim.subchannel('10.0.0.1:80').released, true);
  });

  test('when the address being waited on fails, the next one starts at once', () => {
    const sim = new Simulation();
    sim.script('10.0.0.1:80', { failAfterMs: 10 });
    sim.script('10.0.0.2:80', 'hang');
    sim.update(['10.0.0.1:80', '10.0.0.2:80'], PF);
    sim.advance(10);
    assert.equal(requested(sim, '10.0.0.2:80'), 1);
    assert.equal(sim.state, 'CONNECTING', 'the pass is not over while 10.0.0.2 is still connecting');
  });

  test('a subchannel already in TRANSIENT_FAILURE when the pass reaches it counts as attempted', () => {
    const sim = new Simulation({ backoffMs: 5000 });
    sim.script('10.0.0.1:80', { failAfterMs: 10 });
    sim.script('10.0.0.2:80', 'hang');
    sim.update(['10.0.0.1:80'], PF);
    sim.advance(10);
    assert.equal(sim.subchannel('10.0.0.1:80').state, 'TRANSIENT_FAILURE');
    // A new list starts a new pass: 10.0.0.1 is in backoff, so 10.0.0.2 is tried immediately.
    sim.update(['10.0.0.1:80', '10.0.0.2:80'], PF);
    assert.equal(requested(sim, '10.0.0.1:80'), 1, 'no new request on the failing subchannel');
    assert.equal(requested(sim, '10.0.0.2:80'), 1);
    assert.equal(sim.clock.now(), 10);
  });

  test('interleaves address families after flattening the endpoints (A61 "Flattening", RFC 8305 §4)', () => {
    const sim = new Simulation();
    const all = ['10.0.0.1:80', '10.0.0.2:80', '[2001:db8::1]:80', '[2001:db8::2]:80', '10.0.0.3:80'];
    for (const a of all) sim.script(a, 'hang');
    sim.update(
      [
        { addresses: ['10.0.0.1:80', '10.0.0.2:80'] },
        { addresses: ['[2001:db8::1]:80'] },
        { addresses: ['[2001:db8::2]:80', '10.0.0.3:80'] },
      ],
      PF,
    );
    sim.advance(250 * 4);
    assert.deepEqual(requestOrder(sim), [
      '10.0.0.1:80',
      '[2001:db8::1]:80',
      '10.0.0.2:80',
      '[2001:db8::2]:80',
      '10.0.0.3:80',
    ]);
  });

  test('interleaving starts with the family of the first address and keeps each family in order', () => {
    const flat = (keys: string[]): FlatAddress[] =>
      keys.map((key) => ({ key, address: parseAddress(key), attributes: undefined as never }));
    const order = (keys: string[]) => interleaveFamilies(flat(keys)).map((a) => a.key);
    assert.deepEqual(order(['[::1]:1', '[::2]:1', '[::3]:1', '1.1.1.1:1']), [
      '[::1]:1',
      '1.1.1.1:1',
      '[::2]:1',
      '[::3]:1',
    ]);
    assert.deepEqual(order(['1.1.1.1:1', '2.2.2.2:1']), ['1.1.1.1:1', '2.2.2.2:1']);
    assert.deepEqual(order([]), []);
  });

  test('an address listed twice gets one subchannel, at its first position', () => {
    const sim = new Simulation();
    sim.script('10.0.0.1:80', 'hang');
    sim.script('10.0.0.2:80', 'hang');
    sim.update([{ addresses: ['10.0.0.1:80', '10.0.0.2:80'] }, { addresses: ['10.0.0.1:80'] }], PF);
    sim.advance(10_000);
    assert.equal(sim.subchannelsCreated, 2);
    assert.deepEqual(requestOrder(sim), ['10.0.0.1:80', '10.0.0.2:80']);
  });
});

describe('pick_first sticky TRANSIENT_FAILURE (A62 "Use sticky-TF by default", A61 after the first pass)', () => {
  test('reports TF with the last error once every address failed, re-resolves, and keeps retrying', () => {
    const sim = new Simulation({ backoffMs: 1000 });
    sim.script('10.0.0.1:80', { failAfterMs: 100, details: 'connect ECONNREFUSED 10.0.0.1:80' });
    sim.script('10.0.0.2:80', { failAfterMs: 200, details: 'connect ECONNREFUSED 10.0.0.2:80' });
    sim.update(['10.0.0.1:80', '10.0.0.2:80'], PF);
    sim.advance(100); // first fails; second starts at once
    assert.equal(sim.state, 'CONNECTING');
    assert.equal(sim.reresolutionRequests, 0);
    sim.advance(200); // second fails: the pass is over
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    assert.equal(sim.status.code, Code.UNAVAILABLE);
    assert.match(
      sim.status.details,
      /failed to connect to all addresses; last error: .*ECONNREFUSED 10\.0\.0\.2:80/,
    );
    assert.equal(sim.reresolutionRequests, 1);
    const pick = sim.pick();
    assert.equal(pick.type, 'fail');

    // Backoff ends (IDLE at t=1100) → pick_first asks again on its own; it stays in TF while retrying.
    sim.advance(800);
    assert.equal(requested(sim, '10.0.0.1:80'), 2);
    assert.equal(sim.subchannel('10.0.0.1:80').state, 'CONNECTING');
    assert.equal(sim.state, 'TRANSIENT_FAILURE', 'sticky: CONNECTING does not leave TF');
    assert.ok(!sim.history.slice(2).some((h) => h.state === 'CONNECTING'));
    sim.advance(100); // t=1200: 10.0.0.1 fails again: 1 failure of 2 → no re-resolution yet
    assert.equal(sim.reresolutionRequests, 1);
    assert.match(sim.status.details, /ECONNREFUSED 10\.0\.0\.1:80/, 'TF status follows the latest error');
    sim.advance(300); // t=1500: 10.0.0.2 (retried at 1300) fails again: 2 failures = list size → re-resolve
    assert.equal(sim.reresolutionRequests, 2);
    assert.match(sim.status.details, /ECONNREFUSED 10\.0\.0\.2:80/);

    // A backend comes back: READY ends TF.
    sim.script('10.0.0.1:80', { connectAfterMs: 5 });
    sim.advance(1000);
    assert.equal(sim.state, 'READY');
    assert.equal(sim.subchannel('10.0.0.2:80').released, true);
  });

  test("resetBackoff() cuts a failing address's backoff short, so it is retried at once", () => {
    const sim = new Simulation({ backoffMs: 60_000 });
    sim.script('10.0.0.1:80', { failAfterMs: 10 });
    sim.update(['10.0.0.1:80'], PF);
    sim.advance(10);
    assert.equal(sim.subchannel('10.0.0.1:80').state, 'TRANSIENT_FAILURE');
    assert.equal(requested(sim, '10.0.0.1:80'), 1);
    sim.script('10.0.0.1:80', { connectAfterMs: 5 });
    sim.resetBackoff();
    assert.equal(
      requested(sim, '10.0.0.1:80'),
      2,
      'IDLE after the reset: pick_first asks again (A62 sticky TF)',
    );
    sim.advance(5);
    assert.equal(sim.state, 'READY');
  });

  test('a new address list does not leave TF until something is READY', () => {
    const sim = new Simulation();
    sim.script('10.0.0.1:80', { failAfterMs: 10 });
    sim.update(['10.0.0.1:80'], PF);
    sim.advance(10);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    sim.script('10.0.0.2:80', { connectAfterMs: 50 });
    sim.update(['10.0.0.2:80'], PF);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    sim.advance(50);
    assert.equal(sim.state, 'READY');
  });
});

describe('pick_first address list updates (A61 "Happy Eyeballs", A62)', () => {
  function connected(sim: Simulation, key: string) {
    sim.script(key, { connectAfterMs: 1 });
    sim.update([key], PF);
    sim.advance(1);
    assert.equal(sim.state, 'READY');
  }

  test('keeps serving on the connected address when it is still in the new list', () => {
    const sim = new Simulation();
    connected(sim, '10.0.0.1:80');
    const reports = sim.history.length;
    sim.update(['10.0.0.9:80', '10.0.0.1:80'], PF);
    assert.equal(sim.history.length, reports, 'no new state report');
    assert.equal(sim.findSubchannel('10.0.0.9:80'), undefined, 'no new connection attempts');
    const pick = sim.pick();
    assert.equal(pick.type === 'complete' && pick.address, '10.0.0.1:80');
  });

  test('otherwise keeps serving on the old connection while a pass runs on the new list, then switches', () => {
    const sim = new Simulation();
    connected(sim, '10.0.0.1:80');
    sim.script('10.0.0.2:80', { connectAfterMs: 300 });
    sim.update(['10.0.0.2:80'], PF);
    assert.equal(sim.state, 'READY');
    let pick = sim.pick();
    assert.equal(pick.type === 'complete' && pick.address, '10.0.0.1:80');
    sim.advance(300);
    pick = sim.pick();
    assert.equal(pick.type === 'complete' && pick.address, '10.0.0.2:80');
    assert.equal(sim.subchannel('10.0.0.1:80').released, true);
  });

  test('a dropped connection is released, re-resolution requested, IDLE reported; a pick starts a new pass', () => {
    const sim = new Simulation();
    connected(sim, '10.0.0.1:80');
    sim.subchannel('10.0.0.1:80').setState('IDLE');
    sim.flush();
    assert.equal(sim.state, 'IDLE');
    assert.equal(sim.reresolutionRequests, 1);
    assert.equal(sim.subchannel('10.0.0.1:80').released, true);
    assert.deepEqual(sim.pick(), { type: 'queue' });
    // The pick on the IDLE picker started a new pass (a fresh subchannel for the address).
    assert.equal(sim.state, 'CONNECTING');
    assert.equal(sim.subchannel('10.0.0.1:80').released, false);
    sim.advance(1);
    assert.equal(sim.state, 'READY');
  });

  test('an update while IDLE waits for exitIdle()', () => {
    const sim = new Simulation();
    connected(sim, '10.0.0.1:80');
    sim.subchannel('10.0.0.1:80').setState('IDLE');
    sim.flush();
    sim.update(['10.0.0.2:80'], PF);
    assert.equal(sim.state, 'IDLE');
    assert.equal(sim.findSubchannel('10.0.0.2:80'), undefined);
    sim.exitIdle();
    assert.equal(requested(sim, '10.0.0.2:80'), 1);
  });

  test('an empty list: TF saying so, re-resolution, update not accepted', () => {
    const sim = new Simulation();
    assert.equal(sim.update([], PF), false);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    assert.match(sim.status.details, /empty address list/);
    assert.equal(sim.reresolutionRequests, 1);
  });

  test('a resolver error before any list: TF with the error; after a list: ignored, the list keeps serving', () => {
    const sim = new Simulation();
    sim.createRoot(PF);
    assert.equal(sim.updateError(unavailable('DNS lookup failed')), false);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    assert.match(sim.status.details, /DNS lookup failed/);
    assert.equal(sim.reresolutionRequests, 1);
    connected(sim, '10.0.0.1:80');
    assert.equal(sim.updateError(unavailable('DNS lookup failed')), false);
    assert.equal(sim.state, 'READY');
  });

  test('a list in a new order starts a new pass at once (A61: every new address list gets a pass)', () => {
    const sim = new Simulation();
    sim.script('10.0.0.1:80', 'hang');
    sim.script('10.0.0.2:80', 'hang');
    sim.update(['10.0.0.1:80', '10.0.0.2:80'], PF);
    sim.advance(100);
    sim.update(['10.0.0.2:80', '10.0.0.1:80'], PF);
    assert.equal(requested(sim, '10.0.0.2:80'), 1, 'the new first address is tried immediately');
    assert.equal(sim.subchannelsCreated, 2, 'subchannels of addresses on both lists are kept');
  });

  test('the identical list re-delivered is not a new list: the running pass carries on', () => {
    const sim = new Simulation();
    sim.script('10.0.0.1:80', 'hang');
    sim.script('10.0.0.2:80', 'hang');
    sim.update(['10.0.0.1:80', '10.0.0.2:80'], PF);
    sim.advance(100);
    sim.update(['10.0.0.1:80', '10.0.0.2:80'], PF);
    sim.advance(149);
    assert.equal(requested(sim, '10.0.0.2:80'), 0);
    sim.advance(1);
    assert.equal(requested(sim, '10.0.0.2:80'), 1, 'the timer started at t=0 still fires at t=250');
  });

  test('the identical list re-delivered in sticky TF does not re-request re-resolution', () => {
    const sim = new Simulation({ backoffMs: 10_000 });
    sim.script('10.0.0.1:80', { failAfterMs: 10 });
    sim.update(['10.0.0.1:80'], PF);
    sim.advance(10);
    assert.equal(sim.reresolutionRequests, 1);
    sim.update(['10.0.0.1:80'], PF);
    assert.equal(sim.reresolutionRequests, 1);
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
  });

  test('destroy() releases every subchannel and leaves no timer behind', () => {
    const sim = new Simulation();
    sim.script('10.0.0.1:80', 'hang');
    sim.update(['10.0.0.1:80', '10.0.0.2:80'], PF);
    sim.destroy();
    assert.equal(sim.subchannel('10.0.0.1:80').released, true);
    assert.equal(sim.clock.pendingTimers, 0);
  });
});

describe('pick_first health option (A61 "Generic Health Reporting Mechanism")', () => {
  test('without the internal option, health does not affect what pick_first reports', () => {
    const sim = new Simulation();
    sim.script('10.0.0.1:80', { connectAfterMs: 1 });
    sim.update(['10.0.0.1:80'], PF);
    sim.advance(1);
    sim.subchannel('10.0.0.1:80').setHealth('TRANSIENT_FAILURE');
    sim.flush();
    assert.equal(sim.state, 'READY');
  });

  test('the option cannot be set through string-keyed channel settings', () => {
    const sim = new Simulation();
    sim.script('10.0.0.1:80', { connectAfterMs: 1 });
    sim.update(['10.0.0.1:80'], PF, { [HEALTH_WATCH_ARG.description!]: true });
    sim.advance(1);
    sim.subchannel('10.0.0.1:80').setHealth('TRANSIENT_FAILURE');
    sim.flush();
    assert.equal(sim.state, 'READY');
  });

  test('with it, the chosen subchannel reports health instead of raw state; connections are unaffected', () => {
    const sim = new Simulation();
    sim.script('10.0.0.1:80', { connectAfterMs: 1 });
    sim.update(['10.0.0.1:80'], PF, { [HEALTH_WATCH_ARG]: true });
    sim.advance(1);
    assert.equal(sim.state, 'READY');
    const fake = sim.subchannel('10.0.0.1:80');
    fake.setHealth('TRANSIENT_FAILURE', unavailable('health check: NOT_SERVING'));
    sim.flush();
    assert.equal(sim.state, 'TRANSIENT_FAILURE');
    assert.match(sim.status.details, /NOT_SERVING/);
    assert.equal(fake.released, false, 'unhealthy is not a dropped connection');
    assert.equal(sim.reresolutionRequests, 0);
    fake.setHealth('READY');
    sim.flush();
    assert.equal(sim.state, 'READY');
    // The raw state still manages the connection.
    fake.setState('IDLE');
    sim.flush();
    assert.equal(sim.state, 'IDLE');
    assert.equal(fake.released, true);
  });
});
