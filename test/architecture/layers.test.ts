import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { chainTo, type Import, importClosure, importsOf, sourceFiles } from './import-graph.js';

// The layer table (docs/architecture.md, "Folders are layers": an import may only point down), checked on
// every import of every src/**/*.ts file. A layer may always import itself. A failure names the file, the
// import and the row it breaks; fix the import (or move the shared piece down a layer) rather than the row.

/** Every layer, named as the paths it covers. */
const CORE = 'src/core';
const PROTOS = 'src/protos'; // decode, proto3 JSON, the type registry and the type-URL table
const PROTOS_GEN = 'src/protos/gen'; // the generated messages
const HASH = 'src/hash';
const SIM = 'src/sim';
const SIM_ENTRY = 'src/sim/index.ts';
const POLICIES = 'src/policies'; // policies/shared included
const XDS_CLIENT = 'src/xds/client';
const XDS_RESOURCES = 'src/xds/resources';
const XDS_ROOT = 'src/xds/*.ts'; // the contracts: call attributes, XdsConfig, attribute keys, policy names
const XDS_RESOLVER = 'src/xds/resolver';
const XDS_BALANCER = 'src/xds/balancer';
const XDS_LRS = 'src/xds/lrs';
const XDS_ENTRY = 'src/xds/index.ts';
const GRPC_JS = 'src/grpc-js';
const CONTROL_PLANE = 'src/control-plane';
const CLI = 'src/cli';
const RECORDER = 'src/recorder';
const METRICS = 'src/metrics'; // the OpenTelemetry stats plugin (A79)
const ADMIN = 'src/admin';
const ROOT_ENTRY = 'src/index.ts';

function layerOf(file: string): string | undefined {
  if (file === ROOT_ENTRY || file === SIM_ENTRY || file === XDS_ENTRY) return file;
  const [src, top, sub] = file.split('/');
  if (src !== 'src' || top === undefined || sub === undefined) return undefined;
  if (top === 'xds') return sub.endsWith('.ts') ? XDS_ROOT : `src/xds/${sub}`;
  if (top === 'protos' && sub === 'gen') return PROTOS_GEN;
  return `src/${top}`;
}

/** A layer a row allows, narrowed: only some of its files, or only `import type` (a contract's shape). */
interface Narrowed {
  readonly layer: string;
  readonly files?: readonly string[];
  readonly typeOnly?: true;
}
type Allowed = string | Narrowed;

const ALL_PROTOS = [PROTOS, PROTOS_GEN];
const ALL_XDS = [XDS_CLIENT, XDS_RESOURCES, XDS_ROOT, XDS_RESOLVER, XDS_BALANCER, XDS_LRS, XDS_ENTRY];
const EVERYTHING = 'everything';

const MAY_IMPORT: Record<string, readonly Allowed[] | typeof EVERYTHING> = {
  [CORE]: [],
  [PROTOS]: [PROTOS_GEN],
  [PROTOS_GEN]: [],
  [HASH]: [CORE],
  [SIM]: [CORE],
  // The simulator's public entry registers every policy, the xDS ones included; the engine uses core only.
  [SIM_ENTRY]: [CORE, SIM, POLICIES, XDS_BALANCER],
  [POLICIES]: [CORE, HASH],
  // The ADS client decodes through an opaque per-type decoder: no resource semantics, no LB policy.
  [XDS_CLIENT]: [CORE, ...ALL_PROTOS],
  [XDS_RESOURCES]: [
    CORE,
    ...ALL_PROTOS,
    HASH,
    // Each resource type implements the client's XdsResourceType contract.
    { layer: XDS_CLIENT, typeOnly: true },
    // A52: a converted LB policy config is validated against the gRPC registry.
    { layer: POLICIES, files: ['src/policies/default-registry.ts'] },
  ],
  [XDS_ROOT]: [CORE, XDS_RESOURCES],
  [XDS_RESOLVER]: [CORE, HASH, ...ALL_PROTOS, XDS_ROOT, XDS_RESOURCES, XDS_CLIENT],
  [XDS_BALANCER]: [CORE, POLICIES, HASH, ...ALL_PROTOS, XDS_ROOT, XDS_RESOURCES],
  // Load reporting: the LRS stream over the client's transport, reporting the load stores of the xDS root.
  [XDS_LRS]: [CORE, ...ALL_PROTOS, XDS_ROOT, XDS_CLIENT],
  [XDS_ENTRY]: [CORE, POLICIES, HASH, ...ALL_PROTOS, ...ALL_XDS],
  [GRPC_JS]: [CORE, POLICIES, HASH, ...ALL_PROTOS, ...ALL_XDS, RECORDER, METRICS],
  [RECORDER]: [CORE],
  [METRICS]: [CORE],
  [CONTROL_PLANE]: [CORE, ...ALL_PROTOS, XDS_RESOURCES, XDS_CLIENT],
  [CLI]: EVERYTHING,
  // The live view reads the adapter's channel registry (which loads no grpc-js), the shapes of the xDS client's
  // dump and of the XdsConfig.
  [ADMIN]: [
    CORE,
    PROTOS,
    { layer: GRPC_JS, files: ['src/grpc-js/channel-registry.ts'] },
    { layer: XDS_CLIENT, typeOnly: true },
    { layer: XDS_ROOT, typeOnly: true },
    { layer: METRICS, typeOnly: true },
  ],
  [ROOT_ENTRY]: [CORE, HASH, POLICIES, METRICS],
};

