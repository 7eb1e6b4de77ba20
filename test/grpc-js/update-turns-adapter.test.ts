// Issue 25 §5 on the grpc-js adapter: a spread update's steps run in the event loop's next iteration (after its
// timers and I/O), never in the check phase of the I/O callback that delivered the update, and grpc-js keeps
// the channel's picker until the last step has run.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { OK_STATUS, queuePicker } from '../../src/core/index.js';
import { GrpcHelperAdapter } from '../../src/grpc-js/helper-adapter.js';

/** The part of grpc-js's ChannelControlHelper these tests reach: the states it was handed. */
function fakeChannel() {
  const states: string[] = [];
  return { states, updateState: (state: number) => states.push(String(state)) };
}

/** Runs `fn` in an I/O callback (the poll phase), as an xDS response is delivered. */
const inIoCallback = (fn: () => void) =>
  new Promise<void>((resolve) =>
    readFile(fileURLToPath(import.meta.url), () => {
      fn();
      resolve();
    }),
  );

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a step handed over in an I/O callback runs after that iteration’s immediates, in the next iteration', async () => {
  const grpc = fakeChannel();
  const helper = new GrpcHelperAdapter(grpc as never, 'test');
  const order: string[] = [];
  await inIoCallback(() => {
    helper.updateTurns.later(() => order.push('step'));
    setImmediate(() => {
      order.push('immediate of the same iteration');
      setImmediate(() => order.push('immediate of the next iteration'));
    });
  });
  while (order.length < 3) await sleep(1);
  assert.deepEqual(order, ['immediate of the same iteration', 'step', 'immediate of the next iteration']);
});

test('the channel keeps its picker while a step waits and gets the latest report after the last step', async () => {
  const grpc = fakeChannel();
  const helper = new GrpcHelperAdapter(grpc as never, 'test');
  helper.updateState('READY', OK_STATUS, queuePicker);
  assert.equal(grpc.states.length, 1);
  let stepsRun = 0;
  await inIoCallback(() => {
    const step = () => {
      stepsRun++;
      if (stepsRun < 3) helper.updateTurns.later(step);
      else helper.updateState('CONNECTING', OK_STATUS, queuePicker);
    };
    helper.updateTurns.later(step);
    helper.updateState('TRANSIENT_FAILURE', OK_STATUS, queuePicker);
  });
  assert.equal(grpc.states.length, 1, 'held while the steps wait');
  while (stepsRun < 3) await sleep(1);
  assert.equal(grpc.states.length, 2, 'one report, the latest, after the last step');
  assert.equal(helper.lastState, 'CONNECTING');
});

test('lists placed at once share the budget of the iteration their update arrives in; the next iteration has it whole', async () => {
  const helper = new GrpcHelperAdapter(fakeChannel() as never, 'test');
  const seen: boolean[] = [];
  await inIoCallback(() => {
    seen.push(helper.updateTurns.placeNow(1_000), helper.updateTurns.placeNow(1));
    setImmediate(() => {
      // The same iteration's check phase: its work adds to the same stall, and the budget stays spent.
      seen.push(helper.updateTurns.placeNow(1));
      setImmediate(() => seen.push(helper.updateTurns.placeNow(1)));
    });
  });
  while (seen.length < 4) await sleep(1);
  assert.deepEqual(seen, [true, false, false, true]);
});
