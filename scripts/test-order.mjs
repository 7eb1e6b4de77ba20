// The order run-tests.mjs hands test files to the runner, which starts them in that order, a few at a time:
// longest first, by the durations the last runs recorded (.build/test-durations.json). Otherwise the slowest
// end-to-end file, last in alphabetical order, starts when the others are done and runs alone at the end.
// Files with no record yet (a new file, a clean clone) go first, in alphabetical order. The runner records a
// test under the module that declares it, so an entry file that only imports `./x.e2e.js` modules (several
// suites sharing one process) counts their durations as its own.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BUILD_DIR } from './test-build.mjs';

const RECORD = join(BUILD_DIR, 'test-durations.json');
/** Where this run's reporter writes (scripts/durations-reporter.mjs); merged into RECORD after the run. */
export const RUN_DURATIONS = join(BUILD_DIR, 'test-durations.run.json');

function read(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return {};
  }
}

/** The recorded milliseconds of `file` and of the sibling suites it imports; undefined when none is recorded. */
function recorded(ms, file) {
  const suites = [...readFileSync(file, 'utf8').matchAll(/^import '\.\/([^']+)\.js';$/gm)].map((m) =>
    join(dirname(file), `${m[1]}.ts`),
  );
  const parts = [file, ...suites].map((f) => ms[f]).filter((v) => typeof v === 'number');
  return parts.length === 0 ? undefined : parts.reduce((a, b) => a + b, 0);
}

/**
 * `files` (sorted), longest recorded first; unrecorded files keep their order, ahead of the rest. `ms`: the
 * recorded milliseconds per file (default: the last runs' record).
 */
export function longestFirst(files, ms = read(RECORD)) {
  const weight = new Map(files.map((f) => [f, recorded(ms, f)]));
  const known = (f) => weight.get(f) !== undefined;
  return [
    ...files.filter((f) => !known(f)),
    ...files.filter(known).sort((a, b) => weight.get(b) - weight.get(a)),
  ];
}

/** Merges this run's durations into the record (files not run keep theirs). */
export function recordDurations() {
  if (!existsSync(RUN_DURATIONS)) return;
  const merged = { ...read(RECORD), ...read(RUN_DURATIONS) };
  writeFileSync(RECORD, `${JSON.stringify(merged, null, 1)}\n`);
  rmSync(RUN_DURATIONS);
}
