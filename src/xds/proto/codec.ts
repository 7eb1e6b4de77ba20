// A small schema-driven protobuf codec. Message types are described in TypeScript (see messages.ts: field
// names, numbers and types, as the official Envoy / xDS / protobuf definitions give them) and this file turns
// bytes into plain objects and back, and reads and writes the proto3 JSON mapping
// (protobuf.dev/programming-guides/json) so resources can also be written by hand as JSON or YAML.
//
// Decoded form ("the object form"): one plain object per message, keyed by the field's JSON name
// (lowerCamelCase). Scalars that are not in a oneof always have a value (proto3 defaults when absent);
// message fields and oneof members are `undefined` when absent; repeated fields are arrays, maps are plain
// objects. 64-bit integers are bigint, bytes are Uint8Array, enums are numbers. Well-known types take their
// natural form: wrappers are the bare value (or undefined), Struct / Value / ListValue are JSON values, Any is
// `{ typeUrl, value }`, Duration is `{ seconds, nanos }`.

import {
  WIRE_FIXED32,
  WIRE_FIXED64,
  WIRE_LENGTH_DELIMITED,
  WIRE_VARINT,
  WireError,
  WireReader,
  type WireType,
  WireWriter,
} from './wire.js';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export type ScalarKind =
  | 'double'
  | 'float'
  | 'int32'
  | 'int64'
  | 'uint32'
  | 'uint64'
  | 'sint32'
  | 'sint64'
  | 'fixed32'
  | 'fixed64'
  | 'sfixed32'
  | 'sfixed64'
  | 'bool'
  | 'string'
  | 'bytes';

/** How a well-known type differs from an ordinary message in its object and JSON forms. */
export type WellKnown = 'wrapper' | 'struct' | 'value' | 'list' | 'any' | 'duration';

export class EnumType<K extends string = string> {
  private readonly names = new Map<number, K>();
  constructor(
    readonly fullName: string,
    readonly values: Readonly<Record<K, number>>,
  ) {
    for (const [name, n] of Object.entries(values) as [K, number][])
      if (!this.names.has(n)) this.names.set(n, name);
  }
  nameOf(n: number): K | undefined {
    return this.names.get(n);
  }
}

export type FieldTypeSpec = ScalarKind | EnumType | MessageType | (() => MessageType);

export interface FieldSpec {
  /** The proto field name (snake_case). */
  readonly name: string;
  readonly number: number;
  readonly type: FieldTypeSpec;
  readonly repeated?: boolean;
  /** A map field: the key's scalar kind (the value's type is `type`). */
  readonly mapKey?: ScalarKind;
  readonly oneof?: string;
}

export interface Field {
  readonly name: string;
  readonly jsonName: string;
  readonly number: number;
  readonly type: ScalarKind | EnumType | MessageType;
  readonly repeated: boolean;
  readonly mapKey: ScalarKind | undefined;
  readonly oneof: string | undefined;
  /** JSON names of the other members of this field's oneof. */
  readonly peers: readonly string[];
}

/** Every message type defined with {@link defineMessage}, by full name (for Any). */
const TYPES = new Map<string, MessageType>();

export function lookupType(fullName: string): MessageType | undefined {
  return TYPES.get(fullName);
}

export function allTypes(): IterableIterator<MessageType> {
  return TYPES.values();
}

export class MessageType {
  private resolved: readonly Field[] | undefined;
  private numbers: Map<number, Field> | undefined;
  private names: Map<string, Field> | undefined;

  constructor(
    readonly fullName: string,
    private readonly spec: () => readonly FieldSpec[],
    readonly wellKnown?: WellKnown,
  ) {}

  /** The last dotted segment: `RingHash` for `envoy...ring_hash.v3.RingHash`. */
  get shortName(): string {
    return this.fullName.slice(this.fullName.lastIndexOf('.') + 1);
  }

