import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { anchorsOf, brokenLinks, headingAnchor, linkTargets } from './support/markdown-links.js';

// README.md links docs/*.md and examples/: they must ship with the package, or the links break where users
// read them (node_modules/lbtree, the registry page).

function packedFiles(): Set<string> {
  const pack = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8' });
  assert.equal(pack.status, 0, pack.stderr);
  return new Set((JSON.parse(pack.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path));
}

const markdown = () =>
  ['README.md', ...readdirSync('docs').map((name) => `docs/${name}`)]
    .filter((path) => path.endsWith('.md'))
    .map((path) => ({ path, text: readFileSync(path, 'utf8') }));

test('every relative link of README.md and docs/*.md names a packed file, and its anchor exists', () => {
  const shipped = packedFiles();
  const files = markdown();
  for (const file of files) assert.ok(shipped.has(file.path), `${file.path} is in the package`);
  assert.ok(
    files.some((f) => linkTargets(f.text).some((t) => t.startsWith('docs/'))),
    'README links docs',
  );
  assert.deepEqual(
    brokenLinks(files, shipped, (path) => readFileSync(path, 'utf8')),
    [],
  );
});

test('README keeps the quick-start commands', () => {
  const readme = readFileSync('README.md', 'utf8');
  assert.ok(readme.includes('npm ci && npm run demo'));
  assert.ok(readme.includes('npm test'));
});

test('the link check reports each kind of broken link, and only those', () => {
  const shipped = new Set(['README.md', 'docs/a.md', 'examples/x/y.yaml']);
  const docs = '# A\n\n## Channel settings (`grpc.x`)\n\n## Channel settings (`grpc.x`)\n';
  const readme = [
    '[ok](docs/a.md) [folder](examples/x/) [web](https://example.com) [anchor](docs/a.md#channel-settings-grpcx)',
    '[repeated heading](docs/a.md#channel-settings-grpcx-1) [self](#top)',
    '[missing](docs/b.md) [unpacked](src/index.ts) [outside](../x.md) [bad anchor](docs/a.md#nowhere)',
    '`[code](docs/c.md)`',
    '```ts',
    'list[0](docs/d.md)',
    '```',
    '# Top',
  ].join('\n');
  const problems = brokenLinks(
    [
      { path: 'README.md', text: readme },
      { path: 'docs/a.md', text: `${docs}[up](../README.md#top)` },
    ],
    shipped,
    (path) => (path === 'docs/a.md' ? docs : readme),
  );
  assert.deepEqual(problems, [
    'README.md: (docs/b.md): docs/b.md is not in the package',
    'README.md: (src/index.ts): src/index.ts is not in the package',
    'README.md: (../x.md) points outside the package',
    'README.md: (docs/a.md#nowhere): docs/a.md has no heading #nowhere',
  ]);
});

test('heading anchors are GitHub slugs', () => {
  assert.equal(
    headingAnchor('Connect storms (`npm run bench -- storm`)'),
    'connect-storms-npm-run-bench----storm',
  );
  assert.equal(
    headingAnchor('outlier_detection_experimental (gRFC A50)'),
    'outlier_detection_experimental-grfc-a50',
  );
  assert.equal(headingAnchor('ES modules, CommonJS and TypeScript'), 'es-modules-commonjs-and-typescript');
  assert.deepEqual([...anchorsOf('# x\n## x\n```\n# not a heading\n```\n')], ['x', 'x-1']);
});
