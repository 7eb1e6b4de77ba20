import { fromBinary } from '@bufbuild/protobuf';
import type { Any } from '@bufbuild/protobuf/wkt';
import { ResourceSchema } from '../../protos/gen/envoy/service/discovery/v3/discovery_pb.js';
import { RESOURCE_WRAPPER_TYPE_URL } from '../../protos/type-urls.js';
import type { XdsDecodeContext, XdsResourceType } from './resource-type.js';

export interface DecodedResource<T> {
  readonly name: string;
  readonly value: T;
  readonly bytes: Uint8Array;
}

export interface InvalidResource {
  /** Undefined when the name could not be read. */
  readonly name: string | undefined;
  /** Index in the response's `resources`. */
  readonly index: number;
  readonly error: string;
}

export interface DecodedResponse<T> {
  readonly valid: DecodedResource<T>[];
  readonly invalid: InvalidResource[];
}

/**
 * Decodes every resource of a response, going on past errors so that a NACK names all the invalid resources
 * (A40 "Continue After First Error"). A resource may come wrapped in discovery.v3.Resource.
 */
export function decodeResources<T>(
  type: XdsResourceType<T>,
  resources: readonly Any[],
  context: XdsDecodeContext,
): DecodedResponse<T> {
  const valid: DecodedResource<T>[] = [];
  const invalid: InvalidResource[] = [];
  const seen = new Set<string>();
  resources.forEach((any, index) => {
    const result = decodeOne(type, any, context);
    if ('error' in result) {
      invalid.push({ name: result.name, index, error: result.error });
    } else if (seen.has(result.name)) {
      invalid.push({ name: result.name, index, error: 'duplicate resource name in the response' });
    } else {
      seen.add(result.name);
      valid.push(result);
    }
  });
  return { valid, invalid };
}

function decodeOne<T>(
  type: XdsResourceType<T>,
  any: Any,
  context: XdsDecodeContext,
): DecodedResource<T> | { name: string | undefined; error: string } {
  let inner = any;
  let wrapperName: string | undefined;
  if (any.typeUrl === RESOURCE_WRAPPER_TYPE_URL) {
    try {
      const wrapper = fromBinary(ResourceSchema, any.value);
      wrapperName = wrapper.name || undefined;
      if (!wrapper.resource) return { name: wrapperName, error: 'Resource wrapper without a resource' };
      inner = wrapper.resource;
    } catch (e) {
      return { name: undefined, error: `cannot decode the Resource wrapper: ${(e as Error).message}` };
    }
  }
  if (inner.typeUrl !== type.typeUrl) {
    return { name: wrapperName, error: `resource of type ${inner.typeUrl} in a ${type.typeUrl} response` };
  }
  let result: ReturnType<XdsResourceType<T>['decode']>;
  try {
    result = type.decode(inner.value, context);
  } catch (e) {
    return { name: wrapperName, error: `cannot decode: ${(e as Error).message}` };
  }
  if (!result.ok) return { name: result.name ?? wrapperName, error: result.error };
  if (wrapperName !== undefined && wrapperName !== result.name) {
    return {
      name: result.name,
      error: `Resource wrapper names "${wrapperName}", the resource "${result.name}"`,
    };
  }
  return { name: result.name, value: result.value, bytes: inner.value };
}