  get fields(): readonly Field[] {
    if (!this.resolved) {
      const specs = this.spec();
      const fields = specs.map(
        (f): Field => ({
          name: f.name,
          jsonName: jsonName(f.name),
          number: f.number,
          type: typeof f.type === 'function' ? f.type() : f.type,
          repeated: f.repeated ?? false,
          mapKey: f.mapKey,
          oneof: f.oneof,
          peers:
            f.oneof === undefined
              ? []
              : specs.filter((g) => g.oneof === f.oneof && g !== f).map((g) => jsonName(g.name)),
        }),
      );
      this.resolved = [...fields].sort((a, b) => a.number - b.number);
    }
    return this.resolved;
  }

  byNumber(n: number): Field | undefined {
    this.numbers ??= new Map(this.fields.map((f) => [f.number, f]));
    return this.numbers.get(n);
  }

  /** A field by its JSON name or its proto name (proto3 JSON parsers accept both). */
  byName(name: string): Field | undefined {
    if (!this.names) {
      this.names = new Map();
      for (const f of this.fields) {
        this.names.set(f.jsonName, f);
        this.names.set(f.name, f);
      }
    }
    return this.names.get(name);
  }
}

export function defineMessage(
  fullName: string,
  fields: () => readonly FieldSpec[],
  wellKnown?: WellKnown,
): MessageType {
  const type = new MessageType(fullName, fields, wellKnown);
  TYPES.set(fullName, type);
  return type;
}

/** protoc's JSON name: `sub_zone` → `subZone`. */
export function jsonName(protoName: string): string {
  return protoName.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Sets a key on a plain object even when it is `__proto__`. */
function setKey(o: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    o[key] = value;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Binary decoding

/** Protobuf's usual limit; a resource nested deeper than this is rejected rather than overflowing the stack. */
export const MAX_MESSAGE_DEPTH = 100;

/** Decodes one message to its object form. Throws a {@link WireError} naming the field on malformed input. */
export function decodeMessage<T = Record<string, unknown>>(type: MessageType, bytes: Uint8Array): T {
  const reader = new WireReader(bytes);
  try {
    return readMessage(type, reader, bytes.length, 0) as T;
  } catch (e) {
    if (!(e instanceof WireError)) throw e;
    const where = e.fieldPath.length > 0 ? ` in ${type.shortName}.${e.fieldPath.join('.')}` : '';
    throw new WireError(`${e.problem}${where}`, e.offset);
  }
}

function wireTypeOf(kind: ScalarKind | EnumType | MessageType): WireType {
  if (kind instanceof EnumType) return WIRE_VARINT;
  if (kind instanceof MessageType) return WIRE_LENGTH_DELIMITED;
  switch (kind) {
    case 'double':
    case 'fixed64':
    case 'sfixed64':
      return WIRE_FIXED64;
    case 'float':
    case 'fixed32':
    case 'sfixed32':
      return WIRE_FIXED32;
    case 'string':
    case 'bytes':
      return WIRE_LENGTH_DELIMITED;
    default:
      return WIRE_VARINT;
  }
}

function defaultScalar(kind: ScalarKind | EnumType): unknown {
  if (kind instanceof EnumType) return 0;
  switch (kind) {
    case 'int64':
    case 'uint64':
    case 'sint64':
    case 'fixed64':
    case 'sfixed64':
      return 0n;
    case 'bool':
      return false;
    case 'string':
      return '';
    case 'bytes':
      return new Uint8Array(0);
    default:
      return 0;
  }
}

function readScalar(reader: WireReader, kind: ScalarKind | EnumType): unknown {
  if (kind instanceof EnumType) return reader.int32();
  switch (kind) {
    case 'double':
      return reader.double();
    case 'float':
      return reader.float();
    case 'int32':
      return reader.int32();
    case 'uint32':
      return reader.uint32();
    case 'sint32':
      return reader.sint32();
    case 'int64':
      return reader.int64();
    case 'uint64':
      return reader.uint64();
    case 'sint64':
      return reader.sint64();
    case 'fixed32':
      return reader.fixed32();
    case 'sfixed32':
      return reader.sfixed32();
    case 'fixed64':
      return reader.fixed64();
    case 'sfixed64':
      return reader.sfixed64();
    case 'bool':
      return reader.bool();
    case 'string':
      return reader.string();
    case 'bytes':
      return reader.bytes();
  }
}

function emptyMessage(type: MessageType): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const f of type.fields) {
    if (f.mapKey) o[f.jsonName] = {};
    else if (f.repeated) o[f.jsonName] = [];
    else if (f.oneof === undefined && !(f.type instanceof MessageType)) o[f.jsonName] = defaultScalar(f.type);
  }
  return o;
}

