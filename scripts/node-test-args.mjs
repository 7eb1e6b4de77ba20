// How every test file runs: Node's built-in runner through tsx. A test stuck on a real socket fails after a
// minute instead of hanging CI, and a test file whose process would not exit (a leaked handle) is ended when
// its tests are done. Shared by run-tests.mjs (npm test) and soak.mjs (npm run test:soak).
export const NODE_TEST_ARGS = [
  '--import',
  'tsx',
  '--test',
  '--test-reporter=spec',
  '--test-timeout=60000',
  '--test-force-exit',
];
