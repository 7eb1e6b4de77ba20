import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

// A child process that uses lbtree on a real channel, closes it, and must then exit by itself: no lbtree
// timer (Happy Eyeballs, backoff hops) or handle may keep the event loop alive.
const SCRIPT = `
import { register } from './src/grpc-js/index.ts';
import { Blackhole, newClient, startBackends, whoami } from './src/cli/loopback-backends.ts';
register();
const [good] = await startBackends(['good']);
const hole = await new Blackhole().start();
// The blackhole first: a Happy Eyeballs timer and a hanging attempt are in flight when we close.
const client = newClient('endpoints:' + hole.address + ',' + good.address, [{ lbtree_pick_first: {} }]);
await whoami(client, { waitForReady: true });
const rr = newClient('endpoints:' + good.address, [{ lbtree_round_robin: {} }]);
await whoami(rr, { waitForReady: true });
client.close();
rr.close();
good.stop();
hole.stop();
console.log('closed');
`;

test('after channel.close() nothing of lbtree keeps the process alive', () => {
  const started = Date.now();
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], {
    encoding: 'utf8',
    timeout: 15_000,
  });
  assert.equal(
    child.signal,
    null,
    `process did not exit by itself (killed after 15 s); stderr: ${child.stderr}`,
  );
  assert.equal(child.status, 0, child.stderr);
  assert.match(child.stdout, /closed/);
  assert.ok(Date.now() - started < 15_000);
});