function readMessage(type: MessageType, reader: WireReader, end: number, depth: number): unknown {
  if (depth > MAX_MESSAGE_DEPTH) {
    throw new WireError(`message nesting exceeds ${MAX_MESSAGE_DEPTH} levels`, reader.pos);
  }
  const o = emptyMessage(type);
  const inner = new WireReader(reader.buf, reader.pos, end);
  while (!inner.done) {
    const { fieldNumber, wireType } = inner.tag();
    const field = type.byNumber(fieldNumber);
    if (!field) {
      inner.skip(wireType, fieldNumber); // unknown fields are skipped, as proto3 parsers do
      continue;
    }
    try {
      readField(o, field, wireType, inner, depth);
    } catch (e) {
      if (e instanceof WireError)
        e.fieldPath.unshift(field.repeated || field.mapKey ? `${field.name}[]` : field.name);
      throw e;
    }
  }
  reader.pos = end;
  return fromWireForm(type, o);
}

function readField(
  o: Record<string, unknown>,
  field: Field,
  wireType: WireType,
  reader: WireReader,
  depth: number,
): void {
  const kind = field.type;
  if (field.mapKey) {
    if (wireType !== WIRE_LENGTH_DELIMITED) throw wireMismatch(field, wireType, reader);
    const { start, end } = reader.delimited();
    const entry = new WireReader(reader.buf, start, end);
    let key: unknown = defaultScalar(field.mapKey);
    let value: unknown;
    while (!entry.done) {
      const t = entry.tag();
      if (t.fieldNumber === 1 && t.wireType === wireTypeOf(field.mapKey))
        key = readScalar(entry, field.mapKey);
      else if (t.fieldNumber === 2 && t.wireType === wireTypeOf(kind)) value = readValue(kind, entry, depth);
      else entry.skip(t.wireType, t.fieldNumber);
    }
    if (value === undefined) {
      value = kind instanceof MessageType ? fromWireForm(kind, emptyMessage(kind)) : defaultScalar(kind);
    }
    setKey(o[field.jsonName] as Record<string, unknown>, String(key), value);
    return;
  }
  const expected = wireTypeOf(kind);
  if (field.repeated) {
    const list = o[field.jsonName] as unknown[];
    if (wireType === WIRE_LENGTH_DELIMITED && expected !== WIRE_LENGTH_DELIMITED) {
      // Packed repeated scalars.
      const { start, end } = reader.delimited();
      const packed = new WireReader(reader.buf, start, end);
      while (!packed.done) list.push(readScalar(packed, kind as ScalarKind | EnumType));
      return;
    }
    if (wireType !== expected) throw wireMismatch(field, wireType, reader);
    list.push(readValue(kind, reader, depth));
    return;
  }
  if (wireType !== expected) throw wireMismatch(field, wireType, reader);
  // Setting one member of a oneof clears the others. A repeated occurrence of a singular field: the last one
  // wins (merging repeated message fields is not something any xDS server relies on).
  if (field.oneof !== undefined) for (const peer of field.peers) o[peer] = undefined;
  o[field.jsonName] = readValue(kind, reader, depth);
}

