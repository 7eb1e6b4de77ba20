// `npm run gen:protos`: generates @bufbuild/protobuf v2 code for the Envoy / xDS protos lbtree uses into
// src/protos/gen (committed, so users and CI need no generator).
//
// The .proto sources come from devDependencies that ship them: @grpc/grpc-js-xds's deps/ (envoy-api,
// googleapis, protoc-gen-validate, cncf xds + udpa) and @grpc/grpc-js's proto/xds (ORCA, which
// grpc-js-xds does not carry). They are staged into one temporary source root, compiled by buf into an
// image WITHOUT source info (so no comment of the .proto files is copied), and only the files listed
// below plus their transitive imports are generated. Well-known types come from @bufbuild/protobuf/wkt.
// Then scripts/share-descriptors.mjs gathers the file descriptors protoc-gen-es embedded in each file into
// src/protos/gen/descriptors.ts, one set per chunk (CHUNKS), each built into one registry on first use.
//
// The generator, protoc-gen-es, is not a devDependency: its releases since 2.14 ask for Node >= 22, so
// `npm ci` on Node 20 (lbtree's floor) warned EBADENGINE for a tool only this script uses. It is installed
// here, at the version that wrote the committed code (each generated file names it), into the staging folder.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative } from 'node:path';
import { shareDescriptors } from './share-descriptors.mjs';

const ROOTS = [
  'node_modules/@grpc/grpc-js-xds/deps/envoy-api',
  'node_modules/@grpc/grpc-js-xds/deps/googleapis',
  'node_modules/@grpc/grpc-js-xds/deps/xds',
  'node_modules/@grpc/grpc-js/proto/xds',
];
// protoc-gen-validate's deps folder also holds java/ and tests/ trees; only its validate/ is an import root.
const VALIDATE = 'node_modules/@grpc/grpc-js-xds/deps/protoc-gen-validate/validate';

// The files to generate, in chunks: each chunk's descriptors (its files and their imports not in an earlier chunk)
// are embedded together and built into one registry the first time one of its files is imported
// (src/protos/gen/descriptors.ts). lbtree/grpc-js loads ORCA at start-up, an `xds:` channel the `xds` chunk when
// it starts, and nothing on a channel's way to its first call needs the rest.
export const CHUNKS = [
  {
    name: 'orca',
    protos: ['xds/data/orca/v3/orca_load_report.proto', 'xds/service/orca/v3/orca.proto'],
  },
  {
    name: 'xds',
    protos: [
      // ADS / discovery, LRS
      'envoy/service/discovery/v3/discovery.proto',
      'envoy/service/load_stats/v3/lrs.proto',
      // resources
      'envoy/config/listener/v3/listener.proto',
      'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
      'envoy/extensions/filters/http/router/v3/router.proto',
      'envoy/config/route/v3/route.proto',
      'envoy/config/cluster/v3/cluster.proto',
      'envoy/config/cluster/v3/outlier_detection.proto',
      'envoy/config/cluster/v3/circuit_breaker.proto',
      'envoy/extensions/clusters/aggregate/v3/cluster.proto',
      'envoy/config/endpoint/v3/endpoint.proto',
      // load_balancing_policy extensions (A52)
      'envoy/extensions/load_balancing_policies/round_robin/v3/round_robin.proto',
      'envoy/extensions/load_balancing_policies/pick_first/v3/pick_first.proto',
      'envoy/extensions/load_balancing_policies/ring_hash/v3/ring_hash.proto',
      'envoy/extensions/load_balancing_policies/least_request/v3/least_request.proto',
      'envoy/extensions/load_balancing_policies/wrr_locality/v3/wrr_locality.proto',
      'envoy/extensions/load_balancing_policies/client_side_weighted_round_robin/v3/client_side_weighted_round_robin.proto',
      'envoy/extensions/load_balancing_policies/random_subsetting/v3/random_subsetting.proto', // staged: see below
      // TypedStruct (both), rpc.Status
      'xds/type/v3/typed_struct.proto',
      'udpa/type/v1/typed_struct.proto',
      'google/rpc/status.proto',
      // stateful session affinity (A55)
      'envoy/extensions/filters/http/stateful_session/v3/stateful_session.proto',
      'envoy/extensions/http/stateful_session/cookie/v3/cookie.proto',
      // xDS transport security (A29, A82): Cluster.transport_socket's UpstreamTlsContext
      'envoy/extensions/transport_sockets/tls/v3/tls.proto',
      'envoy/extensions/transport_sockets/tls/v3/common.proto',
      // fault injection (A33)
      'envoy/extensions/filters/http/fault/v3/fault.proto',
    ],
  },
  {
    name: 'rest',
    protos: [
      // the ADS service itself (lbtree's client names its method path), CSDS
      'envoy/service/discovery/v3/ads.proto',
      'envoy/service/status/v3/csds.proto',
      // not supported by gRPC, but what control planes send beside the others: known so they can be skipped
      'envoy/extensions/load_balancing_policies/maglev/v3/maglev.proto',
      'envoy/extensions/load_balancing_policies/random/v3/random.proto',
    ],
  },
];

export const WANTED = CHUNKS.flatMap((c) => c.protos);

export const PROTOC_GEN_ES = '@bufbuild/protoc-gen-es@2.17.0';

function run(command, args, env = process.env) {
  const result = spawnSync(command, args, { stdio: 'inherit', env });
  if (result.status !== 0)
    throw new Error(`gen-protos: ${command} ${args[0]} failed (exit ${result.status})`);
}

