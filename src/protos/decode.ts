// Decoding protobuf bytes into the generated messages, with a failure that says which field was being read.

import { type DescEnum, type DescMessage, fromBinary, type MessageShape } from '@bufbuild/protobuf';
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';

/**
 * Nesting deeper than this (messages or groups) is rejected: 100, the limit of protobuf's C++ and Java
 * parsers and @bufbuild/protobuf's default, so hostile input cannot exhaust the stack.
 */
export const MAX_PROTO_NESTING = 100;

/** Bytes that do not decode as a message: the message says why and, when it can be found, in which field. */
export class ProtoDecodeError extends Error {
  override readonly name = 'ProtoDecodeError';
}

/** Decodes `bytes` as `schema`, nesting bounded by {@link MAX_PROTO_NESTING}; throws a {@link ProtoDecodeError}. */
export function decodeMessage<Desc extends DescMessage>(schema: Desc, bytes: Uint8Array): MessageShape<Desc> {
  try {
    return fromBinary(schema, bytes, { recursionLimit: MAX_PROTO_NESTING });
  } catch (e) {
    const where = locateBinaryError(schema, bytes, '', 0);
    const at = where ? ` (reading ${where})` : '';
    throw new ProtoDecodeError(`can't decode ${schema.typeName}: ${(e as Error).message}${at}`);
  }
}

/** The proto name of an enum value (`MAGLEV`), or its number when the enum has no such value. */
export function enumName(schema: DescEnum, value: number): string {
  return schema.value[value]?.name ?? String(value);
}

function decodes(schema: DescMessage, bytes: Uint8Array): boolean {
  try {
    fromBinary(schema, bytes, { recursionLimit: MAX_PROTO_NESTING });
    return true;
  } catch {
    return false;
  }
}

function join(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

/**
 * The field path (`load_balancing_policy.policies[0].typed_extension_config`) of the innermost field whose
 * bytes fail to decode, found by walking the fields of a message that is known not to decode. Only runs on
 * failure; bounded by the nesting limit like the decoder itself.
 */
function locateBinaryError(schema: DescMessage, bytes: Uint8Array, path: string, depth: number): string {
  if (depth >= MAX_PROTO_NESTING) return path;
  const reader = new BinaryReader(bytes);
  const counts = new Map<number, number>();
  while (reader.pos < reader.len) {
    let fieldNo: number;
    let wireType: WireType;
    try {
      [fieldNo, wireType] = reader.tag();
    } catch {
      return path;
    }
    const field = schema.fields.find((f) => f.number === fieldNo);
    let at = path;
    if (field !== undefined) {
      at = join(path, field.name);
      if (field.fieldKind === 'list' || field.fieldKind === 'map') {
        const index = counts.get(fieldNo) ?? 0;
        counts.set(fieldNo, index + 1);
        if (field.fieldKind === 'list') at = `${at}[${index}]`;
      }
    }
    const nested =
      field !== undefined &&
      wireType === WireType.LengthDelimited &&
      (field.fieldKind === 'message' || (field.fieldKind === 'list' && field.listKind === 'message'))
        ? field.message
        : undefined;
    let value: Uint8Array;
    try {
      value =
        nested !== undefined ? reader.bytes() : reader.skip(wireType, fieldNo, MAX_PROTO_NESTING - depth);
    } catch {
      return at;
    }
    if (nested !== undefined && !decodes(nested, value))
      return locateBinaryError(nested, value, at, depth + 1);
  }
  return path;
}
