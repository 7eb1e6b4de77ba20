// Part of `npm run gen:protos` (scripts/gen-protos.mjs): after protoc-gen-es has written src/protos/gen, the
// descriptors it embedded one per file move into src/protos/gen/descriptors.ts, one FileDescriptorSet per
// chunk, and each generated file takes its file descriptor from there.
//
// Why: protoc-gen-es's `fileDesc(base64, imports)` builds a registry of the file's whole import closure each time
// (every direct import added with all of its own imports, again for each path that reaches them). For the
// Envoy protos that is hundreds of thousands of type registrations for a few hundred types: most of lbtree's
// start-up. A chunk's files are built once, into one registry, when the first of them is imported.
//
// The descriptors are protoc-gen-es's own (the same bytes each file embedded), with what `fileDesc` restores
// at run time restored here instead: each file's `dependency` list and its fields' default JSON names. A chunk
// is embedded as the JSON of its FileDescriptorSet's fields (`create` takes it back), not as binary: building
// the messages from JSON.parse's objects costs about half of decoding the same descriptors from protobuf bytes,
// and the `xds` chunk is decoded on every `xds:` channel's way to its first call (issue 25 §4). The JSON keeps
// every field the descriptors set; what it drops are unknown fields, i.e. the option extensions (validate
// rules, udpa annotations) that nothing decodes (checked below: the set made from the JSON equals the original).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { create, equals, fromBinary, isFieldSet } from '@bufbuild/protobuf';
import { protoCamelCase } from '@bufbuild/protobuf/reflect';
import { base64Decode } from '@bufbuild/protobuf/wire';
import * as wkt from '@bufbuild/protobuf/wkt';

const { FieldDescriptorProtoSchema, FileDescriptorProtoSchema, FileDescriptorSetSchema } = wkt;

const DESCRIPTORS = 'descriptors.ts';
/** @bufbuild/protobuf/wkt's file descriptors by constant name (`file_google_protobuf_duration`). */
const WKT_FILES = new Map(Object.entries(wkt).filter(([, v]) => v?.kind === 'file'));

function generatedFiles(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((d) =>
      d.isDirectory()
        ? generatedFiles(join(dir, d.name))
        : d.name.endsWith('_pb.ts')
          ? [join(dir, d.name)]
          : [],
    )
    .sort();
}

const FILE_DESC =
  /export const (file_\w+): GenFile = \/\*@__PURE__\*\/\n {2}fileDesc\("([A-Za-z0-9+/]+)"(?:, \[([\w, ]*)\])?\);/;

/** What protoc-gen-es wrote for one .proto file: its descriptor constant, embedded descriptor and imports. */
function readGenerated(path) {
  const text = readFileSync(path, 'utf8');
  const proto = /^\/\/ @generated from file (\S+) /m.exec(text)?.[1];
  const desc = FILE_DESC.exec(text);
  if (proto === undefined || desc === null) throw new Error(`gen-protos: no fileDesc(...) in ${path}`);
  const imports = desc[3] ? desc[3].split(', ') : [];
  return { path, text, proto, constName: desc[1], base64: desc[2], imports };
}

/** fileDesc's run-time repairs, done once here: the import list and the JSON names protoc-gen-es stripped. */
function restoredDescriptor(file, protoNameOf) {
  const proto = fromBinary(FileDescriptorProtoSchema, base64Decode(file.base64));
  proto.dependency = file.imports.map(protoNameOf);
  const restoreJsonNames = (message) => {
    for (const field of message.field) {
      if (!isFieldSet(field, FieldDescriptorProtoSchema.field.jsonName))
        field.jsonName = protoCamelCase(field.name);
    }
    message.nestedType.forEach(restoreJsonNames);
  };
  proto.messageType.forEach(restoreJsonNames);
  return proto;
}

/** The import closure of `protos` (file names), each file after its imports. */
function closureInOrder(protos, byProto) {
  const order = [];
  const seen = new Set();
  const visit = (name) => {
    if (seen.has(name)) return;
    seen.add(name);
    const file = byProto.get(name);
    if (file === undefined) return; // a well-known type: @bufbuild/protobuf/wkt has it
    for (const dep of file.deps) visit(dep);
    order.push(file);
  };
  for (const name of protos) visit(name);
  return order;
}

function chunkFunction(name) {
  return `${name}File`;
}

