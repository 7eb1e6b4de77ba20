// Soak test: runs every end-to-end test file (test/**/*.e2e.test.ts) many times in a row, to catch tests
// that fail for no reason. Each round runs every file once, each in its own process, one after another.
//
//   npm run test:soak                      # 20 rounds
//   npm run test:soak -- --runs 5          # 5 rounds
//   npm run test:soak -- --load            # while `npm test` runs beside it, over and over (a loaded machine)
//   npm run test:soak -- ring-hash         # only the files whose path contains "ring-hash"
//
// Prints one line per run, per-file pass/fail counts at the end and a final verdict line; the output of every
// failed run is kept in a log file named in that line. Exits non-zero when any run failed.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE_TEST_ARGS } from './node-test-args.mjs';
import { compiledTestFile, ensureTestBuild } from './test-build.mjs';
import { isEndToEnd, testFiles } from './test-files.mjs';

function usage(message) {
  console.error(`test:soak: ${message}\nusage: npm run test:soak -- [--runs N] [--load] [path-fragment ...]`);
  process.exit(2);
}

let runs = 20;
let load = false;
const filters = [];
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--runs') {
    runs = Number(args[++i]);
    if (!Number.isInteger(runs) || runs < 1) usage(`--runs needs a positive integer, got ${args[i]}`);
  } else if (a === '--load') load = true;
  else if (a.startsWith('-')) usage(`unknown option ${a}`);
  else filters.push(a);
}

const files = testFiles(filters).filter(isEndToEnd);
if (files.length === 0) usage('no end-to-end test file matched');
ensureTestBuild();

/** Runs one child to completion; resolves with its exit code and its combined output. */
function run(command, argv, options = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    current = child;
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    child.on('close', (code, signal) => resolve({ code: code ?? 1, signal, output }));
  });
}

// The load: `npm test` (build, typecheck, lint, every test) started again whenever it ends, in its own process
// group so that it can be ended as a whole when the soak is over.
let loadChild = null;
let loadRounds = 0;
let soaking = true;
function startLoad() {
  if (!soaking) return;
  loadChild = spawn('npm', ['test'], { stdio: 'ignore', detached: true });
  loadChild.on('close', () => {
    loadRounds++;
    loadChild = null;
    startLoad();
  });
}
function stopLoad() {
  soaking = false;
  if (!loadChild) return;
  try {
    process.kill(-loadChild.pid, 'SIGTERM');
  } catch {
    // It ended on its own between the check and the kill.
  }
}
if (load) startLoad();
// Interrupted: end the load and the running test file too, not only this process.
let current = null;
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    stopLoad();
    current?.kill('SIGTERM');
    process.exit(130);
  });

const FILE_LIMIT_MS = 5 * 60_000;
const logDir = mkdtempSync(join(tmpdir(), 'lbtree-soak-'));
const counts = new Map(files.map((f) => [f, { pass: 0, fail: 0, slowestMs: 0 }]));
const started = Date.now();
for (let round = 1; round <= runs; round++) {
  for (const file of files) {
    const t0 = Date.now();
    // A file that does not exit when its tests are done (a leaked handle) fails its run instead of the soak.
    const { code, signal, output } = await run(
      process.execPath,
      [...NODE_TEST_ARGS, compiledTestFile(file)],
      {
        timeout: FILE_LIMIT_MS,
      },
    );
    const ms = Date.now() - t0;
    const c = counts.get(file);
    c.slowestMs = Math.max(c.slowestMs, ms);
    if (code === 0) {
      c.pass++;
      console.log(`round ${round}/${runs}  pass  ${file}  ${ms} ms`);
    } else {
      c.fail++;
      const log = join(logDir, `${file.replaceAll('/', '_')}.round-${round}.log`);
      writeFileSync(log, output);
      console.log(
        `round ${round}/${runs}  FAIL  ${file}  ${ms} ms  (exit ${code}${signal ? ` ${signal}` : ''}; ${log})`,
      );
    }
  }
}
stopLoad();

console.log('');
const width = Math.max(...files.map((f) => f.length));
for (const [file, c] of counts)
  console.log(`${file.padEnd(width)}  ${c.pass} passed  ${c.fail} failed  slowest ${c.slowestMs} ms`);
const failed = [...counts.values()].reduce((n, c) => n + c.fail, 0);
const total = files.length * runs;
const minutes = ((Date.now() - started) / 60_000).toFixed(1);
const loadNote = load ? `, with \`npm test\` beside it (${loadRounds} complete runs)` : '';
console.log(
  `soak: ${total - failed}/${total} runs passed, ${failed} failed (${files.length} files × ${runs} rounds${loadNote}, ${minutes} min)`,
);
process.exit(failed === 0 ? 0 : 1);