function readValue(kind: ScalarKind | EnumType | MessageType, reader: WireReader, depth: number): unknown {
  if (kind instanceof MessageType) {
    const { start, end } = reader.delimited();
    const sub = new WireReader(reader.buf, start, end);
    return readMessage(kind, sub, end, depth + 1);
  }
  return readScalar(reader, kind);
}

function wireMismatch(field: Field, wireType: WireType, reader: WireReader): WireError {
  return new WireError(
    `field ${field.name} (${field.number}) has wire type ${wireType}, expected ${wireTypeOf(field.type)}`,
    reader.pos,
  );
}

/** Turns a decoded well-known message into its natural form. */
function fromWireForm(type: MessageType, o: Record<string, unknown>): unknown {
  switch (type.wellKnown) {
    case 'wrapper':
      return o.value;
    case 'struct':
      return o.fields;
    case 'list':
      return o.values;
    case 'value': {
      if (o.nullValue !== undefined) return null;
      if (o.numberValue !== undefined) return o.numberValue;
      if (o.stringValue !== undefined) return o.stringValue;
      if (o.boolValue !== undefined) return o.boolValue;
      if (o.structValue !== undefined) return o.structValue;
      if (o.listValue !== undefined) return o.listValue;
      return null; // a Value with no kind set
    }
    default:
      return o;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Binary encoding

/** Encodes a message from its object form (the form {@link decodeMessage} returns). */
export function encodeMessage(type: MessageType, value: unknown): Uint8Array {
  const w = new WireWriter();
  writeMessage(type, toWireForm(type, value), w);
  return w.finish();
}

function toWireForm(type: MessageType, value: unknown): Record<string, unknown> {
  switch (type.wellKnown) {
    case 'wrapper':
      return { value };
    case 'struct':
      return { fields: value ?? {} };
    case 'list':
      return { values: value ?? [] };
    case 'value':
      return valueToWireForm(value as JsonValue);
    default:
      return (value ?? {}) as Record<string, unknown>;
  }
}

function valueToWireForm(v: JsonValue): Record<string, unknown> {
  if (v === null) return { nullValue: 0 };
  if (typeof v === 'number') return { numberValue: v };
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (Array.isArray(v)) return { listValue: v };
  if (typeof v === 'object') return { structValue: v };
  throw new TypeError(`${String(v)} cannot be a google.protobuf.Value`);
}

function isDefault(v: unknown): boolean {
  return (
    v === 0 ||
    v === 0n ||
    v === false ||
    v === '' ||
    (v instanceof Uint8Array && v.length === 0) ||
    (typeof v === 'number' && Object.is(v, -0))
  );
}

function writeMessage(type: MessageType, o: Record<string, unknown>, w: WireWriter): void {
  for (const field of type.fields) {
    const v = o[field.jsonName];
    if (v === undefined || v === null) {
      // A JSON null in a Value-typed field still means "null value"; anywhere else absent.
      if (
        v === null &&
        field.type instanceof MessageType &&
        field.type.wellKnown === 'value' &&
        !field.repeated
      ) {
        writeValue(field, field.type, null, w);
      }
      continue;
    }
    if (field.mapKey) {
      for (const [key, value] of Object.entries(v as Record<string, unknown>)) {
        const entry = new WireWriter();
        writeScalar(entry, 1, field.mapKey, mapKeyValue(field.mapKey, key));
        writeValue({ ...field, number: 2 }, field.type, value, entry);
        w.tag(field.number, WIRE_LENGTH_DELIMITED);
        w.bytes(entry.finish());
      }
      continue;
    }
    if (field.repeated) {
      const list = v as unknown[];
      if (list.length === 0) continue;
      if (!(field.type instanceof MessageType) && wireTypeOf(field.type) !== WIRE_LENGTH_DELIMITED) {
        const packed = new WireWriter();
        for (const item of list) writeBareScalar(packed, field.type, item);
        w.tag(field.number, WIRE_LENGTH_DELIMITED);
        w.bytes(packed.finish());
      } else {
        for (const item of list) writeValue(field, field.type, item, w);
      }
      continue;
    }
    if (field.oneof === undefined && !(field.type instanceof MessageType) && isDefault(v)) continue;
    writeValue(field, field.type, v, w);
  }
}

function mapKeyValue(kind: ScalarKind, key: string): unknown {
  switch (kind) {
    case 'string':
      return key;
    case 'bool':
      return key === 'true';
    case 'int64':
    case 'uint64':
    case 'sint64':
    case 'fixed64':
    case 'sfixed64':
      return BigInt(key);
    default:
      return Number(key);
  }
}

function writeValue(
  field: Field,
  kind: ScalarKind | EnumType | MessageType,
  v: unknown,
  w: WireWriter,
): void {
  if (kind instanceof MessageType) {
    const sub = new WireWriter();
    writeMessage(kind, toWireForm(kind, v), sub);
    w.tag(field.number, WIRE_LENGTH_DELIMITED);
    w.bytes(sub.finish());
    return;
  }
  writeScalar(w, field.number, kind, v);
}

function writeScalar(w: WireWriter, number: number, kind: ScalarKind | EnumType, v: unknown): void {
  w.tag(number, wireTypeOf(kind));
  writeBareScalar(w, kind, v);
}

function writeBareScalar(w: WireWriter, kind: ScalarKind | EnumType, v: unknown): void {
  if (kind instanceof EnumType) {
    w.int32(v as number);
    return;
  }
  switch (kind) {
    case 'double':
      w.double(v as number);
      return;
    case 'float':
      w.float(v as number);
      return;
    case 'int32':
      w.int32(v as number);
      return;
    case 'uint32':
      w.varint32(v as number);
      return;
    case 'sint32':
      w.sint32(v as number);
      return;
    case 'int64':
    case 'uint64':
      w.varint64(BigInt(v as bigint));
      return;
    case 'sint64':
      w.sint64(BigInt(v as bigint));
      return;
    case 'fixed32':
    case 'sfixed32':
      w.fixed32(v as number);
      return;
    case 'fixed64':
    case 'sfixed64':
      w.fixed64(BigInt(v as bigint));
      return;
    case 'bool':
      w.bool(v as boolean);
      return;
    case 'string':
      w.string(v as string);
      return;
    case 'bytes':
      w.bytes(v as Uint8Array);
      return;
  }
}

// ---------------------------------------------------------------------------------------------------------
// proto3 JSON → object form

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
   * Skip fields lbtree's schema does not describe instead of rejecting them. The proto3 JSON spec rejects
   * unknown fields by default; resources copied from a full Envoy config (connect_timeout, health_checks, …)
   * need this.
   */
  readonly ignoreUnknownFields?: boolean;
}

function pathOf(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return /^[A-Za-z_@][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${JSON.stringify(v)}`;
}

/** Reads a message from its proto3 JSON form into its object form. */
export function messageFromJson(
  type: MessageType,
  json: unknown,
  path = '$',
  options: JsonReadOptions = {},
): unknown {
  switch (type.wellKnown) {
    case 'wrapper':
      return scalarFromJson(type.byNumber(1)!.type as ScalarKind, json, path);
    case 'struct':
      if (typeof json !== 'object' || json === null || Array.isArray(json)) {
        throw new ProtoJsonError(path, `expected an object (google.protobuf.Struct), got ${describe(json)}`);
      }
      return jsonValue(json, path);
    case 'list':
      if (!Array.isArray(json)) {
        throw new ProtoJsonError(
          path,
          `expected an array (google.protobuf.ListValue), got ${describe(json)}`,
        );
      }
      return jsonValue(json, path);
    case 'value':
      return jsonValue(json, path);
    case 'duration':
      return durationFromJson(json, path);
    case 'any':
      return anyFromJson(json, path, options);
    default:
      break;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new ProtoJsonError(path, `expected an object (${type.fullName}), got ${describe(json)}`);
  }
  const o = emptyMessage(type);
  const seen = new Map<Field, string>();
  const oneofs = new Map<string, string>();
  for (const [key, value] of Object.entries(json)) {
    const at = pathOf(path, key);
    const field = type.byName(key);
    if (!field) {
      if (options.ignoreUnknownFields) continue;
      throw new ProtoJsonError(
        at,
        `unknown field of ${type.fullName} (lbtree's schema may not describe it; ignoreUnknownFields skips such fields)`,
      );
    }
    if (seen.has(field)) throw new ProtoJsonError(at, `given twice (also as "${seen.get(field)}")`);
    seen.set(field, key);
    if (value === null && !(field.type instanceof MessageType && field.type.wellKnown === 'value')) continue;
    if (field.oneof !== undefined) {
      const other = oneofs.get(field.oneof);
      if (other !== undefined) {
        throw new ProtoJsonError(at, `only one field of oneof ${field.oneof} may be set (also "${other}")`);
      }
      oneofs.set(field.oneof, key);
    }
    setKey(o, field.jsonName, fieldFromJson(field, value, at, options));
  }
  return o;
}

