// How every test file runs: Node's built-in runner on the compiled tests (scripts/test-build.mjs). Stacks name
// the .js lines (source maps cost every process ~0.15 s of CPU; NODE_OPTIONS=--enable-source-maps maps them to
// the .ts lines). A test stuck on a real socket fails after three minutes (a file that starts grpc-js-xds and
// the control plane needs over a minute on a loaded 2-core machine) instead of hanging CI. Shared by
// run-tests.mjs (npm test) and soak.mjs (npm run test:soak).
//
// No --test-force-exit: with several files at once it ends a file's process before the runner has read all of
// its results (nodejs/node#64833), and the run then reports fewer tests than ran and still exits 0 (here: 31 of
// priority.test's 44, about one run in twenty on a loaded machine). A file that does not exit when its tests
// are done is caught by run-tests.mjs's time limit instead.
export const NODE_TEST_ARGS = ['--test', '--test-reporter=spec', '--test-timeout=180000'];
