// Runs every test/**/*.test.ts with Node's built-in runner through tsx. Node 20's --test takes no globs,
// so the file list is gathered here. Extra arguments (e.g. a path filter) narrow the set.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { NODE_TEST_ARGS } from './node-test-args.mjs';

function find(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return find(path);
    return d.name.endsWith('.test.ts') ? [path] : [];
  });
}

const filters = process.argv.slice(2);
const files = find('test')
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const result = spawnSync(process.execPath, [...NODE_TEST_ARGS, ...files], {
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