function fieldFromJson(field: Field, value: unknown, path: string, options: JsonReadOptions): unknown {
  if (field.mapKey) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ProtoJsonError(path, `expected an object (map), got ${describe(value)}`);
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const at = pathOf(path, k);
      const key = scalarFromJson(
        field.mapKey,
        field.mapKey === 'string' ? k : mapKeyJson(field.mapKey, k, at),
        at,
      );
      setKey(out, String(key), singleFromJson(field.type, v, at, options));
    }
    return out;
  }
  if (field.repeated) {
    if (!Array.isArray(value)) throw new ProtoJsonError(path, `expected an array, got ${describe(value)}`);
    return value.map((v, i) => singleFromJson(field.type, v, pathOf(path, i), options));
  }
  return singleFromJson(field.type, value, path, options);
}

function mapKeyJson(kind: ScalarKind, key: string, path: string): unknown {
  if (kind === 'bool') {
    if (key === 'true') return true;
    if (key === 'false') return false;
    throw new ProtoJsonError(path, `map key "${key}" is not a bool`);
  }
  return key;
}

function singleFromJson(
  kind: ScalarKind | EnumType | MessageType,
  value: unknown,
  path: string,
  options: JsonReadOptions,
): unknown {
  if (kind instanceof MessageType) return messageFromJson(kind, value, path, options);
  if (kind instanceof EnumType) return enumFromJson(kind, value, path);
  return scalarFromJson(kind, value, path);
}

