import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';

// `npm test` builds before running the tests; run on its own (`npm run test:unit`) this needs `npm run build`.
const built = existsSync('dist/control-plane/index.js');

test('lbtree/control-plane resolves from the built package and serves', {
  skip: !built && 'dist/ not built',
}, () => {
  const script = `
    const { ControlPlane, xdsService } = await import('lbtree/control-plane');
    const plane = new ControlPlane({ resources: xdsService({ name: 's', clusters: [{ name: 'c', localities: [] }] }) });
    const port = await plane.listen('127.0.0.1:0');
    const ok = port > 0 && plane.resources.size === 4 && plane.bootstrap().xds_servers[0].server_uri === '127.0.0.1:' + port;
    await plane.close();
    if (!ok) process.exit(3);
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
});