/** The only layers that may load @grpc/grpc-js (an optional peer) and @grpc/grpc-js-xds. */
const GRPC_PACKAGES = ['@grpc/grpc-js', '@grpc/grpc-js-xds'];
const MAY_IMPORT_GRPC = [GRPC_JS, CONTROL_PLANE, CLI];

// Known violations waiting for a fix (none now). An entry that no longer occurs fails the test.
const PENDING: readonly { from: string; to: string; why: string }[] = [];

const files = sourceFiles('src');
const computed: string[] = [];
const imports = new Map(files.map((file) => [file, importsOf(file, computed)]));
const all = [...imports.values()].flat();
const where = (i: Import) => `${i.from}:${i.line} imports '${i.specifier}'`;

function allows(allowed: Allowed, to: string, i: Import): boolean {
  if (typeof allowed === 'string') return allowed === to;
  return (
    allowed.layer === to &&
    (allowed.files === undefined || allowed.files.includes(i.target!)) &&
    (allowed.typeOnly === undefined || i.typeOnly)
  );
}

function describeRow(row: readonly Allowed[]): string {
  if (row.length === 0) return 'nothing outside itself';
  return row
    .map((a) =>
      typeof a === 'string'
        ? a
        : `${a.layer} (${a.typeOnly ? 'import type only' : `only ${a.files!.join(', ')}`})`,
    )
    .join(', ');
}

test('the layer table has a row for every folder of src/', () => {
  const unplaced = files.filter((f) => {
    const layer = layerOf(f);
    return layer === undefined || !(layer in MAY_IMPORT);
  });
  assert.deepEqual(unplaced, [], 'add a row for each new folder (ARCHITECTURE.md says what it may import)');
  assert.ok(files.length > 200, `src/ is read (${files.length} files)`);
  assert.ok(all.length > 500, `imports are read (${all.length})`);
});

/** Why `i` breaks the layer table, or undefined when its row allows it. */
function violation(i: Import): string | undefined {
  if (i.target === undefined) return undefined;
  const from = layerOf(i.from)!;
  const to = layerOf(i.target);
  if (to === undefined) return `${where(i)}: ${i.target} is outside src/ (the package ships dist/ only)`;
  const row = MAY_IMPORT[from]!;
  if (to === from || row === EVERYTHING || row.some((a) => allows(a, to, i))) return undefined;
  return `${where(i)} (${to}${i.typeOnly ? ', type only' : ''}): ${from} may import ${describeRow(row)}`;
}

test('each layer imports only the layers its row allows (docs/architecture.md "Folders are layers")', () => {
  const problems: string[] = [];
  const pendingSeen = new Set<string>();
  for (const i of all) {
    const problem = violation(i);
    if (problem === undefined) continue;
    const pending = PENDING.find((p) => p.from === i.from && p.to === i.target);
    if (pending) pendingSeen.add(`${pending.from} → ${pending.to}`);
    else problems.push(problem);
  }
  const stale = PENDING.map((p) => `${p.from} → ${p.to}`).filter((p) => !pendingSeen.has(p));
  assert.deepEqual(problems, [], 'imports that break the layer table');
  assert.deepEqual(stale, [], 'PENDING entries that no longer occur: remove them');
});

