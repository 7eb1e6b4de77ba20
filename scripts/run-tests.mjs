// Runs every test/**/*.test.ts with Node's built-in runner, compiled first (scripts/test-build.mjs). Node 20's
// --test takes no globs, so the file list is gathered here. Extra arguments (e.g. a path filter) narrow the set.
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { NODE_TEST_ARGS } from './node-test-args.mjs';
import { compiledTestFile, ensureTestBuild } from './test-build.mjs';
import { isEndToEnd, testFiles } from './test-files.mjs';

const files = testFiles(process.argv.slice(2));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
ensureTestBuild();
// Node's default runs cores - 1 files at once: one at a time on a 2-core machine. End-to-end files mostly
// wait on sockets and timers, so a run of only those overlaps more of them; LBTREE_TEST_CONCURRENCY overrides.
const concurrency =
  Number(process.env.LBTREE_TEST_CONCURRENCY) ||
  (files.every(isEndToEnd) ? 4 : Math.max(2, availableParallelism()));
// A file whose process never exits (a leaked socket or timer) would hold the run forever: end it instead. A whole
// `npm test` takes about 2 minutes on an idle 2-core machine; LBTREE_TEST_TIME_LIMIT_MIN overrides.
const limitMin = Number(process.env.LBTREE_TEST_TIME_LIMIT_MIN) || 15;
const result = spawnSync(
  process.execPath,
  [...NODE_TEST_ARGS, `--test-concurrency=${concurrency}`, ...files.map(compiledTestFile)],
  { stdio: 'inherit', timeout: limitMin * 60_000, killSignal: 'SIGTERM' },
);
if (result.error?.code === 'ETIMEDOUT') {
  console.error(
    `run-tests: ended after ${limitMin} min. A test file whose process does not exit when its tests are done ` +
      '(a leaked socket, server or timer) keeps a run alive: it is the file the output above has no result for.',
  );
  process.exit(1);
}
process.exit(result.status ?? 1);
