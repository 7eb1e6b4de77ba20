import {
  Attributes,
  ENDPOINT_WEIGHT,
  type Endpoint,
  HASH_KEY,
  HIERARCHICAL_PATH,
  LOCALITY,
  LOCALITY_WEIGHT,
  parseAddress,
} from '../core/index.js';

/** The plain attribute names the sim understands, mapped onto the typed per-endpoint attributes. */
export interface PlainEndpointAttributes {
  readonly path?: readonly string[];
  readonly weight?: number;
  readonly locality?: string;
  readonly localityWeight?: number;
  readonly hashKey?: string;
}

export interface PlainEndpoint {
  readonly addresses: readonly string[];
  readonly attributes?: PlainEndpointAttributes;
}

/** An endpoint as tests write it: `'10.0.0.1:80'`, `{ addresses: [...], attributes }`, or a core Endpoint. */
export type EndpointInput = string | PlainEndpoint | Endpoint;

function toAttributes(plain: PlainEndpointAttributes | undefined): Attributes {
  let attributes = Attributes.EMPTY;
  if (!plain) return attributes;
  if (plain.path !== undefined) attributes = attributes.with(HIERARCHICAL_PATH, plain.path);
  if (plain.weight !== undefined) attributes = attributes.with(ENDPOINT_WEIGHT, plain.weight);
  if (plain.locality !== undefined) attributes = attributes.with(LOCALITY, plain.locality);
  if (plain.localityWeight !== undefined) attributes = attributes.with(LOCALITY_WEIGHT, plain.localityWeight);
  if (plain.hashKey !== undefined) attributes = attributes.with(HASH_KEY, plain.hashKey);
  return attributes;
}

export function toEndpoint(input: EndpointInput): Endpoint {
  if (typeof input === 'string') return { addresses: [parseAddress(input)], attributes: Attributes.EMPTY };
  if (input.attributes instanceof Attributes) return input as Endpoint;
  const plain = input as PlainEndpoint;
  return {
    addresses: plain.addresses.map((a) => parseAddress(a)),
    attributes: toAttributes(plain.attributes),
  };
}