function enumFromJson(kind: EnumType, value: unknown, path: string): number {
  if (typeof value === 'string') {
    const n = (kind.values as Record<string, number>)[value];
    if (n === undefined || !Object.hasOwn(kind.values, value)) {
      throw new ProtoJsonError(
        path,
        `"${value}" is not a value of ${kind.fullName} (one of ${Object.keys(kind.values).join(', ')})`,
      );
    }
    return n;
  }
  if (typeof value === 'number' && Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31) {
    return value;
  }
  throw new ProtoJsonError(path, `expected a ${kind.fullName} name, got ${describe(value)}`);
}

const INT_RANGES: Partial<Record<ScalarKind, [bigint, bigint]>> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  sint32: [-(2n ** 31n), 2n ** 31n - 1n],
  sfixed32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  fixed32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  sint64: [-(2n ** 63n), 2n ** 63n - 1n],
  sfixed64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
  fixed64: [0n, 2n ** 64n - 1n],
};

function scalarFromJson(kind: ScalarKind, value: unknown, path: string): unknown {
  switch (kind) {
    case 'bool':
      if (typeof value !== 'boolean')
        throw new ProtoJsonError(path, `expected a boolean, got ${describe(value)}`);
      return value;
    case 'string':
      if (typeof value !== 'string')
        throw new ProtoJsonError(path, `expected a string, got ${describe(value)}`);
      return value;
    case 'bytes':
      return bytesFromJson(value, path);
    case 'double':
    case 'float': {
      if (typeof value === 'number') return value;
      if (value === 'NaN') return Number.NaN;
      if (value === 'Infinity') return Number.POSITIVE_INFINITY;
      if (value === '-Infinity') return Number.NEGATIVE_INFINITY;
      if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
        return Number(value);
      throw new ProtoJsonError(path, `expected a number, got ${describe(value)}`);
    }
    default: {
      const [min, max] = INT_RANGES[kind]!;
      let n: bigint;
      if (typeof value === 'number' && Number.isInteger(value)) n = BigInt(value);
      else if (typeof value === 'bigint') n = value;
      else if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) n = BigInt(value.trim());
      else throw new ProtoJsonError(path, `expected an integer, got ${describe(value)}`);
      if (n < min || n > max) throw new ProtoJsonError(path, `${n} is out of range for ${kind}`);
      return kind.endsWith('64') ? n : Number(n);
    }
  }
}