/**
 * Rewrites src/protos/gen: writes descriptors.ts (one embedded FileDescriptorSet per chunk, each built into a
 * registry on first use) and points every generated file's descriptor constant at it. `chunks` is
 * `[{ name, protos }]` in load order; a file belongs to the first chunk whose protos import it.
 * Returns the generated files (`{ path, constName }`) and the well-known-type file constants they import.
 */
export function shareDescriptors(out, chunks) {
  const files = generatedFiles(out).map(readGenerated);
  const byConst = new Map(files.map((f) => [f.constName, f]));
  const wktUsed = new Set();
  const protoNameOf = (constName) => {
    const file = byConst.get(constName);
    if (file !== undefined) return file.proto;
    const wktFile = WKT_FILES.get(constName);
    if (wktFile === undefined) throw new Error(`gen-protos: unknown import ${constName}`);
    wktUsed.add(constName);
    return wktFile.proto.name;
  };
  for (const file of files) file.deps = file.imports.map(protoNameOf);
  const byProto = new Map(files.map((f) => [f.proto, f]));

  const chunkOf = new Map();
  const chunkFiles = chunks.map(({ name, protos }) => {
    const own = closureInOrder(protos, byProto).filter((f) => !chunkOf.has(f.proto));
    for (const f of own) chunkOf.set(f.proto, name);
    return { name, files: own };
  });
  const orphans = files.filter((f) => !chunkOf.has(f.proto)).map((f) => f.proto);
  if (orphans.length > 0) throw new Error(`gen-protos: in no chunk: ${orphans.join(', ')}`);

  writeFileSync(join(out, DESCRIPTORS), descriptorsModule(chunkFiles, protoNameOf, [...wktUsed].sort()));
  for (const file of files) writeFileSync(file.path, rewritten(file, chunkOf.get(file.proto), out));
  return { files: files.map(({ path, constName }) => ({ path, constName })), wkt: [...wktUsed].sort() };
}

/**
 * The init object of `message` for `create(schema, init)`: its set fields by local name, nested messages the
 * same way. Descriptor messages hold no map, oneof, 64-bit or bytes field (checked: those would not survive
 * JSON); unknown fields are left out.
 */
function initObject(schema, message) {
  if (schema.oneofs.length > 0) throw new Error(`gen-protos: ${schema.typeName} has a oneof`);
  const init = {};
  for (const field of schema.fields) {
    const value = message[field.localName];
    if (!Object.hasOwn(message, field.localName) || value === undefined) continue;
    if (field.fieldKind === 'list') {
      if (value.length === 0) continue;
      init[field.localName] =
        field.listKind === 'message' ? value.map((v) => initObject(field.message, v)) : value;
    } else if (field.fieldKind === 'message') {
      init[field.localName] = initObject(field.message, value);
    } else if (field.fieldKind === 'scalar' || field.fieldKind === 'enum') {
      if (typeof value === 'bigint' || value instanceof Uint8Array) {
        throw new Error(`gen-protos: ${field} holds a value JSON cannot carry`);
      }
      init[field.localName] = value;
    } else {
      throw new Error(`gen-protos: ${field} is a map`);
    }
  }
  return init;
}

