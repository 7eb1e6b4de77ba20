import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ArraySnapshot, SnapshotArray, snapshotOf } from '../../src/policies/index.js';
import { seededRandom } from '../../src/sim/index.js';

/** A snapshot subclass, as a picker that is its own snapshot (round_robin's) is. */
class OwnSnapshot<T> extends ArraySnapshot<T> {}
const ownSnapshot = <T>(items: readonly T[], length: number): OwnSnapshot<T> =>
  new OwnSnapshot(items, length);

describe('SnapshotArray: O(1) changes and O(1) immutable snapshots (the pickers of a connect storm)', () => {
  test('an adopted array is the live contents: a snapshot taken before a change keeps reading the old values', () => {
    const array = SnapshotArray.adopt(['a', 'b', 'c']);
    assert.equal(array.length, 3);
    const before = array.snapshot();
    array.set(1, 'B');
    assert.equal(array.push('d'), 3);
    assert.deepEqual(before.toArray(), ['a', 'b', 'c']);
    assert.deepEqual(array.snapshot().toArray(), ['a', 'B', 'c', 'd']);
    const empty = SnapshotArray.adopt<string>([]);
    assert.equal(empty.push('x'), 0);
    assert.deepEqual(empty.snapshot().toArray(), ['x']);
  });

  test('every snapshot keeps reading what it was taken with, through any later pushes, sets and removals', () => {
    const random = seededRandom(7);
    const array = new SnapshotArray<string>();
    const model: string[] = [];
    const taken: { snapshot: ArraySnapshot<string>; expected: string[] }[] = [];
    for (let step = 0; step < 3000; step++) {
      const r = random();
      if (model.length === 0 || r < 0.45) {
        const value = `v${step}`;
        assert.equal(array.push(value), model.length);
        model.push(value);
      } else if (r < 0.7) {
        const i = Math.floor(random() * model.length);
        array.set(i, `s${step}`);
        model[i] = `s${step}`;
      } else {
        const i = Math.floor(random() * model.length);
        const last = model.pop()!;
        const moved = array.swapRemove(i);
        if (i < model.length) model[i] = last;
        assert.equal(moved, i < model.length);
      }
      assert.equal(array.length, model.length);
      // Snapshots at random points, sometimes several without a change in between (the same one back), and
      // some made as a subclass (a picker that is its own snapshot, as round_robin's): always a new object.
      if (random() < 0.3) {
        const snapshot = array.snapshot();
        if (random() < 0.2) assert.equal(array.snapshot(), snapshot);
        taken.push({ snapshot, expected: model.slice() });
      } else if (random() < 0.15) {
        const own = array.snapshotWith(ownSnapshot, null);
        assert.ok(own instanceof OwnSnapshot);
        assert.notEqual(array.snapshotWith(ownSnapshot, null), own);
        taken.push({ snapshot: own, expected: model.slice() });
      }
    }
    for (const { snapshot, expected } of taken) {
      assert.equal(snapshot.length, expected.length);
      assert.deepEqual(snapshot.toArray(), expected);
    }
    assert.deepEqual(array.snapshot().toArray(), model);
  });

  test('emptied and refilled many times (a push onto no items starts a new array), every snapshot stays intact', () => {
    const random = seededRandom(11);
    const array = new SnapshotArray<string>();
    const model: string[] = [];
    const taken: { snapshot: ArraySnapshot<string>; expected: string[] }[] = [];
    let refills = 0;
    for (let step = 0; step < 3000; step++) {
      // Removals outweigh pushes: the array keeps draining to empty.
      if (model.length === 0 || random() < 0.35) {
        if (model.length === 0) refills++;
        array.push(`v${step}`);
        model.push(`v${step}`);
      } else {
        const i = Math.floor(random() * model.length);
        const last = model.pop()!;
        array.swapRemove(i);
        if (i < model.length) model[i] = last;
      }
      if (random() < 0.5) taken.push({ snapshot: array.snapshot(), expected: model.slice() });
    }
    assert.ok(refills > 100, `emptied ${refills} times`);
    for (const { snapshot, expected } of taken) assert.deepEqual(snapshot.toArray(), expected);
  });

  test('groups of slots (least_request: counter and result) are removed together, older snapshots intact', () => {
    const array = new SnapshotArray<string>();
    for (const v of ['a0', 'a1', 'b0', 'b1', 'c0', 'c1']) array.push(v);
    const before = array.snapshot();
    assert.equal(array.swapRemoveGroup(0, 2), true);
    assert.deepEqual(array.snapshot().toArray(), ['c0', 'c1', 'b0', 'b1']);
    assert.equal(array.swapRemoveGroup(2, 2), false);
    array.push('d0');
    array.push('d1');
    assert.deepEqual(array.snapshot().toArray(), ['c0', 'c1', 'd0', 'd1']);
    assert.deepEqual(before.toArray(), ['a0', 'a1', 'b0', 'b1', 'c0', 'c1']);
  });

  test('the newest snapshot reads the live array until the next change', () => {
    const array = new SnapshotArray<number>();
    array.push(1);
    array.push(2);
    const a = array.snapshot();
    assert.equal(a.stale, false);
    array.push(3);
    assert.equal(a.stale, false, 'a push past its length leaves it reading the live array');
    array.swapRemove(0);
    assert.deepEqual(a.toArray(), [1, 2]);
    assert.deepEqual(array.snapshot().toArray(), [3, 2]);
    assert.deepEqual(snapshotOf(['x', 'y']).toArray(), ['x', 'y']);
  });

  test('a snapshot with nothing changed since is handed out again; any change to what it covers makes a new one', () => {
    const array = SnapshotArray.adopt([1, 2]);
    const a = array.snapshot();
    assert.equal(array.snapshot(), a, 'no change: the same snapshot');
    array.push(3);
    const b = array.snapshot();
    assert.notEqual(b, a, 'a push');
    assert.deepEqual(b.toArray(), [1, 2, 3]);
    array.set(2, 30);
    const c = array.snapshot();
    assert.notEqual(c, b, 'a set of its last slot');
    assert.deepEqual(b.toArray(), [1, 2, 3]);
    // A push undone by removing the pushed slot leaves the covered slots as they were: the same contents.
    array.push(4);
    array.swapRemove(3);
    assert.deepEqual(array.snapshot().toArray(), [1, 2, 30]);
    array.swapRemove(0);
    const d = array.snapshot();
    assert.notEqual(d, c, 'a removal');
    assert.deepEqual(d.toArray(), [30, 2]);
    assert.deepEqual(c.toArray(), [1, 2, 30]);
  });
});
