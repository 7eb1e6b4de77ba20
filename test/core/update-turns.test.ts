// Issue 25 §5: the queue at a channel's root that spreads big updates over event-loop turns, with the turns run
// by hand (the grpc-js adapter runs them with setImmediate, the simulator on its virtual clock).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ConnectivityState, OK_STATUS, queuePicker, UpdateTurnQueue } from '../../src/core/index.js';

function harness() {
  const turns: (() => void)[] = [];
  const published: ConnectivityState[] = [];
  const queue = new UpdateTurnQueue({
    nextTurn: (fn) => turns.push(fn),
    publish: (state) => published.push(state),
  });
  /** Runs the turns scheduled so far (not the ones they schedule). */
  const runTurn = () => {
    for (const fn of turns.splice(0)) fn();
  };
  const report = (state: ConnectivityState) => queue.updateState(state, OK_STATUS, queuePicker);
  return { queue, published, runTurn, report, turns };
}

describe('UpdateTurnQueue (issue 25 §5)', () => {
  test('a turn of steps grants 1,000 endpoints, whichever steps take them; the turn an update arrives in, none', () => {
    const { queue, runTurn } = harness();
    const granted: number[] = [];
    assert.equal(queue.take(600), 0);
    queue.later(() => granted.push(queue.take(600), queue.take(600), queue.take(1)));
    runTurn();
    queue.later(() => granted.push(queue.take(1_001)));
    runTurn();
    assert.deepEqual(granted, [600, 400, 0, 1_000]);
  });

  test('steps run in order in later turns, each turn while its budget lasts', () => {
    const { queue, runTurn } = harness();
    const ran: string[] = [];
    queue.later(() => ran.push(`a${queue.take(700)}`));
    queue.later(() => ran.push(`b${queue.take(700)}`));
    queue.later(() => ran.push(`c${queue.take(700)}`));
    assert.deepEqual(ran, []);
    runTurn();
    // a and b shared the turn's 1,000; c waits for the next.
    assert.deepEqual(ran, ['a700', 'b300']);
    assert.equal(queue.spreading, true);
    runTurn();
    assert.deepEqual(ran, ['a700', 'b300', 'c700']);
    assert.equal(queue.spreading, false);
  });

  test('reports are held while a step waits; the latest goes out after the last step', () => {
    const { queue, published, runTurn, report } = harness();
    report('READY');
    assert.deepEqual(published, ['READY']);
    queue.later(() => report('TRANSIENT_FAILURE'));
    report('CONNECTING');
    assert.deepEqual(published, ['READY']);
    runTurn();
    assert.deepEqual(published, ['READY', 'TRANSIENT_FAILURE']);
  });

  test('a held report goes out after the last step even when that step reports nothing', () => {
    const { queue, published, runTurn, report } = harness();
    queue.later(() => {});
    report('CONNECTING');
    runTurn();
    assert.deepEqual(published, ['CONNECTING']);
  });

  test('cancelling the last waiting step releases the held report in a later turn, never at once', () => {
    const { queue, published, runTurn, report } = harness();
    const cancel = queue.later(() => assert.fail('cancelled'));
    report('CONNECTING');
    cancel();
    assert.deepEqual(published, []);
    assert.equal(queue.spreading, false);
    runTurn();
    assert.deepEqual(published, ['CONNECTING']);
  });

  test('a report after the cancellation goes out at once, and the held one is dropped', () => {
    const { queue, published, runTurn, report } = harness();
    const cancel = queue.later(() => assert.fail('cancelled'));
    report('CONNECTING');
    cancel();
    report('READY');
    runTurn();
    assert.deepEqual(published, ['READY']);
  });

  test('clear drops the waiting steps and the held report (the tree is gone)', () => {
    const { queue, published, runTurn, report } = harness();
    queue.later(() => assert.fail('cleared'));
    report('CONNECTING');
    queue.clear();
    assert.equal(queue.spreading, false);
    runTurn();
    assert.deepEqual(published, []);
    report('READY');
    assert.deepEqual(published, ['READY']);
  });
});

describe('UpdateTurnQueue.placeNow: lists placed at once share a turn budget of 1,000 (issue 25 §5)', () => {
  test('a list is placed while the turn has budget left (999 placed: yes), none once 1,000 are', () => {
    const { queue, runTurn } = harness();
    assert.equal(queue.placeNow(499), true);
    assert.equal(queue.placeNow(499), true);
    assert.equal(queue.placeNow(1), true);
    // 999 placed, 1 left: a list of 499 still goes (the budget is a limit on starting lists, not their size).
    assert.equal(queue.placeNow(499), true);
    assert.equal(queue.placeNow(1), false);
    runTurn();
    // The next turn starts with a full budget.
    assert.equal(queue.placeNow(999), true);
    assert.equal(queue.placeNow(1), true);
    assert.equal(queue.placeNow(1), false);
  });

  test('only a turn that placed something schedules the refill', () => {
    const { queue, turns } = harness();
    assert.equal(turns.length, 0);
    queue.placeNow(10);
    queue.placeNow(10);
    assert.equal(turns.length, 1);
  });

  test('in a turn of steps, lists placed at once take from the steps’ budget', () => {
    const { queue, runTurn } = harness();
    const seen: (number | boolean)[] = [];
    queue.later(() => seen.push(queue.take(600), queue.placeNow(399), queue.placeNow(1), queue.placeNow(1)));
    runTurn();
    assert.deepEqual(seen, [600, true, true, false]);
  });
});
