import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';

// `npm test` builds before running the tests; run on its own (`npm run test:unit`) this needs `npm run build`.
const built = existsSync('dist/sim/index.js');

test('the built package resolves its own subpath exports (package self-reference)', {
  skip: !built && 'dist/ not built',
}, () => {
  const script = `
    const sim = await import('lbtree/sim');
    const root = await import('lbtree');
    await import('lbtree/grpc-js');
    await import('lbtree/xds');
    const s = new sim.Simulation();
    s.update(['10.0.0.1:80'], [{ round_robin: {} }]);
    if (s.state !== 'CONNECTING' || typeof root.Registry !== 'function') process.exit(3);
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
});
