import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { sourceModule } from './support/child-node.js';
import { runRefusing } from './support/refused-modules.js';

// The package root is the documented public surface (docs/api.md), and it stays light: no regex engine.

const withoutRe2 = (script: string) => runRefusing(['re2js'], script);
/** Exits 4 when re2js is in the child's CommonJS cache: src/hash/re2.ts loads it there, on the first regex. */
const EXIT_IF_RE2_LOADED = `if (Object.keys((await import('node:module')).createRequire(process.cwd() + '/').cache)
  .some((p) => p.includes('re2js'))) process.exit(4);`;

test('importing the package root does not load RE2 (re2js); the first regex compiled does', () => {
  const root = withoutRe2(
    `const m = await import('${sourceModule('src/index.ts')}'); if (typeof m.Registry !== 'function') process.exit(3);
     ${EXIT_IF_RE2_LOADED}`,
  );
  assert.equal(root.status, 0, root.stderr);
  // The checks themselves work: an import of re2js fails under the hook, and a compiled regex is seen loaded.
  const imported = withoutRe2(`await import('re2js');`);
  assert.notEqual(imported.status, 0);
  assert.match(imported.stderr, /re2js was loaded/);
  const compiled = withoutRe2(
    `const m = await import('${sourceModule('src/hash/regex-rewrite.ts')}'); ${EXIT_IF_RE2_LOADED}
     new m.RegexRewrite('a+', 'b'); ${EXIT_IF_RE2_LOADED}`,
  );
  assert.equal(compiled.status, 4, compiled.stderr);
});

// The root's runtime names, pinned: a new public name is a decision about the API (docs/api.md), never the side
// effect of exporting something from a module. Types are named in src/index.ts the same way (no `export *`).
const ROOT_VALUES = [
  'ALL_POLICIES',
  'AttributeKey',
  'Attributes',
  'CONNECTING',
  'CONNECTION_ATTEMPT_DELAY_ARG',
  'Code',
  'ConfigError',
  'ConfigReader',
  'DEFAULT_CHOICE_COUNT',
  'DEFAULT_CONNECTION_ATTEMPT_DELAY_MS',
  'DEFAULT_MAX_RING_SIZE',
  'DEFAULT_MIN_RING_SIZE',
  'DEFAULT_PRIORITY_CHILD_RETENTION_MS',
  'DEFAULT_PRIORITY_FAILOVER_TIMEOUT_MS',
  'DEFAULT_RING_SIZE_CAP',
  'ENDPOINT_WEIGHT',
  'HASH_KEY',
  'HIERARCHICAL_PATH',
  'IDLE',
  'LEAST_REQUEST',
  'LOCALITY',
  'LOCALITY_WEIGHT',
  'LeastRequest',
  'METRIC_BACKEND_SERVICE',
  'METRIC_LOCALITY',
  'MAX_CHOICE_COUNT',
  'MAX_CONNECTION_ATTEMPT_DELAY_MS',
  'MAX_RING_SIZE_LIMIT',
  'MIN_CHOICE_COUNT',
  'MIN_CONNECTION_ATTEMPT_DELAY_MS',
  'NO_CHANNEL_ARGS',
  'OK_STATUS',
  'OUTLIER_DETECTION',
  'OUTLIER_DETECTION_DEFAULTS',
  'OutlierDetection',
  'PICK_FIRST',
  'POLICY_ALIASES',
  'PRIORITY',
  'PRIORITY_CHILD_POLICY_CACHE_ARG',
  'PRIORITY_CHILD_POLICY_CACHE_ENV',
  'PRIORITY_CHILD_RETENTION_ARG',
  'PRIORITY_FAILOVER_TIMEOUT_ARG',
  'PickFirst',
  'PriorityLb',
  'READY',
  'RING_HASH',
  'RING_SIZE_CAP_ARG',
  'ROUND_ROBIN',
  'Registry',
  'RingHash',
  'RoundRobin',
  'SHUTDOWN',
  'TRANSIENT_FAILURE',
  'WEIGHTED_TARGET',
  'WEIGHTED_TARGET_CHILD_RETENTION_MS',
  'WRR_LOCALITY',
  'WeightedTargetLb',
  'WrrLocality',
  'addGlobalMetrics',
  'addressKey',
  'buildRing',
  'childPath',
  'defaultRegistry',
  'endpoint',
  'endpointKey',
  'err',
  'forEachWatcher',
  'hasWatcher',
  'isUnixAddress',
  'isWatcherArray',
  'leastRequestFactory',
  'metricsRecorderFor',
  'ok',
  'outlierDetectionFactory',
  'parseAddress',
  'parseLeastRequestConfig',
  'parseOutlierDetectionConfig',
  'parsePickFirstConfig',
  'parsePriorityConfig',
  'parseRingHashConfig',
  'parseWeightedTargetConfig',
  'parseWrrLocalityConfig',
  'pickFirstFactory',
  'priorityFactory',
  'queuePicker',
  'realClock',
  'registerAllPolicies',
  'registeredInstruments',
  'registerPolicy',
  'ringHashFactory',
  'roundRobinFactory',
  'status',
  'tcpAddress',
  'unavailable',
  'unixAddress',
  'unwatchSubchannelHealth',
  'unwatchSubchannelState',
  'watchHealthWithListener',
  'watchStateWithListener',
  'watchSubchannelHealth',
  'watchSubchannelState',
  'weightedTargetFactory',
  'withWatcher',
  'withoutWatcher',
  'wrrLocalityFactory',
  'xxh64',
  'xxh64Into',
];

test('the root exports exactly its documented names: the LB API, the policies, the registries, XXH64', async () => {
  const root = await import('../src/index.js');
  assert.deepEqual(Object.keys(root).sort(), [...ROOT_VALUES].sort());
  assert.doesNotMatch(
    readFileSync('src/index.ts', 'utf8'),
    /^export \*/m,
    'src/index.ts names what it exports',
  );
  // What stays internal: policies' shared machinery, request hashing, and core's helpers and test counters.
  for (const name of [
    'EndpointChild',
    'EagerPetiole',
    'CallCounter',
    'EndpointList',
    'SnapshotArray',
    'RegexRewrite',
    'RequestHasher',
    'workMeter',
    'parseNested',
    'describeValue',
    'ExponentialBackoff',
    'HelperForwarder',
  ])
    assert.ok(!(name in root), `${name} is internal`);
});
