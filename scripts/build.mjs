// `npm run build`: the package's dist/. tsc writes the declarations (and type-checks src/); esbuild writes the
// JavaScript, one bundle per entry point (package.json's exports and bin) with the modules they share split into
// dist/chunks/. Why bundle: Node 20's ESM loader costs about 0.56 M instructions per module, and an xds: channel
// loaded 327 of lbtree's modules before its first call (issue 25 §4, docs/performance.md). Dynamic import()s stay
// chunks of their own, loaded when first used (the xDS resolution start, the CSDS responder, the CLI's commands).
// The dependencies stay external, resolved from node_modules as before (so @grpc/grpc-js remains an optional peer:
// `lbtree --help` must run without it), except @bufbuild/protobuf: its 90 ES modules cost a channel's start about
// as much again as lbtree's own, and bundled, only what lbtree uses of it is in. It stays a dependency for the
// declarations, which name its types; protobuf-es v2 has no message classes, so there is no class identity for a
// user's own copy of it to miss.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));

/** `./dist/grpc-js/xds.js` → [`grpc-js/xds`, `src/grpc-js/xds.ts`]. */
function entryOf(distFile) {
  const match = /^\.\/dist\/(.+)\.js$/.exec(distFile);
  if (match === null) throw new Error(`build: ${distFile} (package.json) is not a dist/ JavaScript file`);
  return [match[1], `src/${match[1]}.ts`];
}

const entryPoints = Object.fromEntries(
  [...Object.values(pkg.exports).map((e) => e.import), ...Object.values(pkg.bin)].map(entryOf),
);

/** Every dependency stays external except @bufbuild/protobuf (see the top). */
const EXTERNAL = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)]
  .filter((name) => name !== '@bufbuild/protobuf')
  .flatMap((name) => [name, `${name}/*`]);

rmSync('dist', { recursive: true, force: true });

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const declarations = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
if (declarations.status !== 0) process.exit(declarations.status ?? 1);

await build({
  entryPoints,
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: true,
  sourcesContent: true,
  logLevel: 'warning',
});
