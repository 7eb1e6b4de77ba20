import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { modulesLoadedBy } from './support/loaded-modules.js';

// The built package is bundled (scripts/build.mjs): a user's import loads the entry point and a few shared chunks,
// not one file per source module, because Node 20's ESM loader costs about as much per module as a channel's
// whole start (issue 25 §4). `npm test` builds first; run on its own this needs `npm run build`.
const skip = !existsSync('dist/grpc-js/index.js') && 'dist/ not built';
const root = pathToFileURL(process.cwd()).href;

function lbtreeFiles(urls: readonly string[]): string[] {
  return [...new Set(urls.filter((u) => u.startsWith(`${root}/dist/`)).map((u) => u.slice(root.length + 1)))];
}

test('importing lbtree/grpc-js loads its bundle and shared chunks, never a per-module file', { skip }, () => {
  const loaded = modulesLoadedBy(`await import('lbtree/grpc-js');`);
  assert.equal(loaded.status, 0, loaded.stderr);
  const files = lbtreeFiles(loaded.urls);
  assert.ok(files.includes('dist/grpc-js/index.js'), files.join('\n'));
  for (const f of files) assert.match(f, /^dist\/(grpc-js\/index|chunks\/chunk-[A-Z0-9]+)\.js$/, f);
  // 327 source modules load behind this import when each is a file of its own.
  assert.ok(files.length <= 25, `${files.length} files:\n${files.join('\n')}`);
  // @bufbuild/protobuf (90 ES modules of its own) is bundled in; the other dependencies are not.
  assert.deepEqual(
    loaded.urls.filter((u) => u.includes('/node_modules/@bufbuild/protobuf/')),
    [],
    'no @bufbuild/protobuf module is loaded from node_modules',
  );
  assert.ok(
    loaded.urls.some((u) => u.includes('/node_modules/@grpc/grpc-js/')),
    'grpc-js stays external',
  );
});

test('the xDS resolution start stays a chunk of its own, loaded by the first xds: channel, not by register()', {
  skip,
}, () => {
  // A data: module imported between register() and the channel marks the point in the resolution order.
  const loaded = modulesLoadedBy(`
    const grpc = await import('@grpc/grpc-js');
    const { register } = await import('lbtree/grpc-js');
    register({ xds: { bootstrap: { xds_servers: [{ server_uri: '127.0.0.1:1', channel_creds: [{ type: 'insecure' }] }], node: { id: 'n' } } } });
    await import('data:text/javascript,export{}//registered');
    const channel = new grpc.Channel('xds:///bundle-test', grpc.credentials.createInsecure(), {});
    channel.getConnectivityState(true);
    // Until the resolution start is resolved (the loader's list so far), or 30 s.
    const { readFileSync } = await import('node:fs');
    const started = () => readFileSync(process.env.LBTREE_LOADED_MODULES, 'utf8').includes('/xds-resolution-start-');
    for (const end = Date.now() + 30_000; !started() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
    channel.close();
    process.exit(0);
  `);
  assert.equal(loaded.status, 0, loaded.stderr);
  const marker = loaded.urls.findIndex((u) => u.endsWith('//registered'));
  const start = loaded.urls.findIndex((u) => /\/dist\/chunks\/xds-resolution-start-[A-Z0-9]+\.js$/.test(u));
  assert.ok(marker >= 0, 'the marker was resolved');
  assert.ok(
    start > marker,
    `the xDS resolution start chunk is loaded after register(), by the channel (${start} vs ${marker})`,
  );
});
