// Resources written as proto3 JSON, encoded through the generated schemas, and decoded by a resource type.
import assert from 'node:assert/strict';
import { type DescMessage, fromJson, type JsonValue, toBinary } from '@bufbuild/protobuf';
import { xdsTypeRegistry } from '../../../src/protos/type-registry.js';
import type { XdsDecodeResult, XdsResourceType } from '../../../src/xds/client/resource-type.js';
import { resolveXdsOptions, type XdsOptions } from '../../../src/xds/resources/xds-options.js';

export type Json = { [key: string]: JsonValue };

export function encode(schema: DescMessage, json: Json): Uint8Array {
  return toBinary(schema, fromJson(schema, json, { registry: xdsTypeRegistry }));
}

export function decode<T>(
  type: XdsResourceType<T>,
  schema: DescMessage,
  json: Json,
  options: XdsOptions = {},
): XdsDecodeResult<T> {
  return type.decode(encode(schema, json), resolveXdsOptions(options));
}

/** The decoded value; fails the test with the NACK reason when the resource was rejected. */
export function accepted<T>(result: XdsDecodeResult<T>): T {
  if (!result.ok) assert.fail(`expected the resource to be accepted, got NACK: ${result.error}`);
  return result.value;
}

/** Asserts a NACK whose reason starts with `field: ` and (optionally) contains `text`; returns the reason. */
export function nacked<T>(result: XdsDecodeResult<T>, field: string, text?: string): string {
  if (result.ok) assert.fail(`expected a NACK at ${field}, but the resource was accepted`);
  assert.ok(result.error.startsWith(`${field}: `), `NACK reason "${result.error}" does not name ${field}`);
  if (text !== undefined)
    assert.ok(result.error.includes(text), `NACK reason "${result.error}" lacks "${text}"`);
  return result.error;
}

export const TYPE_PREFIX = 'type.googleapis.com/';
export const ROUTER: Json = { '@type': `${TYPE_PREFIX}envoy.extensions.filters.http.router.v3.Router` };
export const HCM_TYPE = `${TYPE_PREFIX}envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`;
