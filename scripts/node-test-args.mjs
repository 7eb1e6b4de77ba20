// How every test file runs: Node's built-in runner on the compiled tests (scripts/test-build.mjs). Stacks name
// the .js lines (source maps cost every process ~0.15 s of CPU; NODE_OPTIONS=--enable-source-maps maps them to
// the .ts lines). A test stuck on a real socket fails after three minutes (a file that
// starts grpc-js-xds and the control plane needs over a minute on a loaded 2-core machine) instead of hanging
// CI, and a test file whose process would not exit (a leaked handle) is ended when its tests are done. Shared
// by run-tests.mjs (npm test) and soak.mjs (npm run test:soak).
export const NODE_TEST_ARGS = [
  '--test',
  '--test-reporter=spec',
  '--test-timeout=180000',
  '--test-force-exit',
];
