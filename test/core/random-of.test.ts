// Issue 25 §6: the randomness a picker calls per pick. A helper handing `Math.random` itself gets it back
// unbound, through any chain of child helpers, so every tree of every channel calls one function (a bound copy
// per tree made a picker's call site megamorphic and its optimized code die with the tree that was dropped).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { childHelper, type Helper, randomOf, realClock } from '../../src/core/index.js';

function helperWith(random: Helper['random']): Helper {
  return {
    createSubchannel: () => {
      throw new Error('not used');
    },
    updateState: () => {},
    requestReresolution: () => {},
    clock: realClock,
    random,
    trace: () => {},
  };
}

test('a helper whose random is Math.random gets Math.random back, and so do its child helpers', () => {
  const root = helperWith(Math.random);
  assert.equal(randomOf(root), Math.random);
  const child = childHelper(root, {});
  const grandchild = childHelper(child, {});
  assert.equal(randomOf(child), Math.random);
  assert.equal(randomOf(grandchild), Math.random);
  assert.equal(grandchild.random, Math.random);
});

test('a helper with randomness of its own is called through, on itself, and its children share one function', () => {
  class Counting {
    draws = 0;
    random(): number {
      this.draws++;
      return 0.25;
    }
  }
  const counting = new Counting();
  const root: Helper = { ...helperWith(() => 0), random: () => counting.random() };
  const random = randomOf(root);
  assert.notEqual(random, Math.random);
  assert.equal(random(), 0.25);
  assert.equal(counting.draws, 1);
  // A method that reads its helper: the function is bound to that helper.
  const methodHelper = Object.assign(
    Object.create(counting) as Counting,
    helperWith(Counting.prototype.random),
  );
  methodHelper.draws = 0;
  assert.equal(randomOf(methodHelper)(), 0.25);
  assert.equal(methodHelper.draws, 1);
  const child = childHelper(root, {});
  assert.equal(randomOf(child), randomOf(childHelper(child, {})));
  assert.equal(randomOf(child)(), 0.25);
  assert.equal(counting.draws, 2);
});
