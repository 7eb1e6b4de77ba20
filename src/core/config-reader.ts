import { ConfigError, childPath } from './config-error.js';

/** `childPolicy` → `child_policy`: the proto field name that proto3 JSON also accepts. */
export function protoFieldName(jsonName: string): string {
  return jsonName.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** A value as an error message shows it: `number NaN`, `string "x"`, `an object` (JSON would print NaN as null). */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' || typeof value === 'bigint') return `${typeof value} ${String(value)}`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}

export function expectObject(value: unknown, path: string): Readonly<Record<string, unknown>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(path, `expected an object, got ${describeValue(value)}`);
  }
  return value as Record<string, unknown>;
}

export function expectArray(value: unknown, path: string): readonly unknown[] {
  if (!Array.isArray(value)) throw new ConfigError(path, `expected an array, got ${describeValue(value)}`);
  return value;
}

/**
 * Reads one JSON config object whose fields may be spelled with their JSON name or their proto field name,
 * as proto3 JSON allows. Every accessor names the field's JSON path in its error.
 */
export class ConfigReader {
  readonly object: Readonly<Record<string, unknown>>;

  constructor(
    value: unknown,
    readonly path: string,
  ) {
    this.object = expectObject(value, path);
  }

  /** The raw value and the path it was found at; `undefined` when absent (JSON null counts as absent). */
  field(jsonName: string): { value: unknown; path: string } | undefined {
    const protoName = protoFieldName(jsonName);
    const hasJson = this.object[jsonName] !== undefined && this.object[jsonName] !== null;
    const hasProto =
      protoName !== jsonName && this.object[protoName] !== undefined && this.object[protoName] !== null;
    if (hasJson && hasProto) {
      throw new ConfigError(
        childPath(this.path, jsonName),
        `given twice, as "${jsonName}" and "${protoName}"`,
      );
    }
    if (hasJson) return { value: this.object[jsonName], path: childPath(this.path, jsonName) };
    if (hasProto) return { value: this.object[protoName], path: childPath(this.path, protoName) };
    return undefined;
  }

  /** A missing required field is reported at the JSON name. */
  required(jsonName: string): { value: unknown; path: string } {
    const found = this.field(jsonName);
    if (!found) throw new ConfigError(childPath(this.path, jsonName), 'required field is missing');
    return found;
  }

  optionalBoolean(jsonName: string): boolean | undefined {
    const found = this.field(jsonName);
    if (!found) return undefined;
    if (typeof found.value !== 'boolean') {
      throw new ConfigError(found.path, `expected a boolean, got ${describeValue(found.value)}`);
    }
    return found.value;
  }

  optionalString(jsonName: string): string | undefined {
    const found = this.field(jsonName);
    if (!found) return undefined;
    if (typeof found.value !== 'string') {
      throw new ConfigError(found.path, `expected a string, got ${describeValue(found.value)}`);
    }
    return found.value;
  }

  /**
   * An integer in [min, max]. proto3 JSON writes 64-bit integers as strings, so decimal strings are accepted.
   */
  optionalInteger(jsonName: string, min: number, max: number): number | undefined {
    const found = this.field(jsonName);
    if (!found) return undefined;
    return expectInteger(found.value, found.path, min, max);
  }

  optionalObject(jsonName: string): ConfigReader | undefined {
    const found = this.field(jsonName);
    return found ? new ConfigReader(found.value, found.path) : undefined;
  }
}

export function expectInteger(value: unknown, path: string, min: number, max: number): number {
  const n = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n)) {
    throw new ConfigError(path, `expected an integer, got ${describeValue(value)}`);
  }
  if (n < min || n > max) throw new ConfigError(path, `${n} is out of range [${min}, ${max}]`);
  return n;
}