function bytesFromJson(value: unknown, path: string): Uint8Array {
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(value)) {
    throw new ProtoJsonError(path, `expected base64 bytes, got ${describe(value)}`);
  }
  return new Uint8Array(Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64'));
}

/** Checks (and copies) a JSON value for a Struct / Value / ListValue. */
function jsonValue(value: unknown, path: string): JsonValue {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new ProtoJsonError(path, `${value} cannot be a google.protobuf.Value`);
    return value;
  }
  if (Array.isArray(value)) return value.map((v, i) => jsonValue(v, pathOf(path, i)));
  if (typeof value === 'object') {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) setKey(out, k, jsonValue(v, pathOf(path, k)));
    return out;
  }
  throw new ProtoJsonError(path, `${describe(value)} cannot be a google.protobuf.Value`);
}

function durationFromJson(value: unknown, path: string): { seconds: bigint; nanos: number } {
  const m = typeof value === 'string' ? /^(-)?(\d+)(?:\.(\d{1,9}))?s$/.exec(value) : null;
  if (!m) throw new ProtoJsonError(path, `expected a duration such as "1.5s", got ${describe(value)}`);
  const sign = m[1] ? -1 : 1;
  const seconds = BigInt(m[2]!) * BigInt(sign);
  const nanos = m[3] ? Number(m[3].padEnd(9, '0')) * sign : 0;
  if (seconds > 315_576_000_000n || seconds < -315_576_000_000n) {
    throw new ProtoJsonError(path, 'duration is out of range (±10,000 years)');
  }
  return { seconds, nanos };
}

/** The message name an Any's type URL names: the part after the last `/`. */
export function typeNameOfUrl(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf('/') + 1);
}

function anyFromJson(
  json: unknown,
  path: string,
  options: JsonReadOptions,
): { typeUrl: string; value: Uint8Array } {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new ProtoJsonError(
      path,
      `expected an object with "@type" (google.protobuf.Any), got ${describe(json)}`,
    );
  }
  const { '@type': typeUrl, ...rest } = json as Record<string, unknown>;
  if (typeof typeUrl !== 'string' || !typeUrl.includes('/')) {
    throw new ProtoJsonError(
      pathOf(path, '@type'),
      `an Any needs "@type" as a type URL such as "type.googleapis.com/<message name>", got ${describe(typeUrl)}`,
    );
  }
  const type = lookupType(typeNameOfUrl(typeUrl));
  if (!type) {
    // A type lbtree does not describe can still be written when it carries no fields (e.g. a policy the
    // converter is meant to skip): its encoding is empty.
    if (Object.keys(rest).length === 0) return { typeUrl, value: new Uint8Array(0) };
    throw new ProtoJsonError(
      pathOf(path, '@type'),
      `lbtree's schema does not describe ${typeNameOfUrl(typeUrl)}, so its fields cannot be encoded`,
    );
  }
  let object: unknown;
  if (type.wellKnown !== undefined && type.wellKnown !== 'any') {
    // Well-known types with a special JSON form carry it in "value".
    const keys = Object.keys(rest);
    if (keys.some((k) => k !== 'value')) {
      throw new ProtoJsonError(path, `an Any holding ${type.fullName} has only "@type" and "value"`);
    }
    object = messageFromJson(type, rest.value, pathOf(path, 'value'), options);
  } else {
    object = messageFromJson(type, rest, path, options);
  }
  return { typeUrl, value: encodeMessage(type, object) };
}

