import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { nodeEval, sourceModule } from '../support/child-node.js';

// A child process that uses lbtree on a real channel, closes it, and must then exit by itself: no lbtree
// timer (Happy Eyeballs, backoff hops) or handle may keep the event loop alive.
const SCRIPT = `
import { register } from '${sourceModule('src/grpc-js/index.ts')}';
import { Blackhole, newClient, startBackends, whoami } from '${sourceModule('src/cli/loopback-backends.ts')}';
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

// Start-up (grpc-js, servers, the Happy Eyeballs attempt) can take many seconds on a loaded machine, so
// the clock that matters starts when the script says it closed everything: from then on the process must end
// by itself within EXIT_WITHIN_MS.
const EXIT_WITHIN_MS = 10_000;

test('after channel.close() nothing of lbtree keeps the process alive', async () => {
  const child = spawn(process.execPath, nodeEval(SCRIPT), {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  let closedAt = 0;
  let killer: NodeJS.Timeout | undefined;
  child.stdout.on('data', (d) => {
    stdout += d;
    if (closedAt === 0 && stdout.includes('closed')) {
      closedAt = Date.now();
      killer = setTimeout(() => child.kill('SIGTERM'), EXIT_WITHIN_MS);
    }
  });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('close', (c, s) => resolve([c, s])),
  );
  clearTimeout(killer);
  assert.equal(code, 0, `exit ${code} ${signal ?? ''}; stdout: ${stdout}; stderr: ${stderr}`);
  assert.ok(closedAt > 0, `the script never reached "closed"; stdout: ${stdout}`);
  assert.ok(Date.now() - closedAt < EXIT_WITHIN_MS, 'exited by itself after closing');
});
