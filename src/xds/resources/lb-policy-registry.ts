// gRFC A52 "xDS LB Policy Registry": converts an xDS `envoy.config.cluster.v3.LoadBalancingPolicy` into gRPC's
// LoadBalancingConfig JSON, one converter per extension message type, recursing into nested policies (the
// WrrLocality endpoint_picking_policy) at most 16 levels deep. Each converted entry is then parsed by the gRPC
// LB policy registry, so a config that could never run is a NACK naming the xDS field it came from.

import type { DescMessage, MessageShape } from '@bufbuild/protobuf';
import type { PolicyLookup } from '../../core/index.js';
import { enumName } from '../../protos/decode.js';
import {
  type LoadBalancingPolicy,
  LoadBalancingPolicySchema,
} from '../../protos/gen/envoy/config/cluster/v3/cluster_pb.js';
import { ClientSideWeightedRoundRobinSchema } from '../../protos/gen/envoy/extensions/load_balancing_policies/client_side_weighted_round_robin/v3/client_side_weighted_round_robin_pb.js';
import { LeastRequestSchema } from '../../protos/gen/envoy/extensions/load_balancing_policies/least_request/v3/least_request_pb.js';
import { PickFirstSchema } from '../../protos/gen/envoy/extensions/load_balancing_policies/pick_first/v3/pick_first_pb.js';
import { RandomSubsettingSchema } from '../../protos/gen/envoy/extensions/load_balancing_policies/random_subsetting/v3/random_subsetting_pb.js';
import {
  RingHash_HashFunction,
  RingHash_HashFunctionSchema,
  RingHashSchema,
} from '../../protos/gen/envoy/extensions/load_balancing_policies/ring_hash/v3/ring_hash_pb.js';
import { RoundRobinSchema } from '../../protos/gen/envoy/extensions/load_balancing_policies/round_robin/v3/round_robin_pb.js';
import { WrrLocalitySchema } from '../../protos/gen/envoy/extensions/load_balancing_policies/wrr_locality/v3/wrr_locality_pb.js';
import { TypedStructSchema as UdpaTypedStructSchema } from '../../protos/gen/udpa/type/v1/typed_struct_pb.js';
import { TypedStructSchema as XdsTypedStructSchema } from '../../protos/gen/xds/type/v3/typed_struct_pb.js';
import type { JsonObject, JsonValue } from '../../protos/json.js';
import { decodeOrNack } from './decode-or-nack.js';
import { listWithin, XdsResourceError } from './errors.js';
import { type ResolvedXdsOptions, resolveXdsOptions, type XdsOptions } from './xds-options.js';

/** One LoadBalancingConfig entry: `{ "<policy name>": <config> }`. */
export type LbConfigEntry = { [policyName: string]: JsonValue };
/** A LoadBalancingConfig list, as a service config's `loadBalancingConfig` field holds it. */
export type LbConfigList = LbConfigEntry[];

/** A52: "Configurations that require more than 16 levels of recursion are considered invalid". */
export const MAX_LB_POLICY_DEPTH = 16;

/** A42 / A52: ring sizes above 8M are NACKed, as in Envoy; unset maximum_ring_size means 8M in xDS. */
export const XDS_MAX_RING_SIZE = 8_388_608;
export const XDS_DEFAULT_MIN_RING_SIZE = 1024;
/** A48: choice_count defaults to 2 and must be at least 2. */
export const XDS_DEFAULT_CHOICE_COUNT = 2;

/** What a converter is given besides the extension's bytes. */
export interface XdsLbConversion {
  /** The xDS field being converted, e.g. `load_balancing_policy.policies[0].typed_config (RingHash)`. */
  readonly path: string;
  /** The nesting level of the LoadBalancingPolicy this entry is in; the top level is 1. */
  readonly depth: number;
  readonly options: ResolvedXdsOptions;
  /** Decodes the extension's bytes as `schema` (a generated message); malformed bytes are a NACK at this entry. */
  decode<Desc extends DescMessage>(schema: Desc): MessageShape<Desc>;
  /** Converts a nested LoadBalancingPolicy found in `field` of this extension (one level deeper). */
  convertChild(policy: LoadBalancingPolicy, field: string): LbConfigList;
  /** Rejects the resource, naming `field` of this extension (or the extension itself when omitted). */
  fail(problem: string, field?: string): never;
}

/**
 * Converts one extension config to a LoadBalancingConfig entry, or returns null when this client does not
 * support it (the entry is skipped and the next one is tried). Throwing (through `conversion.fail`) NACKs.
 */
export type XdsLbPolicyConverter = (conversion: XdsLbConversion) => LbConfigEntry | null;

