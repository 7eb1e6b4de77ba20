import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

// The installed `lbtree` command where @grpc/grpc-js (an optional peer) is NOT installed: the built package
// and its runtime dependencies copied into a fresh node_modules outside the repository, with nothing that
// could resolve @grpc/grpc-js. `--help` and `simulate` must work; `demo` must say what to install.
const built = existsSync('dist/cli/main.js');

describe('lbtree installed without @grpc/grpc-js (an optional peer dependency)', {
  skip: !built && 'dist/ not built',
}, () => {
  let dir = '';
  let main = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'lbtree-no-grpc-'));
    const pkg = join(dir, 'node_modules', 'lbtree');
    cpSync('dist', join(pkg, 'dist'), { recursive: true });
    cpSync('package.json', join(pkg, 'package.json'));
    // Runtime dependencies and theirs, copied (not linked: a link would resolve back into this repository).
    const copy = (name: string): void => {
      const target = join(dir, 'node_modules', name);
      if (existsSync(target)) return;
      cpSync(join('node_modules', name), target, { recursive: true, dereference: true });
      const deps = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')).dependencies ?? {};
      for (const dep of Object.keys(deps)) copy(dep);
    };
    for (const dep of Object.keys(JSON.parse(readFileSync('package.json', 'utf8')).dependencies)) copy(dep);
    main = join(pkg, 'dist', 'cli', 'main.js');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const lbtree = (...args: string[]) =>
    spawnSync(process.execPath, [main, ...args], {
      encoding: 'utf8',
      env: { ...process.env, NODE_PATH: '', NODE_OPTIONS: '' },
    });

  test('@grpc/grpc-js really cannot be resolved from the installed package', () => {
    const require = createRequire(main);
    assert.throws(() => require.resolve('@grpc/grpc-js'), { code: 'MODULE_NOT_FOUND' });
    assert.ok(require.resolve('re2js'), 'its own dependencies resolve');
  });

  test('lbtree --help works', () => {
    const r = lbtree('--help');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /lbtree simulate --cluster FILE/);
  });

  test('lbtree --version prints the installed package’s version', () => {
    const r = lbtree('--version');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${JSON.parse(readFileSync('package.json', 'utf8')).version}\n`);
  });

  test('lbtree simulate runs an example', () => {
    const r = lbtree(
      'simulate',
      '--cluster',
      'examples/simulate/cluster-wrr-locality.yaml',
      '--endpoints',
      'examples/simulate/endpoints-two-priorities.yaml',
      '--scenario',
      'examples/simulate/scenario-zone-outage.yaml',
    );
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /priority/);
  });

  test('lbtree demo and lbtree control-plane say what to install, without a stack trace', () => {
    for (const [command, ...args] of [
      ['demo', '--plain'],
      ['control-plane', '--resources', 'examples/control-plane/resources.yaml'],
    ]) {
      const r = lbtree(command!, ...args);
      assert.equal(r.status, 1, `${command}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`lbtree ${command} needs @grpc/grpc-js`));
      assert.match(r.stderr, /npm install @grpc\/grpc-js/);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    }
  });
});
