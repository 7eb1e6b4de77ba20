// The generated protos take their file descriptors from src/protos/gen/descriptors.ts (scripts/share-descriptors.mjs):
// one embedded FileDescriptorSet per chunk, built into one registry the first time a file of the chunk is imported,
// instead of protoc-gen-es's per-file `fileDesc`, which rebuilt a file's whole import closure for every file.
// Field by field against the official .proto files: official-protos.test.ts; these check the sharing itself.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DescFile } from '@bufbuild/protobuf';
import { xdsFile } from '../../src/protos/gen/descriptors.js';
import { LocalityLbEndpointsSchema } from '../../src/protos/gen/envoy/config/endpoint/v3/endpoint_components_pb.js';
import { ClusterLoadAssignmentSchema } from '../../src/protos/gen/envoy/config/endpoint/v3/endpoint_pb.js';
import { generatedFiles } from '../../src/protos/gen/files.js';
import { xdsTypeRegistry } from '../../src/protos/type-registry.js';

/** The protobuf JSON mapping's default name: underscores dropped, the letter after each one upper-cased. */
function lowerCamelCase(protoName: string): string {
  let out = '';
  let upper = false;
  for (const c of protoName) {
    if (c === '_') upper = true;
    else {
      out += upper ? c.toUpperCase() : c;
      upper = false;
    }
  }
  return out;
}

describe('generated file descriptors, shared per chunk (src/protos/gen/descriptors.ts)', () => {
  test("every type exists once: a field of another file's type holds that file's own descriptor", () => {
    let checked = 0;
    for (const type of xdsTypeRegistry) {
      if (type.kind !== 'message') continue;
      for (const field of type.fields) {
        const ref = field.message ?? field.enum;
        if (ref === undefined) continue;
        assert.equal(xdsTypeRegistry.get(ref.typeName), ref, `${type.typeName}.${field.name}`);
        checked++;
      }
    }
    assert.ok(checked > 1_000, `${checked} fields checked`);
    // The schemas the generated files export are those same objects.
    assert.equal(ClusterLoadAssignmentSchema.field.endpoints?.message, LocalityLbEndpointsSchema);
  });

  test("each file's imports are the generated files (and @bufbuild/protobuf's well-known types) themselves", () => {
    const byName = new Map<string, DescFile>(generatedFiles.map((f) => [f.proto.name, f]));
    assert.equal(byName.size, generatedFiles.length);
    let imports = 0;
    for (const file of generatedFiles) {
      assert.equal(file.dependencies.length, file.proto.dependency.length, file.proto.name);
      file.dependencies.forEach((dep, i) => {
        assert.equal(dep.proto.name, file.proto.dependency[i], file.proto.name);
        assert.equal(dep, byName.get(dep.proto.name), `${file.proto.name} imports ${dep.proto.name}`);
        imports++;
      });
    }
    assert.ok(imports > 400, `${imports} imports checked`);
    const endpoint = byName.get('envoy/config/endpoint/v3/endpoint.proto');
    assert.deepEqual(endpoint?.proto.dependency, [
      'envoy/config/endpoint/v3/endpoint_components.proto',
      'envoy/type/v3/percent.proto',
      'google/protobuf/duration.proto',
      'google/protobuf/wrappers.proto',
      'udpa/annotations/status.proto',
      'udpa/annotations/versioning.proto',
      'validate/validate.proto',
    ]);
  });

  test('proto3 JSON names are the lowerCamelCase of the field names (protoc-gen-es embeds them stripped)', () => {
    let checked = 0;
    for (const type of xdsTypeRegistry) {
      if (type.kind !== 'message') continue;
      for (const field of type.fields) {
        assert.equal(field.jsonName, lowerCamelCase(field.name), `${type.typeName}.${field.name}`);
        checked++;
      }
    }
    assert.ok(checked > 2_000, `${checked} fields checked`);
    assert.equal(ClusterLoadAssignmentSchema.field.clusterName?.jsonName, 'clusterName');
  });

  test('a file its chunk does not hold: the error names it and says to regenerate', () => {
    assert.throws(
      () => xdsFile('envoy/nope.proto'),
      /envoy\/nope\.proto is not in its descriptor chunk \(regenerate/,
    );
  });
});