/**
 * The set of converters, keyed by the extension's message name (the type URL's last `/` segment).
 * `defaultXdsLbPolicyRegistry()` holds the converters A52 lists (and PickFirst, per A62).
 */
export class XdsLbPolicyRegistry {
  private readonly converters = new Map<string, XdsLbPolicyConverter>();

  register(messageName: string, converter: XdsLbPolicyConverter, options: { override?: boolean } = {}): void {
    if (this.converters.has(messageName) && !options.override) {
      throw new Error(`an xDS LB policy converter for ${messageName} is already registered`);
    }
    this.converters.set(messageName, converter);
  }

  has(messageName: string): boolean {
    return this.converters.has(messageName);
  }

  names(): string[] {
    return [...this.converters.keys()];
  }

  clone(): XdsLbPolicyRegistry {
    const copy = new XdsLbPolicyRegistry();
    for (const [name, converter] of this.converters) copy.register(name, converter);
    return copy;
  }

  /**
   * A52 `convertToServiceConfig`: the first supported entry of `policy.policies`, converted (nested policies
   * included) and validated by the gRPC LB policy registry, as a one-entry LoadBalancingConfig list. Throws an
   * {@link XdsResourceError} (the NACK reason) when an entry fails to convert, when the converted config does
   * not parse, or when no entry is supported. `path` names the field the message was found in.
   */
  convert(
    policy: LoadBalancingPolicy,
    options: XdsOptions | ResolvedXdsOptions = {},
    path = 'load_balancing_policy',
  ): LbConfigList {
    return this.convertAt(policy, isResolved(options) ? options : resolveXdsOptions(options), path, 1);
  }

  private convertAt(
    policy: LoadBalancingPolicy,
    options: ResolvedXdsOptions,
    path: string,
    depth: number,
  ): LbConfigList {
    if (depth > MAX_LB_POLICY_DEPTH) {
      throw new XdsResourceError(
        path,
        `load balancing policies nested more than ${MAX_LB_POLICY_DEPTH} levels deep (A52 limit)`,
      );
    }
    const skipped: string[] = [];
    for (let i = 0; i < policy.policies.length; i++) {
      const entryPath = `${path}.policies[${i}]`;
      const extension = policy.policies[i]!.typedExtensionConfig;
      if (extension === undefined)
        throw new XdsResourceError(`${entryPath}.typed_extension_config`, 'field not present');
      const any = extension.typedConfig;
      if (any === undefined) {
        throw new XdsResourceError(`${entryPath}.typed_extension_config.typed_config`, 'field not present');
      }
      const typeName = extensionTypeName(any.typeUrl, `${entryPath}.typed_config`);
      const converter = this.converters.get(typeName);
      if (!converter) {
        skipped.push(typeName);
        continue;
      }
      const at = `${entryPath}.typed_config (${typeName.slice(typeName.lastIndexOf('.') + 1)})`;
      const conversion: XdsLbConversion = {
        path: at,
        depth,
        options,
        decode: (schema) => decodeOrNack(schema, any.value, at),
        convertChild: (child, field) => this.convertAt(child, options, `${at}.${field}`, depth + 1),
        fail: (problem, field) => {
          throw new XdsResourceError(field === undefined ? at : `${at}.${field}`, problem);
        },
      };
      const entry = converter(conversion);
      if (entry === null) {
        skipped.push(typeName);
        continue;
      }
      validateEntry(entry, options.registry, at);
      return [entry];
    }
    throw new XdsResourceError(
      path,
      policy.policies.length === 0
        ? 'no load balancing policy given'
        : `no supported load balancing policy among [${listWithin(skipped)}]`,
    );
  }
}

function isResolved(options: XdsOptions | ResolvedXdsOptions): options is ResolvedXdsOptions {
  return (
    options.registry !== undefined &&
    typeof options.customLbConfig === 'boolean' &&
    typeof options.dualstackEndpoints === 'boolean' &&
    typeof options.ringHash === 'boolean' &&
    typeof options.endpointHashKey === 'boolean'
  );
}

/** The message name a type URL names; a URL without a name after its last `/` is invalid. */
function extensionTypeName(typeUrl: string, path: string): string {
  const slash = typeUrl.lastIndexOf('/');
  if (slash < 0 || slash === typeUrl.length - 1) {
    throw new XdsResourceError(`${path}.type_url`, `invalid type URL ${JSON.stringify(typeUrl)}`);
  }
  return typeUrl.slice(slash + 1);
}