/** A chunk's FileDescriptorSet as a JavaScript string literal of its JSON init object (see the header). */
export function descriptorSetLiteral(set) {
  const json = JSON.stringify(initObject(FileDescriptorSetSchema, set));
  if (!equals(FileDescriptorSetSchema, create(FileDescriptorSetSchema, JSON.parse(json)), set)) {
    throw new Error('gen-protos: a descriptor set built from its JSON differs from the set');
  }
  // Single quotes: JSON escapes backslashes and quotes its own way, so only these two need escaping here.
  return `'${json.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function descriptorsModule(chunkFiles, protoNameOf, wktNames) {
  const chunks = [];
  const earlier = [];
  for (const { name, files } of chunkFiles) {
    const set = create(FileDescriptorSetSchema, {
      file: files.map((f) => restoredDescriptor(f, protoNameOf)),
    });
    const outside = [...new Set(files.flatMap((f) => f.imports).filter((c) => wktNames.includes(c)))].sort();
    chunks.push({ name, set, imports: [...outside, ...earlier.map((e) => `${e}Files()`)] });
    earlier.push(name);
  }
  return renderDescriptorsModule(chunks, wktNames);
}

/** descriptors.ts for `chunks` (`[{ name, set, imports }]`, in load order), importing `wktNames`. */
export function renderDescriptorsModule(chunks, wktNames) {
  const lines = [
    '// @generated by scripts/gen-protos.mjs (scripts/share-descriptors.mjs): the file descriptors of the generated',
    '// protos, embedded by protoc-gen-es, gathered into one FileDescriptorSet per chunk (the JSON of its fields,',
    '// which `create` builds faster than protobuf bytes decode). A chunk becomes one registry, built the first',
    '// time one of its files is imported; each file and type is built once.',
    '/* eslint-disable */',
    '',
    'import type { DescFile, FileRegistry } from "@bufbuild/protobuf";',
    'import { create, createFileRegistry } from "@bufbuild/protobuf";',
    'import type { FileDescriptorProto } from "@bufbuild/protobuf/wkt";',
    `import { FileDescriptorProtoSchema, FileDescriptorSetSchema, ${wktNames.join(', ')} } from "@bufbuild/protobuf/wkt";`,
    '',
    '/**',
    " * One registry holding a chunk's files, built from their FileDescriptorSet (each file after its imports); an",
    ' * import from outside the chunk is resolved in `imports`: well-known types and the earlier chunks.',
    ' */',
    'function describeChunk(chunk: string, set: string, imports: readonly (DescFile | FileRegistry)[]): FileRegistry {',
    '  const own = new Map<string, FileDescriptorProto>();',
    '  for (const file of create(FileDescriptorSetSchema, JSON.parse(set)).file) own.set(file.name, file);',
    '  const resolve = (name: string): FileDescriptorProto | DescFile | undefined => {',
    '    const file = own.get(name);',
    '    if (file !== undefined) return file;',
    '    for (const i of imports) {',
    '      const found = i.kind === "file" ? (i.proto.name === name ? i : undefined) : i.getFile(name);',
    '      if (found !== undefined) return found;',
    '    }',
    '    return undefined;',
    '  };',
    "  // A root importing every file of the chunk, the last first: the registry builds a root's imports in the",
    '  // reverse of the order it finds them, so each file comes after its own imports.',
    '  const dependency = [...own.keys()].reverse();',
    '  return createFileRegistry(create(FileDescriptorProtoSchema, { name: "lbtree/" + chunk + "_chunk.proto", dependency }), resolve);',
    '}',
    '',
    'function fileIn(registry: FileRegistry, name: string): DescFile {',
    '  const file = registry.getFile(name);',
    '  if (file === undefined) throw new Error(name + " is not in its descriptor chunk (regenerate: npm run gen:protos)");',
    '  return file;',
    '}',
  ];
  for (const { name, set, imports } of chunks) {
    lines.push(
      '',
      `let ${name}: FileRegistry | undefined;`,
      `const ${name}Set = ${descriptorSetLiteral(set)};`,
      `const ${name}Files = (): FileRegistry => (${name} ??= describeChunk("${name}", ${name}Set, [${imports.join(', ')}]));`,
      '',
      `/** The descriptor of a file of the \`${name}\` chunk (${set.file.length} files). */`,
      `export const ${chunkFunction(name)} = (name: string): DescFile => fileIn(${name}Files(), name);`,
    );
  }
  lines.push('');
  return lines.join('\n');
}

/** The generated file with its descriptor taken from its chunk: no fileDesc, no value import of other files. */
function rewritten(file, chunk, out) {
  const fn = chunkFunction(chunk);
  const from = relative(dirname(file.path), join(out, DESCRIPTORS)).replace(/\.ts$/, '.js');
  const spec = from.startsWith('.') ? from : `./${from}`;
  const lines = file.text.split('\n');
  const result = [];
  for (const line of lines) {
    const imp = /^import \{ ([\w, ]+) \} from "([^"]+)";$/.exec(line);
    if (imp === null) {
      result.push(line);
      continue;
    }
    const names = imp[1].split(', ');
    if (imp[2] === '@bufbuild/protobuf/codegenv2') {
      const kept = names.filter((n) => n !== 'fileDesc');
      if (kept.length > 0) result.push(`import { ${kept.join(', ')} } from "${imp[2]}";`);
      result.push(`import { ${fn} } from "${spec}";`);
      continue;
    }
    const others = names.filter((n) => !n.startsWith('file_'));
    if (others.length > 0) throw new Error(`gen-protos: ${file.path} imports values ${others.join(', ')}`);
  }
  const text = result
    .join('\n')
    .replace(FILE_DESC, `export const $1: GenFile = /*@__PURE__*/\n  ${fn}("${file.proto}");`)
    .replace(
      /^(\/\/ @generated by protoc-gen-es .*\n)/,
      `$1// (its file descriptor then moved into ${DESCRIPTORS} by scripts/gen-protos.mjs)\n`,
    );
  return text;
}