test('the rules tell an allowed import from a forbidden one, narrowed rows included', () => {
  const at = (from: string, target: string, typeOnly = false): Import => ({
    from,
    specifier: target,
    target,
    typeOnly,
    line: 1,
  });
  const resource = 'src/xds/resources/listener.ts';
  assert.equal(violation(at('src/policies/priority/priority.ts', 'src/hash/xxh64.ts')), undefined);
  assert.match(
    violation(at('src/policies/priority/priority.ts', 'src/xds/xds-config.ts')) ?? '',
    /src\/policies may import src\/core, src\/hash$/,
  );
  assert.equal(violation(at(resource, 'src/xds/client/resource-type.ts', true)), undefined);
  assert.match(violation(at(resource, 'src/xds/client/resource-type.ts')) ?? '', /import type only/);
  assert.equal(violation(at(resource, 'src/policies/default-registry.ts')), undefined);
  assert.match(
    violation(at(resource, 'src/policies/index.ts')) ?? '',
    /only src\/policies\/default-registry\.ts/,
  );
  assert.equal(violation(at('src/sim/index.ts', 'src/policies/index.ts')), undefined);
  assert.match(
    violation(at('src/sim/simulation.ts', 'src/policies/index.ts')) ?? '',
    /src\/sim may import src\/core$/,
  );
  assert.match(
    violation(at('src/protos/gen/a_pb.ts', 'src/protos/decode.ts')) ?? '',
    /nothing outside itself/,
  );
  assert.equal(violation(at('src/cli/main.ts', 'src/xds/balancer/cds.ts')), undefined);
});

test('the generated protos import only each other and @bufbuild/protobuf', () => {
  const problems = all
    .filter((i) => layerOf(i.from) === PROTOS_GEN)
    .filter((i) =>
      i.target === undefined
        ? !/^@bufbuild\/protobuf(\/|$)/.test(i.specifier)
        : layerOf(i.target) !== PROTOS_GEN,
    )
    .map(where);
  assert.deepEqual(problems, []);
});

test('only the grpc-js adapter, the control plane and the CLI import @grpc/grpc-js or @grpc/grpc-js-xds', () => {
  const problems = all
    .filter((i) => GRPC_PACKAGES.includes(packageName(i.specifier)))
    .filter((i) => !MAY_IMPORT_GRPC.includes(layerOf(i.from)!))
    .map((i) => `${where(i)}: only ${MAY_IMPORT_GRPC.join(', ')} may`);
  assert.deepEqual(problems, []);
  assert.ok(
    all.some((i) => i.from.startsWith(`${GRPC_JS}/`) && packageName(i.specifier) === '@grpc/grpc-js'),
    'the check sees the adapter import @grpc/grpc-js',
  );
});

test('src/ imports only node: builtins and packages the package.json declares for users', () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as Record<string, Record<string, string>>;
  const declared = new Set([
    ...Object.keys(pkg.dependencies ?? {}),
    ...Object.keys(pkg.peerDependencies ?? {}),
  ]);
  const problems = all
    .filter((i) => i.target === undefined && !i.specifier.startsWith('node:'))
    .filter((i) => !declared.has(packageName(i.specifier)))
    .map(
      (i) =>
        `${where(i)}: not in dependencies or peerDependencies (a devDependency is not installed for users)`,
    );
  assert.deepEqual(problems, []);
});

test('every dynamic import() in src/ names its module literally, so the layer rules can check it', () => {
  assert.deepEqual(computed, []);
});

test('the xDS client loads no LB policy: nothing under src/policies is in the import closure of src/xds/client/index.ts', () => {
  const closure = importClosure('src/xds/client/index.ts', imports);
  const policies = [...closure.keys()]
    .filter((f) => f.startsWith(`${POLICIES}/`))
    .map((f) => chainTo(f, closure));
  assert.deepEqual(policies, []);
  // The walk does follow imports: the client reaches core and the type-URL table.
  assert.ok(closure.has('src/core/index.ts') && closure.has('src/protos/type-urls.ts'));
});

/** `@grpc/grpc-js/build/x` → `@grpc/grpc-js`; `yaml` → `yaml`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}
