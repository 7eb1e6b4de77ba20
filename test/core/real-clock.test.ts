import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { realClock } from '../../src/core/index.js';
import { nodeEval, sourceModule } from '../support/child-node.js';

test('the real clock fires timers and can cancel them', async () => {
  let fired = 0;
  const cancel = realClock.setTimer(0, () => fired++);
  realClock.setTimer(0, () => fired++);
  cancel();
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(fired, 1);
});

test("the real clock's timers are unref'd: a 15-minute timer does not keep the process alive", () => {
  const started = Date.now();
  const child = spawnSync(
    process.execPath,
    nodeEval(
      `const { realClock } = await import('${sourceModule('src/core/clock.ts')}'); realClock.setTimer(15 * 60_000, () => {});`,
    ),
    { encoding: 'utf8', timeout: 30_000 },
  );
  assert.equal(child.status, 0, child.stderr);
  assert.ok(Date.now() - started < 30_000);
});
