import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { create, equals, fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorSetSchema,
} from '@bufbuild/protobuf/wkt';
import { xdsFile } from '../../src/protos/gen/descriptors.js';

// scripts/ is plain JavaScript beside the compiled tests: imported from the repository root (the tests' cwd).
const { descriptorSetLiteral } = await import(
  pathToFileURL(join(process.cwd(), 'scripts/share-descriptors.mjs')).href
);

/** What descriptors.ts does with a chunk's literal: the string's JSON, built into messages by `create`. */
function built(literal: string) {
  const text = new Function(`return ${literal};`)() as string;
  return create(FileDescriptorSetSchema, JSON.parse(text));
}

test("a chunk's descriptor set embedded as JSON builds back into the same set (issue 25 §4)", () => {
  // The generated Cluster file as protoc-gen-es embedded it (read back through its bytes: no shared objects).
  const cluster = xdsFile('envoy/config/cluster/v3/cluster.proto').proto;
  const set = fromBinary(
    FileDescriptorSetSchema,
    toBinary(FileDescriptorSetSchema, create(FileDescriptorSetSchema, { file: [cluster] })),
  );
  const back = built(descriptorSetLiteral(set));
  assert.ok(equals(FileDescriptorSetSchema, back, set));
  const field = back.file[0]?.messageType
    .find((m) => m.name === 'Cluster')
    ?.field.find((f) => f.name === 'lb_policy');
  assert.equal(field?.number, 6);
  assert.equal(field?.jsonName, 'lbPolicy');
  // Proto2 presence survives: a field set to its default is set, one never written is not.
  assert.ok(Object.hasOwn(field!, 'label'));
  assert.ok(!Object.hasOwn(field!, 'defaultValue'));
});

test('quotes and backslashes in a descriptor survive the string literal', () => {
  const set = create(FileDescriptorSetSchema, {
    file: [
      {
        name: "odd'name\\.proto",
        messageType: [
          {
            name: 'M',
            field: [
              {
                name: 'f',
                number: 1,
                type: FieldDescriptorProto_Type.STRING,
                label: FieldDescriptorProto_Label.OPTIONAL,
                defaultValue: 'it\'s a "quote" \\ and \\\\ two \u2028',
                jsonName: 'f',
              },
            ],
          },
        ],
      },
    ],
  });
  const back = built(descriptorSetLiteral(set));
  assert.ok(equals(FileDescriptorSetSchema, back, set));
  assert.equal(
    back.file[0]?.messageType[0]?.field[0]?.defaultValue,
    'it\'s a "quote" \\ and \\\\ two \u2028',
  );
});

test('a descriptor JSON cannot carry (a 64-bit value) is refused at generation time', () => {
  const set = create(FileDescriptorSetSchema, {
    file: [{ name: 'x.proto', options: { uninterpretedOption: [{ positiveIntValue: 1n }] } }],
  });
  assert.throws(() => descriptorSetLiteral(set), /holds a value JSON cannot carry/);
});
