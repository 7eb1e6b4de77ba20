// The connection pacer on its own (issue 25 §5), turns run by hand: the first 100 requests of a turn are made at
// once, the rest in later turns in order; a request no longer wanted costs nothing from a turn's budget.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConnectionPacer, type PacedConnection } from '../../src/core/index.js';

/** A pacer whose turns run only when the test says. */
function pacerWithTurns() {
  const turns: (() => void)[] = [];
  const pacer = new ConnectionPacer({ nextTurn: (fn) => turns.push(fn) });
  const runTurn = () => {
    const due = turns.splice(0);
    for (const fn of due) fn();
  };
  return { pacer, runTurn, turns };
}

/** A request that records when it is made; `wanted` false: it declines. */
function request(made: number[], id: number, wanted = true): PacedConnection {
  return {
    connectPaced: () => {
      if (wanted) made.push(id);
      return wanted;
    },
  };
}

test('101 requests in a turn: 100 at once, the 101st in the next turn; a turn with none schedules nothing more', () => {
  const { pacer, runTurn, turns } = pacerWithTurns();
  const made: number[] = [];
  for (let i = 0; i < 101; i++) pacer.request(request(made, i));
  assert.equal(made.length, 100);
  assert.equal(pacer.waiting, 1);
  runTurn();
  assert.deepEqual(made.slice(100), [100]);
  assert.equal(pacer.waiting, 0);
  // That turn made a request: the next one starts a new count, and then nothing is scheduled.
  runTurn();
  assert.equal(turns.length, 0);
  for (let i = 0; i < 100; i++) pacer.request(request(made, 200 + i));
  assert.equal(made.length, 201, 'a fresh turn: 100 at once');
});

test('declined requests (released meanwhile) take nothing from the budget', () => {
  const { pacer, runTurn } = pacerWithTurns();
  const made: number[] = [];
  for (let i = 0; i < 100; i++) pacer.request(request(made, i));
  for (let i = 0; i < 50; i++) pacer.request(request(made, 100 + i, false));
  for (let i = 0; i < 100; i++) pacer.request(request(made, 200 + i));
  assert.equal(pacer.waiting, 150);
  runTurn();
  assert.deepEqual(
    made.slice(100),
    Array.from({ length: 100 }, (_, i) => 200 + i),
  );
  assert.equal(pacer.waiting, 0);
});

test('cleared from inside a request: the rest of the queue is dropped, later requests are made', () => {
  const { pacer, runTurn } = pacerWithTurns();
  const made: number[] = [];
  for (let i = 0; i < 100; i++) pacer.request(request(made, i));
  pacer.request({
    connectPaced: () => {
      made.push(100);
      pacer.clear();
      return true;
    },
  });
  for (let i = 0; i < 10; i++) pacer.request(request(made, 101 + i));
  runTurn();
  assert.deepEqual(made.slice(100), [100]);
  assert.equal(pacer.waiting, 0);
  runTurn();
  pacer.request(request(made, 500));
  assert.deepEqual(made.slice(101), [500]);
});
