import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

// `npm test` builds before running the tests; run on its own (`npm run test:unit`) this needs `npm run build`.
const built = existsSync('dist/sim/index.js');
const skip = !built && 'dist/ not built';

test('the built package resolves its own subpath exports (package self-reference)', { skip }, () => {
  const script = `
    const sim = await import('lbtree/sim');
    const root = await import('lbtree');
    await import('lbtree/grpc-js');
    if (typeof (await import('lbtree/grpc-js/xds')).leaseXdsClient !== 'function') process.exit(4);
    await import('lbtree/xds');
    if (typeof (await import('lbtree/admin')).startAdminServer !== 'function') process.exit(5);
    const s = new sim.Simulation();
    s.update(['10.0.0.1:80'], [{ round_robin: {} }]);
    if (s.state !== 'READY' || typeof root.Registry !== 'function') process.exit(3);
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
});

test('CommonJS can require() the root and every subpath (Node >= 20.19, require(esm))', { skip }, () => {
  const child = spawnSync(process.execPath, ['test/fixtures/require-subpaths.cjs'], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  assert.match(child.stdout, /required every subpath/);
});

test('every source map in the packed files carries its sources (the package ships no src/)', { skip }, () => {
  const pack = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8' });
  assert.equal(pack.status, 0, pack.stderr);
  const files = (JSON.parse(pack.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
  const shipped = new Set(files);
  const maps = files.filter((f) => f.endsWith('.map'));
  assert.ok(maps.length > 0, 'the package has source maps');
  assert.ok(shipped.has('LICENSE'), 'the package ships its LICENSE');
  for (const map of maps) {
    const { sources, sourcesContent } = JSON.parse(readFileSync(map, 'utf8')) as {
      sources: string[];
      sourcesContent?: (string | null)[];
    };
    sources.forEach((source, i) => {
      assert.equal(typeof sourcesContent?.[i], 'string', `${map}: ${source} is neither shipped nor inlined`);
    });
  }
});
