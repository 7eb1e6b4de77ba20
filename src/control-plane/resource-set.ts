// The resources a control plane serves: what users hand to `setResources` (proto3 JSON with "@type", built
// messages, or raw bytes) turned into Any messages keyed by type and name, checked once up front so a bad
// entry is reported with its index and the previous set keeps serving.
import {
  create,
  type DescMessage,
  fromJson,
  isMessage,
  type JsonValue,
  type Message,
  toBinary,
} from '@bufbuild/protobuf';
import { type Any, AnySchema, anyUnpack } from '@bufbuild/protobuf/wkt';
import { xdsTypeRegistry } from '../protos/type-registry.js';
import { shortTypeName, typeNameOf, typeUrlOf } from '../protos/type-urls.js';
import { parseResourceName } from '../xds/client/xdstp-name.js';

/** A resource in proto3 JSON: `{ "@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", … }`. */
export interface ResourceJson {
  readonly '@type': string;
  readonly [field: string]: unknown;
}

/**
 * Bytes served as they are, under a name the control plane cannot read from them: for testing how a client
 * treats a resource that does not decode.
 */
export interface RawResource {
  readonly typeUrl: string;
  readonly name: string;
  readonly value: Uint8Array;
}

/** One entry of `setResources`: proto3 JSON, a message built with @bufbuild/protobuf, or raw bytes. */
export type ResourceInput = ResourceJson | Message | RawResource;

/** A resource ready to be sent: its name, its type and the Any that carries it. */
export interface ServedResource {
  readonly typeUrl: string;
  readonly name: string;
  readonly any: Any;
}

/** Every resource of one version, by type URL then name. Immutable once built. */
export class ResourceSet {
  private constructor(
    readonly version: string,
    private readonly byType: ReadonlyMap<string, ReadonlyMap<string, ServedResource>>,
  ) {}

  static empty(version: string): ResourceSet {
    return new ResourceSet(version, new Map());
  }

  /** Converts and checks every input; throws an Error naming `resources[i]` on the first bad one. */
  static build(version: string, inputs: readonly ResourceInput[]): ResourceSet {
    const byType = new Map<string, Map<string, ServedResource>>();
    inputs.forEach((input, index) => {
      const resource = toServedResource(input, `resources[${index}]`);
      const names = byType.get(resource.typeUrl) ?? new Map<string, ServedResource>();
      byType.set(resource.typeUrl, names);
      const key = servedName(resource.name, resource.typeUrl);
      if (names.has(key)) {
        throw new Error(
          `resources[${index}]: a second ${shortTypeName(resource.typeUrl)} named "${resource.name}"`,
        );
      }
      names.set(key, resource);
    });
    return new ResourceSet(version, byType);
  }

  /** The resources of one type, by name (xdstp: names normalised: look them up with servedName). */
  ofType(typeUrl: string): ReadonlyMap<string, ServedResource> {
    return this.byType.get(typeUrl) ?? EMPTY;
  }

  get typeUrls(): string[] {
    return [...this.byType.keys()];
  }

  get size(): number {
    let n = 0;
    for (const names of this.byType.values()) n += names.size;
    return n;
  }

  /** `1 Listener, 3 Clusters, …` for logs. */
  summary(): string {
    if (this.byType.size === 0) return 'no resources';
    return [...this.byType]
      .map(([typeUrl, names]) => `${names.size} ${shortTypeName(typeUrl)}${names.size === 1 ? '' : 's'}`)
      .join(', ');
  }
}

const EMPTY: ReadonlyMap<string, ServedResource> = new Map();

/**
 * The key of a resource name in a set: an xdstp: name normalised as clients request it (A47: context
 * parameters sorted), so a resource file may spell it either way; any other name as it is.
 */
export function servedName(name: string, typeUrl: string): string {
  const parsed = parseResourceName(name, typeUrl);
  return parsed.ok ? parsed.canonical : name;
}

function isRawResource(input: object): input is RawResource {
  return (
    typeof (input as RawResource).typeUrl === 'string' &&
    typeof (input as RawResource).name === 'string' &&
    (input as RawResource).value instanceof Uint8Array
  );
}

function toServedResource(input: ResourceInput, path: string): ServedResource {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new Error(`${path}: expected a resource object, got ${describe(input)}`);
  }
  if (isMessage(input)) return fromMessage(input, path);
  if (isRawResource(input)) {
    return {
      typeUrl: input.typeUrl,
      name: input.name,
      any: create(AnySchema, { typeUrl: input.typeUrl, value: input.value }),
    };
  }
  return fromJsonResource(input as ResourceJson, path);
}

function fromJsonResource(json: ResourceJson, path: string): ServedResource {
  const typeUrl = json['@type'];
  if (typeof typeUrl !== 'string' || typeUrl === '') {
    throw new Error(`${path}: "@type" is missing (each resource names its type, e.g. ${EXAMPLE_TYPE})`);
  }
  const schema = schemaFor(typeNameOf(typeUrl), `${path}["@type"]`);
  const { '@type': _, ...fields } = json;
  let message: Message;
  try {
    message = fromJson(schema, fields as JsonValue, { registry: xdsTypeRegistry });
  } catch (e) {
    throw new Error(`${path} (${schema.name}): ${(e as Error).message}`);
  }
  return served(schema, message, path);
}

function fromMessage(message: Message, path: string): ServedResource {
  if (message.$typeName === AnySchema.typeName) {
    const unpacked = anyUnpack(message as Any, xdsTypeRegistry);
    if (!unpacked) {
      throw new Error(`${path}: Any of type ${(message as Any).typeUrl} is not a type lbtree knows`);
    }
    return fromMessage(unpacked, path);
  }
  return served(schemaFor(message.$typeName, `${path}.$typeName`), message, path);
}

function schemaFor(typeName: string, path: string): DescMessage {
  const schema = xdsTypeRegistry.getMessage(typeName);
  if (!schema) throw new Error(`${path}: unknown message type "${typeName}"`);
  return schema;
}

/** Resources are named by `name`, except ClusterLoadAssignment, named by `cluster_name`. */
function resourceName(schema: DescMessage, message: Message): string {
  const field =
    schema.fields.find((f) => f.name === 'name') ?? schema.fields.find((f) => f.name === 'cluster_name');
  const value = field ? (message as unknown as Record<string, unknown>)[field.localName] : undefined;
  return typeof value === 'string' ? value : '';
}

function served(schema: DescMessage, message: Message, path: string): ServedResource {
  const name = resourceName(schema, message);
  if (name === '') {
    const field = schema.typeName.endsWith('.ClusterLoadAssignment') ? 'cluster_name' : 'name';
    throw new Error(`${path} (${schema.name}): ${field} is empty; a served resource needs a name`);
  }
  const typeUrl = typeUrlOf(schema.typeName);
  return { typeUrl, name, any: create(AnySchema, { typeUrl, value: toBinary(schema, message) }) };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value;
}

const EXAMPLE_TYPE = '"type.googleapis.com/envoy.config.cluster.v3.Cluster"';
