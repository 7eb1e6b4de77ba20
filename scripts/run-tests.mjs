// Runs every test/**/*.test.ts with Node's built-in runner, compiled first (scripts/test-build.mjs). Node 20's
// --test takes no globs, so the file list is gathered here. Extra arguments (e.g. a path filter) narrow the set.
// Files start longest first (test-order.mjs), by the durations the last runs recorded.
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { NODE_TEST_ARGS } from './node-test-args.mjs';
import { compiledTestFile, ensureTestBuild } from './test-build.mjs';
import { isEndToEnd, testFiles } from './test-files.mjs';
import { longestFirst, RUN_DURATIONS, recordDurations } from './test-order.mjs';

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
  [
    ...NODE_TEST_ARGS,
    '--test-reporter-destination=stdout',
    '--test-reporter=./scripts/durations-reporter.mjs',
    `--test-reporter-destination=${RUN_DURATIONS}`,
    `--test-concurrency=${concurrency}`,
    ...longestFirst(files).map(compiledTestFile),
  ],
  { stdio: 'inherit', timeout: limitMin * 60_000, killSignal: 'SIGTERM' },
);
recordDurations();
if (result.error?.code === 'ETIMEDOUT') {
  console.error(
    `run-tests: ended after ${limitMin} min. A test file whose process does not exit when its tests are done ` +
      '(a leaked socket, server or timer) keeps a run alive: it is the file the output above has no result for.',
  );
  process.exit(1);
}
process.exit(result.status ?? 1);