/** A52: "The xDS client calls the gRPC LB policy registry to parse the config" — a failure there is a NACK. */
export function validateEntry(entry: LbConfigEntry, registry: PolicyLookup, path: string): void {
  try {
    registry.parseLbConfigList(entry, '$');
  } catch (e) {
    const name = Object.keys(entry)[0];
    throw new XdsResourceError(
      path,
      `the converted "${name}" config is rejected by the LB policy registry: ${(e as Error).message}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------------------
// The converters A52 lists

/** envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash → ring_hash_experimental. */
export const convertRingHash: XdsLbPolicyConverter = (c) => {
  if (!c.options.ringHash) return null; // GRPC_XDS_EXPERIMENTAL_ENABLE_RING_HASH=false: not supported here
  const m = c.decode(RingHashSchema);
  if (m.hashFunction !== RingHash_HashFunction.XX_HASH) {
    const name = enumName(RingHash_HashFunctionSchema, m.hashFunction);
    c.fail(`unsupported value ${name} (gRPC supports only XX_HASH)`, 'hash_function');
  }
  const sizes = ringSizes(m.minimumRingSize, m.maximumRingSize, (problem, field) => c.fail(problem, field));
  return { ring_hash_experimental: sizes };
};

/**
 * A42: min defaults to 1024 and max to 8,388,608 (Envoy's default, not ring_hash_experimental's 4096: the
 * local cap applies later); either above 8M, or min > max, is rejected.
 */
export function ringSizes(
  min: bigint | undefined,
  max: bigint | undefined,
  fail: (problem: string, field: string) => never,
  fieldNames: { min: string; max: string } = { min: 'minimum_ring_size', max: 'maximum_ring_size' },
): { minRingSize: number; maxRingSize: number } {
  const minRingSize = min ?? BigInt(XDS_DEFAULT_MIN_RING_SIZE);
  const maxRingSize = max ?? BigInt(XDS_MAX_RING_SIZE);
  const limit = BigInt(XDS_MAX_RING_SIZE);
  if (minRingSize < 1n || minRingSize > limit) {
    fail(`${minRingSize} is out of range [1, ${XDS_MAX_RING_SIZE}]`, fieldNames.min);
  }
  if (maxRingSize < 1n || maxRingSize > limit) {
    fail(`${maxRingSize} is out of range [1, ${XDS_MAX_RING_SIZE}]`, fieldNames.max);
  }
  if (minRingSize > maxRingSize) {
    fail(`${minRingSize} is greater than ${fieldNames.max} (${maxRingSize})`, fieldNames.min);
  }
  return { minRingSize: Number(minRingSize), maxRingSize: Number(maxRingSize) };
}

/** envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin → round_robin (no config). */
export const convertRoundRobin: XdsLbPolicyConverter = (c) => {
  c.decode(RoundRobinSchema);
  return { round_robin: {} };
};

/** envoy.extensions.load_balancing_policies.wrr_locality.v3.WrrLocality → xds_wrr_locality_experimental. */
export const convertWrrLocality: XdsLbPolicyConverter = (c) => {
  const m = c.decode(WrrLocalitySchema);
  if (m.endpointPickingPolicy === undefined) return c.fail('field not present', 'endpoint_picking_policy');
  const childPolicy = c.convertChild(m.endpointPickingPolicy, 'endpoint_picking_policy');
  return { xds_wrr_locality_experimental: { childPolicy } };
};

export const LEAST_REQUEST_POLICY = 'least_request_experimental';

/**
 * envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest → least_request_experimental
 * (`choiceCount`, default 2), "if least_request is supported by the client" (A52): when the gRPC registry has
 * no least_request_experimental the entry is skipped.
 */
export const convertLeastRequest: XdsLbPolicyConverter = (c) => {
  if (c.options.registry.get(LEAST_REQUEST_POLICY) === undefined) return null;
  const m = c.decode(LeastRequestSchema);
  const choiceCount = m.choiceCount ?? XDS_DEFAULT_CHOICE_COUNT;
  if (choiceCount < 2) c.fail(`${choiceCount} is less than 2`, 'choice_count');
  return { [LEAST_REQUEST_POLICY]: { choiceCount } };
};

export const WEIGHTED_ROUND_ROBIN_POLICY = 'weighted_round_robin';

/**
 * A58 "xDS Integration": envoy.extensions.load_balancing_policies.client_side_weighted_round_robin.v3
 * .ClientSideWeightedRoundRobin → weighted_round_robin, its fields carried over (durations as proto3 JSON
 * strings; A114's metric_names_for_computing_utilization copied as is, which weighted_round_robin reads only
 * while GRPC_EXPERIMENTAL_WRR_CUSTOM_METRICS is on); skipped when the gRPC registry has no weighted_round_robin.
 */
export const convertClientSideWeightedRoundRobin: XdsLbPolicyConverter = (c) => {
  if (c.options.registry.get(WEIGHTED_ROUND_ROBIN_POLICY) === undefined) return null;
  const m = c.decode(ClientSideWeightedRoundRobinSchema);
  const config: JsonObject = {};
  const duration = (d: { seconds: bigint; nanos: number } | undefined): string | undefined =>
    d === undefined ? undefined : `${d.seconds}.${String(d.nanos).padStart(9, '0')}s`;
  const fields = {
    enableOobLoadReport: m.enableOobLoadReport,
    oobReportingPeriod: duration(m.oobReportingPeriod),
    blackoutPeriod: duration(m.blackoutPeriod),
    weightExpirationPeriod: duration(m.weightExpirationPeriod),
    weightUpdatePeriod: duration(m.weightUpdatePeriod),
    errorUtilizationPenalty: m.errorUtilizationPenalty,
  };
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) config[k] = v;
  if (m.metricNamesForComputingUtilization.length > 0) {
    config.metricNamesForComputingUtilization = [...m.metricNamesForComputingUtilization];
  }
  const penalty = m.errorUtilizationPenalty;
  if (penalty !== undefined && penalty < 0) c.fail(`${penalty} is negative`, 'error_utilization_penalty');
  return { [WEIGHTED_ROUND_ROBIN_POLICY]: config };
};

/** A62: envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst → pick_first. */
export const convertPickFirst: XdsLbPolicyConverter = (c) => {
  const m = c.decode(PickFirstSchema);
  return { pick_first: { shuffleAddressList: m.shuffleAddressList } };
};

export const RANDOM_SUBSETTING_POLICY = 'random_subsetting_experimental';

/**
 * A68 "Integration with xDS LB Policy Registry": envoy.extensions.load_balancing_policies.random_subsetting.v3
 * .RandomSubsetting → random_subsetting_experimental, the same two fields (subset_size required and above 0,
 * child_policy converted as a nested LoadBalancingPolicy); skipped when the gRPC registry has no
 * random_subsetting_experimental.
 */
export const convertRandomSubsetting: XdsLbPolicyConverter = (c) => {
  if (c.options.registry.get(RANDOM_SUBSETTING_POLICY) === undefined) return null;
  const m = c.decode(RandomSubsettingSchema);
  if (m.subsetSize === undefined) return c.fail('field not present', 'subset_size');
  if (m.subsetSize === 0) return c.fail('must be greater than 0', 'subset_size');
  if (m.childPolicy === undefined) return c.fail('field not present', 'child_policy');
  const childPolicy = c.convertChild(m.childPolicy, 'child_policy');
  return { [RANDOM_SUBSETTING_POLICY]: { subsetSize: m.subsetSize, childPolicy } };
};

/**
 * xds.type.v3.TypedStruct / udpa.type.v1.TypedStruct: a custom policy deployed with the client, named by the
 * last `/` segment of `type_url`, its config the Struct as-is. Skipped unless that name is registered in the
 * gRPC LB policy registry.
 */
export function typedStructConverter(
  schema: typeof XdsTypedStructSchema | typeof UdpaTypedStructSchema,
): XdsLbPolicyConverter {
  return (c) => {
    const m = c.decode(schema);
    const name = extensionTypeName(m.typeUrl, c.path);
    if (c.options.registry.get(name) === undefined) return null;
    const config: JsonObject = m.value ?? {};
    return { [name]: config };
  };
}

let defaultConverters: XdsLbPolicyRegistry | undefined;

/**
 * The converters A52 lists (RingHash, RoundRobin, WrrLocality, LeastRequest, both TypedStructs), PickFirst (A62)
 * and RandomSubsetting (A68).
 */
export function defaultXdsLbPolicyRegistry(): XdsLbPolicyRegistry {
  if (!defaultConverters) {
    const r = new XdsLbPolicyRegistry();
    r.register(RingHashSchema.typeName, convertRingHash);
    r.register(RoundRobinSchema.typeName, convertRoundRobin);
    r.register(WrrLocalitySchema.typeName, convertWrrLocality);
    r.register(LeastRequestSchema.typeName, convertLeastRequest);
    r.register(ClientSideWeightedRoundRobinSchema.typeName, convertClientSideWeightedRoundRobin);
    r.register(PickFirstSchema.typeName, convertPickFirst);
    r.register(RandomSubsettingSchema.typeName, convertRandomSubsetting);
    r.register(XdsTypedStructSchema.typeName, typedStructConverter(XdsTypedStructSchema));
    r.register(UdpaTypedStructSchema.typeName, typedStructConverter(UdpaTypedStructSchema));
    defaultConverters = r;
  }
  return defaultConverters;
}

/** Decodes an encoded LoadBalancingPolicy message (a NACK reason on malformed bytes). */
export function decodeLoadBalancingPolicy(bytes: Uint8Array): LoadBalancingPolicy {
  return decodeOrNack(LoadBalancingPolicySchema, bytes);
}
