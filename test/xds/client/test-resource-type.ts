import type { XdsDecodeResult, XdsResourceType } from '../../../src/xds/client/resource-type.js';
import { anyOf } from './fake-ads.js';

/**
 * Tiny test-only resource types: the bytes are the JSON `{ "name": …, "value": … }`; a resource whose
 * `value` is negative is invalid (the NACK reason names the field).
 */
export interface Thing {
  readonly name: string;
  readonly value: number;
}

function decodeThing(bytes: Uint8Array): XdsDecodeResult<Thing> {
  let json: { name?: unknown; value?: unknown };
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return { ok: false, name: undefined, error: 'not JSON' };
  }
  if (typeof json.name !== 'string') return { ok: false, name: undefined, error: 'name: missing' };
  if (typeof json.value !== 'number' || json.value < 0) {
    return {
      ok: false,
      name: json.name,
      error: `value: ${JSON.stringify(json.value)} is not a non-negative number`,
    };
  }
  return { ok: true, name: json.name, value: { name: json.name, value: json.value } };
}

/** Like LDS / CDS: a resource missing from a response is deleted. */
export const wholeThingType: XdsResourceType<Thing> = {
  typeUrl: 'type.googleapis.com/lbtree.test.WholeThing',
  allResourcesRequiredInSotW: true,
  decode: decodeThing,
};

/** Like RDS / EDS: a response carries only some resources. */
export const partThingType: XdsResourceType<Thing> = {
  typeUrl: 'type.googleapis.com/lbtree.test.PartThing',
  allResourcesRequiredInSotW: false,
  decode: decodeThing,
};

export function thing(typeUrl: string, name: string, value: unknown) {
  return anyOf(typeUrl, new TextEncoder().encode(JSON.stringify({ name, value })));
}