// ---------------------------------------------------------------------------------------------------------
// object form → proto3 JSON

/** Writes a message's proto3 JSON form (defaults omitted; Any expanded when its type is known). */
export function messageToJson(type: MessageType, value: unknown): JsonValue {
  switch (type.wellKnown) {
    case 'wrapper':
      return scalarToJson(type.byNumber(1)!.type as ScalarKind, value);
    case 'struct':
    case 'list':
    case 'value':
      return value as JsonValue;
    case 'duration': {
      const d = value as { seconds: bigint; nanos: number };
      const neg = d.seconds < 0n || d.nanos < 0;
      const secs = d.seconds < 0n ? -d.seconds : d.seconds;
      const nanos = Math.abs(d.nanos);
      const frac = nanos === 0 ? '' : `.${String(nanos).padStart(9, '0').replace(/0+$/, '')}`;
      return `${neg ? '-' : ''}${secs}${frac}s`;
    }
    case 'any': {
      const a = value as { typeUrl: string; value: Uint8Array };
      const inner = lookupType(typeNameOfUrl(a.typeUrl));
      if (!inner) return { '@type': a.typeUrl, value: Buffer.from(a.value).toString('base64') };
      const decoded = decodeMessage(inner, a.value);
      const json = messageToJson(inner, decoded);
      if (inner.wellKnown !== undefined) return { '@type': a.typeUrl, value: json };
      return { '@type': a.typeUrl, ...(json as JsonObject) };
    }
    default:
      break;
  }
  const o = value as Record<string, unknown>;
  const out: JsonObject = {};
  for (const field of type.fields) {
    const v = o[field.jsonName];
    if (v === undefined) continue;
    if (field.mapKey) {
      const entries = Object.entries(v as Record<string, unknown>);
      if (entries.length === 0) continue;
      const m: JsonObject = {};
      for (const [k, item] of entries) setKey(m, k, singleToJson(field.type, item));
      out[field.jsonName] = m;
    } else if (field.repeated) {
      const list = v as unknown[];
      if (list.length === 0) continue;
      out[field.jsonName] = list.map((item) => singleToJson(field.type, item));
    } else {
      if (field.oneof === undefined && !(field.type instanceof MessageType) && isDefault(v)) continue;
      out[field.jsonName] = singleToJson(field.type, v);
    }
  }
  return out;
}

function singleToJson(kind: ScalarKind | EnumType | MessageType, v: unknown): JsonValue {
  if (kind instanceof MessageType) return messageToJson(kind, v);
  if (kind instanceof EnumType) return kind.nameOf(v as number) ?? (v as number);
  return scalarToJson(kind, v);
}

function scalarToJson(kind: ScalarKind, v: unknown): JsonValue {
  if (v === undefined) return null;
  switch (kind) {
    case 'bytes':
      return Buffer.from(v as Uint8Array).toString('base64');
    case 'double':
    case 'float': {
      const n = v as number;
      if (Number.isNaN(n)) return 'NaN';
      if (n === Number.POSITIVE_INFINITY) return 'Infinity';
      if (n === Number.NEGATIVE_INFINITY) return '-Infinity';
      return n;
    }
    case 'int64':
    case 'uint64':
    case 'sint64':
    case 'fixed64':
    case 'sfixed64':
      return String(v);
    default:
      return v as JsonValue;
  }
}
