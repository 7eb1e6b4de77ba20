// The test files, found the same way by run-tests.mjs (npm test) and soak.mjs (npm run test:soak): every
// test/**/*.test.ts, narrowed to the paths containing one of the given fragments (all when none is given).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return find(path);
    return d.name.endsWith('.test.ts') ? [path] : [];
  });
}

export function testFiles(fragments = []) {
  return find('test')
    .filter((f) => fragments.length === 0 || fragments.some((x) => f.includes(x)))
    .sort();
}

/** End-to-end files (real servers, real channels, child processes): `*.e2e.test.ts` anywhere under test/. */
export const isEndToEnd = (file) => file.endsWith('.e2e.test.ts');
