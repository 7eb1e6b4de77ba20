// Reading xDS resources from proto3 JSON (or YAML parsed to the same objects) with @bufbuild/protobuf, and
// saying WHERE a problem is: the library's errors name the message type but not the path, so when a read
// fails the input is walked beside the schema to find the first offending field (`$.load_assignment
// .endpoints[0].lb_endpoints[1].endpoint`). The walk only runs on failure; a good input is read once.

import {
  type JsonReadOptions as BufJsonReadOptions,
  type DescField,
  type DescMessage,
  fromJson,
  type JsonValue,
  type MessageShape,
} from '@bufbuild/protobuf';
import { MAX_PROTO_NESTING } from './decode.js';
import { xdsTypeRegistry } from './type-registry.js';

export type { JsonObject, JsonValue } from '@bufbuild/protobuf';

/** A JSON input that does not fit the message type; `path` is where (`$.load_assignment.endpoints[0]`). */
export class ProtoJsonError extends Error {
  override readonly name = 'ProtoJsonError';
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path}: ${problem}`);
  }
}

export interface JsonReadOptions {
  /**
   * Skip fields the message type does not have instead of rejecting them (proto3 JSON rejects them by
   * default, and so does lbtree: a misspelt field would otherwise be silently dropped).
   */
  readonly ignoreUnknownFields?: boolean;
}

/**
 * Reads a message from proto3 JSON; Any values are resolved through `xdsTypeRegistry`. Throws a
 * {@link ProtoJsonError} naming the JSON path of the first problem.
 */
export function messageFromJson<Desc extends DescMessage>(
  schema: Desc,
  json: unknown,
  options: JsonReadOptions = {},
): MessageShape<Desc> {
  const read: BufJsonReadOptions = {
    registry: xdsTypeRegistry,
    recursionLimit: MAX_PROTO_NESTING,
    ignoreUnknownFields: options.ignoreUnknownFields ?? false,
  };
  try {
    return fromJson(schema, json as JsonValue, read);
  } catch (e) {
    const found = locate(schema, json, '$', read) ?? { path: '$', problem: messageOf(e) };
    throw new ProtoJsonError(found.path, `${found.problem} (reading ${schema.typeName} JSON)`);
  }
}

interface Problem {
  readonly path: string;
  readonly problem: string;
}

/** Well-known types whose JSON form is not an object of their fields: the library's message says it all. */
const SPECIAL_JSON = new Set([
  'google.protobuf.Duration',
  'google.protobuf.Timestamp',
  'google.protobuf.FieldMask',
  'google.protobuf.Struct',
  'google.protobuf.Value',
  'google.protobuf.ListValue',
  'google.protobuf.DoubleValue',
  'google.protobuf.FloatValue',
  'google.protobuf.Int64Value',
  'google.protobuf.UInt64Value',
  'google.protobuf.Int32Value',
  'google.protobuf.UInt32Value',
  'google.protobuf.BoolValue',
  'google.protobuf.StringValue',
  'google.protobuf.BytesValue',
]);

function messageOf(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  // The library says "cannot decode field|message|enum <name> from JSON: <what>"; the path already names
  // the field, so a field's problem is <what>, and a message's or enum's says which type it did not fit.
  const m = /^cannot decode (field|message|enum) (\S+) from JSON:? ?(.*)$/s.exec(text);
  if (m === null) return text;
  return m[1] === 'field' ? m[3]! : `not a valid ${m[2]}: ${m[3]}`;
}

function tryRead(schema: DescMessage, json: unknown, read: BufJsonReadOptions): unknown {
  try {
    fromJson(schema, json as JsonValue, read);
    return undefined;
  } catch (e) {
    return e;
  }
}

function pathOf(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The first problem in `json` read as `schema` (which is known to fail), or undefined if none is found. */
function locate(
  schema: DescMessage,
  json: unknown,
  path: string,
  read: BufJsonReadOptions,
  depth = 0,
): Problem | undefined {
  // The walk is recursive too: past the nesting limit the input is rejected here, as the library does.
  if (depth > MAX_PROTO_NESTING)
    return { path, problem: `nested more than ${MAX_PROTO_NESTING} levels deep` };
  const failure = tryRead(schema, json, read);
  if (failure === undefined) return undefined;
  if (schema.typeName === 'google.protobuf.Any' && isObject(json)) {
    return locateAny(json, path, read, failure, depth);
  }
  if (SPECIAL_JSON.has(schema.typeName) || !isObject(json)) return { path, problem: messageOf(failure) };
  for (const [key, value] of Object.entries(json)) {
    const at = pathOf(path, key);
    const field = schema.fields.find((f) => f.jsonName === key || f.name === key);
    if (field === undefined) {
      if (read.ignoreUnknownFields) continue;
      return { path: at, problem: `unknown field of ${schema.typeName}` };
    }
    const found = locateField(schema, field, key, value, at, read, depth + 1);
    if (found) return found;
  }
  // Each field reads alone, so the problem is between them (two members of one oneof, a field given twice).
  return { path, problem: messageOf(failure) };
}

function locateField(
  parent: DescMessage,
  field: DescField,
  key: string,
  value: unknown,
  at: string,
  read: BufJsonReadOptions,
  depth: number,
): Problem | undefined {
  const alone = tryRead(parent, { [key]: value }, read);
  if (alone === undefined) return undefined;
  if (field.fieldKind === 'message')
    return locate(field.message, value, at, read, depth) ?? problemAt(at, alone);
  if (field.fieldKind === 'list' && Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      const found =
        field.listKind === 'message'
          ? locate(field.message, item, pathOf(at, i), read, depth)
          : problemIf(tryRead(parent, { [key]: [item] }, read), pathOf(at, i));
      if (found) return found;
    }
  }
  if (field.fieldKind === 'map' && field.mapKind === 'message' && isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      const found = locate(field.message, v, pathOf(at, k), read, depth);
      if (found) return found;
    }
  }
  return problemAt(at, alone);
}

function locateAny(
  json: Record<string, unknown>,
  path: string,
  read: BufJsonReadOptions,
  failure: unknown,
  depth: number,
): Problem {
  const typeUrl = json['@type'];
  const at = pathOf(path, '@type');
  if (typeof typeUrl !== 'string') return { path: at, problem: 'missing or not a string' };
  const typeName = typeUrl.slice(typeUrl.lastIndexOf('/') + 1);
  const inner = xdsTypeRegistry.getMessage(typeName);
  if (inner === undefined) return { path: at, problem: `unknown type ${JSON.stringify(typeUrl)}` };
  const found = SPECIAL_JSON.has(inner.typeName)
    ? locate(inner, json.value, pathOf(path, 'value'), read, depth + 1)
    : locate(inner, withoutType(json), path, read, depth + 1);
  return found ?? { path, problem: messageOf(failure) };
}

function withoutType(json: Record<string, unknown>): Record<string, unknown> {
  const { '@type': _type, ...rest } = json;
  return rest;
}

function problemIf(error: unknown, path: string): Problem | undefined {
  return error === undefined ? undefined : problemAt(path, error);
}

function problemAt(path: string, error: unknown): Problem {
  return { path, problem: messageOf(error) };
}
