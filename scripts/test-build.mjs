// Tests run as compiled JavaScript from .build/ (tsconfig.test.json: src, test, bench, compiled together),
// not through tsx: loading tsx's hooks and transforming every module costs each test process about 1.5 s of
// CPU, which over the end-to-end files alone was half a minute. The compile is also the typecheck, so a
// type error fails the run. It is skipped when no source is newer than the last good compile.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const BUILD_DIR = '.build';
const STAMP = join(BUILD_DIR, '.compiled');
const INPUTS = ['src', 'test', 'bench'];
const CONFIGS = ['tsconfig.json', 'tsconfig.test.json', 'package-lock.json'];

function newestMtime(path) {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  let newest = s.mtimeMs; // a deleted or renamed file changes its directory's mtime
  for (const d of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, d)));
  return newest;
}

function upToDate() {
  if (!existsSync(STAMP)) return false;
  const built = statSync(STAMP).mtimeMs;
  return [...INPUTS, ...CONFIGS].every((p) => !existsSync(p) || newestMtime(p) <= built);
}

/** Compiles the tests if a source changed since the last good compile; exits the process on a type error. */
export function ensureTestBuild() {
  if (upToDate()) return;
  const started = Date.now();
  const tsc = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.test.json'], {
    stdio: 'inherit',
  });
  if (tsc.status !== 0) {
    console.error('tests not run: the TypeScript compile (tsconfig.test.json) failed');
    process.exit(tsc.status ?? 1);
  }
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  console.error(`compiled the tests into ${BUILD_DIR}/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** `test/x/y.test.ts` → `.build/test/x/y.test.js` */
export const compiledTestFile = (source) => join(BUILD_DIR, source.replace(/\.ts$/, '.js'));
