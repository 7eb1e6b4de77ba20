/**
 * EDS decoding: one ClusterLoadAssignment of 10,000 endpoints (100 localities in 2 priorities, each endpoint
 * with an additional address, a weight and a health status), encoded once; then, on the same bytes:
 *   - lbtree: @bufbuild/protobuf's generated ClusterLoadAssignment (`decodeClusterLoadAssignment`), and that
 *     plus lbtree's A27 / A61 validation (`parseClusterLoadAssignment`: addresses, duplicates, priorities) —
 *     the reference path; and what lbtree's XdsClient runs, the EDS resource type's decode, whose wire fast
 *     path (src/xds/resources/cluster-load-assignment-wire.ts) reads the bytes straight into the validated
 *     endpoint list (issue 25 §5's goal: that ≤ grpc-js-xds's decode alone);
 *   - @grpc/grpc-js-xds's path: the protobufjs Root that @grpc/proto-loader builds from the same Envoy protos
 *     (grpc-js-xds's own `loadProtosWithOptionsSync` call and include dirs), `decode` then `toObject` with
 *     grpc-js-xds's options, as its `decodeSingleResource` does, and that plus grpc-js-xds's own validation
 *     (`EndpointResourceType.validateResource`, which its EDS `decode` runs next: addresses, duplicates,
 *     localities, priorities), so that the decode + validate row compares the same job on both sides;
 *   - the hand-written codec lbtree used before (src/xds/proto/{wire,codec,messages}.ts), checked out of git
 *     history into a temporary directory for this comparison only (rather than keeping 1,700 lines of dead
 *     code in bench/); skipped with a note when git or that commit is not available.
 * Each figure is the median of several runs after warm-up, in ms; the runs of the compared functions are
 * interleaved, so that the machine's load moves them alike.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
// Loaded first for its side effect: grpc-js-xds's resources module parses Envoy protos when it loads, and finds
// google/protobuf/descriptor.proto only once proto-loader has registered the well-known protos.
import '@grpc/proto-loader';
import { EndpointResourceType } from '@grpc/grpc-js-xds/build/src/xds-resource-type/endpoint-resource-type.js';
import { loadProtosWithOptionsSync } from '@grpc/proto-loader/build/src/util.js';
import {
  decodeClusterLoadAssignment,
  encodeClusterLoadAssignment,
  parseClusterLoadAssignment,
} from 'lbtree/xds';
import { endpointResourceType } from '../src/xds/resources/endpoint.js';
import { resolveXdsOptions } from '../src/xds/resources/xds-options.js';
import { median, ms, printRow, printTableHeader } from './report.js';

const ENDPOINTS = 10_000;
const LOCALITIES = 100;
const RUNS = 15;
/** The last main commit with the hand-written codec (before the switch to generated code). */
const OLD_CODEC_COMMIT = 'de07791';
const OLD_CODEC_FILES = ['wire.ts', 'codec.ts', 'messages.ts'];

function assignmentJson(): unknown {
  const perLocality = ENDPOINTS / LOCALITIES;
  return {
    clusterName: 'bench',
    endpoints: Array.from({ length: LOCALITIES }, (_, l) => ({
      locality: { region: 'r', zone: `z${l}`, subZone: 's' },
      loadBalancingWeight: 1 + (l % 3),
      priority: l < LOCALITIES / 2 ? 0 : 1,
      lbEndpoints: Array.from({ length: perLocality }, (_, i) => {
        const n = l * perLocality + i;
        return {
          endpoint: {
            address: {
              socketAddress: { address: `10.${n >> 16}.${(n >> 8) & 255}.${n & 255}`, portValue: 8080 },
            },
            additionalAddresses: [
              { address: { socketAddress: { address: `fd00::${n.toString(16)}`, portValue: 8080 } } },
            ],
          },
          healthStatus: 'HEALTHY',
          loadBalancingWeight: 1 + (n % 5),
        };
      }),
    })),
  };
}