// The protoc-gen-validate copy shipped beside envoy-api predates StringRules.ignore_empty (field 26), which
// envoy/config/core/v3/protocol.proto already uses in its options; the staged copy gets that one field so
// buf can resolve the option. (The validation annotations themselves play no part in lbtree.)
function addStringRulesIgnoreEmpty(validateProto) {
  const text = readFileSync(validateProto, 'utf8');
  if (/\bignore_empty\s*=\s*26\b/.test(text)) return;
  const start = text.indexOf('message StringRules {');
  const end = text.slice(start).search(/\r?\n}\r?\n/) + start;
  if (start < 0 || end < start) throw new Error('gen-protos: StringRules not found in validate.proto');
  writeFileSync(
    validateProto,
    `${text.slice(0, end)}\n    optional bool ignore_empty = 26;${text.slice(end)}`,
  );
}

// The envoy-api copy shipped with @grpc/grpc-js-xds 1.14 predates ClientSideWeightedRoundRobin's field 7,
// `repeated string metric_names_for_computing_utilization` (upstream envoy has it; gRFC A114 reads it). The
// staged copy gets that one field, with upstream's number, name and type.
const CSWRR_PROTO =
  'envoy/extensions/load_balancing_policies/client_side_weighted_round_robin/v3/client_side_weighted_round_robin.proto';
function addMetricNamesForComputingUtilization(proto) {
  const text = readFileSync(proto, 'utf8');
  if (/\bmetric_names_for_computing_utilization\s*=\s*7\b/.test(text)) return;
  const start = text.indexOf('message ClientSideWeightedRoundRobin {');
  const end = text.slice(start).search(/\r?\n}\r?\n?/) + start;
  if (start < 0 || end < start) throw new Error('gen-protos: ClientSideWeightedRoundRobin not found');
  writeFileSync(
    proto,
    `${text.slice(0, end)}\n  repeated string metric_names_for_computing_utilization = 7;${text.slice(end)}`,
  );
}

// gRFC A68's RandomSubsetting message is in upstream envoy (random_subsetting/v3) but not in the envoy-api copy
// @grpc/grpc-js-xds 1.14 ships: the staged root gets it with upstream's package, fields, numbers and types
// (its protovalidate annotations left out: this tree has no buf/validate; lbtree validates in code).
const RANDOM_SUBSETTING_PROTO =
  'envoy/extensions/load_balancing_policies/random_subsetting/v3/random_subsetting.proto';
function addRandomSubsetting(root) {
  const path = join(root, RANDOM_SUBSETTING_PROTO);
  if (existsSync(path)) return;
  mkdirSync(dirname(path), { recursive: true });
  const lines = [
    'syntax = "proto3";',
    '',
    'package envoy.extensions.load_balancing_policies.random_subsetting.v3;',
    '',
    'import "envoy/config/cluster/v3/cluster.proto";',
    'import "google/protobuf/wrappers.proto";',
    '',
    'message RandomSubsetting {',
    '  google.protobuf.UInt32Value subset_size = 1;',
    '  config.cluster.v3.LoadBalancingPolicy child_policy = 2;',
    '}',
    '',
  ];
  writeFileSync(path, lines.join('\n'));
}

const OUT = 'src/protos/gen';

// src/protos/gen/files.ts lists every generated file descriptor and every well-known type they import, so
// src/protos/type-registry.ts can build one registry (Any, proto3 JSON "@type") without a hand-kept list.
function writeFileIndex({ files, wkt }) {
  const imports = files.map(
    (f) => `import { ${f.constName} } from './${relative(OUT, f.path).replace(/\.ts$/, '.js')}';`,
  );
  const lines = [
    '// @generated by scripts/gen-protos.mjs: every generated file and the well-known types they import.',
    "import type { GenFile } from '@bufbuild/protobuf/codegenv2';",
    `import { ${wkt.join(', ')} } from '@bufbuild/protobuf/wkt';`,
    ...imports,
    '',
    'export const generatedFiles: readonly GenFile[] = [',
    ...[...wkt, ...files.map((f) => f.constName)].map((n) => `  ${n},`),
    '];',
    '',
  ];
  writeFileSync(join(OUT, 'files.ts'), lines.join('\n'));
}

const stage = mkdtempSync(join(tmpdir(), 'lbtree-protos-'));
try {
  const root = join(stage, 'root');
  for (const dir of ROOTS) {
    if (!existsSync(dir)) throw new Error(`gen-protos: ${dir} is missing; run npm ci first`);
    cpSync(dir, root, { recursive: true, filter: (src) => !src.endsWith('LICENSE') });
  }
  cpSync(VALIDATE, join(root, 'validate'), { recursive: true });
  addStringRulesIgnoreEmpty(join(root, 'validate/validate.proto'));
  addMetricNamesForComputingUtilization(join(root, CSWRR_PROTO));
  addRandomSubsetting(root);
  const image = join(stage, 'image.binpb');
  const buf = 'node_modules/.bin/buf';
  run(buf, [
    'build',
    root,
    '--exclude-source-info',
    ...WANTED.flatMap((p) => ['--path', join(root, p)]),
    '-o',
    image,
  ]);
  const plugin = join(stage, 'plugin');
  run('npm', [
    'install',
    '--prefix',
    plugin,
    '--no-save',
    '--no-audit',
    '--no-fund',
    '--ignore-scripts',
    '--engine-strict=false',
    '--loglevel=error', // its EBADENGINE warning on Node 20: this version runs there (it wrote the committed code)
    PROTOC_GEN_ES,
  ]);
  // scripts/buf.gen.yaml names the plugin `protoc-gen-es`, found on PATH: the copy just installed.
  const path = `${join(plugin, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}`;
  run(buf, ['generate', image, '--template', 'scripts/buf.gen.yaml'], { ...process.env, PATH: path });
  writeFileIndex(shareDescriptors(OUT, CHUNKS));
  console.log(`gen-protos: generated ${WANTED.length} files and their imports into src/protos/gen`);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