function grpcJsXdsDecoder(): (bytes: Uint8Array) => unknown {
  const require = createRequire(import.meta.url);
  const deps = join(dirname(require.resolve('@grpc/grpc-js-xds/package.json')), 'deps');
  const root = loadProtosWithOptionsSync(['envoy/config/endpoint/v3/endpoint.proto'], {
    keepCase: true,
    includeDirs: ['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => join(deps, d)),
  });
  const type = root.lookupType('envoy.config.endpoint.v3.ClusterLoadAssignment');
  const options = { longs: String, enums: String, defaults: true, oneofs: true };
  return (bytes) => type.toObject(type.decode(bytes), options);
}

/**
 * grpc-js-xds's EDS validation of a decoded ClusterLoadAssignment; throws on what it rejects. Its typings mark
 * the method private; its `decode` calls it after decoding (and after building a JSON trace string of the
 * whole message, which is not counted here).
 */
const grpcJsXdsEndpointType = EndpointResourceType.get() as unknown as {
  validateResource(message: unknown): { valid: boolean; errors?: string[] };
};
function grpcJsXdsValidate(message: unknown): void {
  const result = grpcJsXdsEndpointType.validateResource(message);
  if (!result.valid) throw new Error(`eds-decode: grpc-js-xds rejected the assignment: ${result.errors}`);
}

/** The old codec's decode of a ClusterLoadAssignment, from git history; undefined (with why) if unavailable. */
async function oldCodecDecoder(): Promise<((bytes: Uint8Array) => unknown) | string> {
  const dir = join(mkdtempSync(join(tmpdir(), 'lbtree-old-codec-')), 'proto');
  mkdirSync(dir);
  try {
    for (const file of OLD_CODEC_FILES) {
      const text = execFileSync('git', ['show', `${OLD_CODEC_COMMIT}:src/xds/proto/${file}`], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      writeFileSync(join(dir, file), text);
    }
  } catch {
    return `skipped: git history with commit ${OLD_CODEC_COMMIT} is not available`;
  }
  const codec = await import(pathToFileURL(join(dir, 'codec.ts')).href);
  const messages = await import(pathToFileURL(join(dir, 'messages.ts')).href);
  return (bytes) => codec.decodeMessage(messages.ClusterLoadAssignment, bytes);
}

/** The median time of each function, their runs interleaved (after 3 warm-up runs of each). */
function measure(fns: readonly (() => unknown)[]): number[] {
  for (let i = 0; i < 3; i++) for (const fn of fns) fn();
  const times = fns.map(() => [] as number[]);
  for (let run = 0; run < RUNS; run++) {
    for (let i = 0; i < fns.length; i++) times[i]!.push(ms(() => fns[i]!()));
  }
  return times.map(median);
}

export async function runEdsDecodeBench(): Promise<void> {
  const bytes = encodeClusterLoadAssignment(assignmentJson());
  const grpcJsXds = grpcJsXdsDecoder();
  const old = await oldCodecDecoder();

  // The three decoders agree on what they read (endpoint count), so the figures compare the same work.
  const count = (cla: { endpoints: { lbEndpoints?: unknown[]; lb_endpoints?: unknown[] }[] }) =>
    cla.endpoints.reduce((n, l) => n + (l.lbEndpoints ?? l.lb_endpoints ?? []).length, 0);
  const decoded = decodeClusterLoadAssignment(bytes);
  if (count(decoded) !== ENDPOINTS || count(grpcJsXds(bytes) as never) !== ENDPOINTS) {
    throw new Error('eds-decode: the decoders disagree on the endpoint count');
  }
  if (typeof old !== 'string' && count(old(bytes) as never) !== ENDPOINTS) {
    throw new Error('eds-decode: the old codec disagrees on the endpoint count');
  }
  grpcJsXdsValidate(grpcJsXds(bytes));
  const validated = parseClusterLoadAssignment(decoded);
  const kept = validated.priorities.flat().reduce((n, l) => n + l.endpoints.length, 0);
  if (kept !== ENDPOINTS) throw new Error(`eds-decode: validation kept ${kept} endpoints`);

  const options = resolveXdsOptions();
  const resourceType = () => {
    const result = endpointResourceType.decode(bytes, options);
    if (!result.ok) throw new Error(`eds-decode: NACK ${result.error}`);
    return result;
  };
  const fast = resourceType().value;
  if (fast.priorities.flat().reduce((n, l) => n + l.endpoints.length, 0) !== ENDPOINTS) {
    throw new Error('eds-decode: the resource type kept another endpoint count');
  }
  const [ours, oursValidated, oursResourceType, theirs, theirsValidated] = measure([
    () => decodeClusterLoadAssignment(bytes),
    () => parseClusterLoadAssignment(decodeClusterLoadAssignment(bytes)),
    resourceType,
    () => grpcJsXds(bytes),
    () => grpcJsXdsValidate(grpcJsXds(bytes)),
  ]) as [number, number, number, number, number];

  printTableHeader(
    `EDS decode: a ClusterLoadAssignment of ${ENDPOINTS.toLocaleString('en')} endpoints (${bytes.length.toLocaleString('en')} bytes)`,
    '@grpc/grpc-js-xds (proto-loader)',
  );
  printRow('decode', ours, theirs, 'ms');
  printRow(
    "decode + validate (both: each library's own EDS validation; lbtree's reference path)",
    oursValidated,
    theirsValidated,
    'ms',
  );
  printRow(
    "decode + validate, the EDS resource type's wire fast path (lbtree's XdsClient) / their decode + validate",
    oursResourceType,
    theirsValidated,
    'ms',
  );
  printRow(
    "decode + validate, the EDS resource type's wire fast path / their decode alone (the goal: ≤ 1)",
    oursResourceType,
    theirs,
    'ms',
  );
  if (typeof old === 'string') {
    console.log(`\nold hand-written codec: ${old}`);
    return;
  }
  const [before] = measure([() => old(bytes)]) as [number];
  printTableHeader('EDS decode: the generated code against the old hand-written codec', 'old codec');
  printRow('decode', ours, before, 'ms');
}
