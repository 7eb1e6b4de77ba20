// The xDS messages lbtree reads, described for codec.ts: the subset of each message's fields that gRPC's
// client-side load balancing looks at (plus a few that resources commonly carry), with the field numbers and
// types of the official Envoy / cncf-xds / protobuf definitions. Fields not listed here are skipped when
// decoding bytes. test/xds/official-protos.test.ts checks every field below against the official .proto files.

import { defineMessage, EnumType, type JsonObject, type JsonValue, type MessageType } from './codec.js';

// ---------------------------------------------------------------------------------------------------------
// google.protobuf

export const Any = defineMessage(
  'google.protobuf.Any',
  () => [
    { name: 'type_url', number: 1, type: 'string' },
    { name: 'value', number: 2, type: 'bytes' },
  ],
  'any',
);

export const NullValue = new EnumType('google.protobuf.NullValue', { NULL_VALUE: 0 });

export const Struct: MessageType = defineMessage(
  'google.protobuf.Struct',
  () => [{ name: 'fields', number: 1, type: Value, mapKey: 'string' }],
  'struct',
);

export const Value: MessageType = defineMessage(
  'google.protobuf.Value',
  () => [
    { name: 'null_value', number: 1, type: NullValue, oneof: 'kind' },
    { name: 'number_value', number: 2, type: 'double', oneof: 'kind' },
    { name: 'string_value', number: 3, type: 'string', oneof: 'kind' },
    { name: 'bool_value', number: 4, type: 'bool', oneof: 'kind' },
    { name: 'struct_value', number: 5, type: Struct, oneof: 'kind' },
    { name: 'list_value', number: 6, type: () => ListValue, oneof: 'kind' },
  ],
  'value',
);

export const ListValue: MessageType = defineMessage(
  'google.protobuf.ListValue',
  () => [{ name: 'values', number: 1, type: Value, repeated: true }],
  'list',
);

export const Duration = defineMessage(
  'google.protobuf.Duration',
  () => [
    { name: 'seconds', number: 1, type: 'int64' },
    { name: 'nanos', number: 2, type: 'int32' },
  ],
  'duration',
);

function wrapper(name: string, kind: 'double' | 'uint32' | 'uint64' | 'bool'): MessageType {
  return defineMessage(
    `google.protobuf.${name}`,
    () => [{ name: 'value', number: 1, type: kind }],
    'wrapper',
  );
}
export const DoubleValue = wrapper('DoubleValue', 'double');
export const UInt32Value = wrapper('UInt32Value', 'uint32');
export const UInt64Value = wrapper('UInt64Value', 'uint64');
export const BoolValue = wrapper('BoolValue', 'bool');

export interface AnyMessage {
  readonly typeUrl: string;
  readonly value: Uint8Array;
}

export interface DurationMessage {
  readonly seconds: bigint;
  readonly nanos: number;
}

// ---------------------------------------------------------------------------------------------------------
// xds.type.v3 / udpa.type.v1

function typedStruct(fullName: string): MessageType {
  return defineMessage(fullName, () => [
    { name: 'type_url', number: 1, type: 'string' },
    { name: 'value', number: 2, type: Struct },
  ]);
}
export const XdsTypedStruct = typedStruct('xds.type.v3.TypedStruct');
export const UdpaTypedStruct = typedStruct('udpa.type.v1.TypedStruct');

export interface TypedStructMessage {
  readonly typeUrl: string;
  readonly value: JsonObject | undefined;
}

// ---------------------------------------------------------------------------------------------------------
// envoy.config.core.v3

export const TypedExtensionConfig = defineMessage('envoy.config.core.v3.TypedExtensionConfig', () => [
  { name: 'name', number: 1, type: 'string' },
  { name: 'typed_config', number: 2, type: Any },
]);

export interface TypedExtensionConfigMessage {
  readonly name: string;
  readonly typedConfig: AnyMessage | undefined;
}

export const Locality = defineMessage('envoy.config.core.v3.Locality', () => [
  { name: 'region', number: 1, type: 'string' },
  { name: 'zone', number: 2, type: 'string' },
  { name: 'sub_zone', number: 3, type: 'string' },
]);

export interface LocalityMessage {
  readonly region: string;
  readonly zone: string;
  readonly subZone: string;
}

export const Metadata = defineMessage('envoy.config.core.v3.Metadata', () => [
  { name: 'filter_metadata', number: 1, type: Struct, mapKey: 'string' },
  { name: 'typed_filter_metadata', number: 2, type: Any, mapKey: 'string' },
]);

export interface MetadataMessage {
  readonly filterMetadata: Readonly<Record<string, JsonObject>>;
  readonly typedFilterMetadata: Readonly<Record<string, AnyMessage>>;
}

export const SocketAddressProtocol = new EnumType('envoy.config.core.v3.SocketAddress.Protocol', {
  TCP: 0,
  UDP: 1,
});

export const SocketAddress = defineMessage('envoy.config.core.v3.SocketAddress', () => [
  { name: 'protocol', number: 1, type: SocketAddressProtocol },
  { name: 'address', number: 2, type: 'string' },
  { name: 'port_value', number: 3, type: 'uint32', oneof: 'port_specifier' },
  { name: 'named_port', number: 4, type: 'string', oneof: 'port_specifier' },
  { name: 'resolver_name', number: 5, type: 'string' },
  { name: 'ipv4_compat', number: 6, type: 'bool' },
]);

export interface SocketAddressMessage {
  readonly protocol: number;
  readonly address: string;
  readonly portValue: number | undefined;
  readonly namedPort: string | undefined;
  readonly resolverName: string;
  readonly ipv4Compat: boolean;
}

export const Pipe = defineMessage('envoy.config.core.v3.Pipe', () => [
  { name: 'path', number: 1, type: 'string' },
  { name: 'mode', number: 2, type: 'uint32' },
]);

export const EnvoyInternalAddress = defineMessage('envoy.config.core.v3.EnvoyInternalAddress', () => [
  { name: 'server_listener_name', number: 1, type: 'string', oneof: 'address_name_specifier' },
  { name: 'endpoint_id', number: 2, type: 'string' },
]);

export const Address = defineMessage('envoy.config.core.v3.Address', () => [
  { name: 'socket_address', number: 1, type: SocketAddress, oneof: 'address' },
  { name: 'pipe', number: 2, type: Pipe, oneof: 'address' },
  { name: 'envoy_internal_address', number: 3, type: EnvoyInternalAddress, oneof: 'address' },
]);

export interface AddressMessage {
  readonly socketAddress: SocketAddressMessage | undefined;
  readonly pipe: { readonly path: string; readonly mode: number } | undefined;
  readonly envoyInternalAddress: object | undefined;
}

export const HealthStatus = new EnumType('envoy.config.core.v3.HealthStatus', {
  UNKNOWN: 0,
  HEALTHY: 1,
  UNHEALTHY: 2,
  DRAINING: 3,
  TIMEOUT: 4,
  DEGRADED: 5,
});

export const ApiVersion = new EnumType('envoy.config.core.v3.ApiVersion', { AUTO: 0, V2: 1, V3: 2 });

export const AggregatedConfigSource = defineMessage('envoy.config.core.v3.AggregatedConfigSource', () => []);

export const SelfConfigSource = defineMessage('envoy.config.core.v3.SelfConfigSource', () => [
  { name: 'transport_api_version', number: 1, type: ApiVersion },
]);

export const ConfigSource = defineMessage('envoy.config.core.v3.ConfigSource', () => [
  { name: 'path', number: 1, type: 'string', oneof: 'config_source_specifier' },
  { name: 'ads', number: 3, type: AggregatedConfigSource, oneof: 'config_source_specifier' },
  { name: 'initial_fetch_timeout', number: 4, type: Duration },
  { name: 'self', number: 5, type: SelfConfigSource, oneof: 'config_source_specifier' },
  { name: 'resource_api_version', number: 6, type: ApiVersion },
]);

export interface ConfigSourceMessage {
  readonly path: string | undefined;
  readonly ads: object | undefined;
  readonly self: object | undefined;
  readonly initialFetchTimeout: DurationMessage | undefined;
  readonly resourceApiVersion: number;
}

export const RuntimeDouble = defineMessage('envoy.config.core.v3.RuntimeDouble', () => [
  { name: 'default_value', number: 1, type: 'double' },
  { name: 'runtime_key', number: 2, type: 'string' },
]);

// ---------------------------------------------------------------------------------------------------------
// envoy.type.v3

export const FractionalPercentDenominator = new EnumType('envoy.type.v3.FractionalPercent.DenominatorType', {
  HUNDRED: 0,
  TEN_THOUSAND: 1,
  MILLION: 2,
});

export const FractionalPercent = defineMessage('envoy.type.v3.FractionalPercent', () => [
  { name: 'numerator', number: 1, type: 'uint32' },
  { name: 'denominator', number: 2, type: FractionalPercentDenominator },
]);

export interface FractionalPercentMessage {
  readonly numerator: number;
  readonly denominator: number;
}

// ---------------------------------------------------------------------------------------------------------
// envoy.config.cluster.v3

export const LoadBalancingPolicyPolicy = defineMessage(
  'envoy.config.cluster.v3.LoadBalancingPolicy.Policy',
  () => [{ name: 'typed_extension_config', number: 4, type: TypedExtensionConfig }],
);

export const LoadBalancingPolicy = defineMessage('envoy.config.cluster.v3.LoadBalancingPolicy', () => [
  { name: 'policies', number: 1, type: LoadBalancingPolicyPolicy, repeated: true },
]);

export interface LoadBalancingPolicyMessage {
  readonly policies: readonly { readonly typedExtensionConfig: TypedExtensionConfigMessage | undefined }[];
}

export const DiscoveryType = new EnumType('envoy.config.cluster.v3.Cluster.DiscoveryType', {
  STATIC: 0,
  STRICT_DNS: 1,
  LOGICAL_DNS: 2,
  EDS: 3,
  ORIGINAL_DST: 4,
});

export const LbPolicy = new EnumType('envoy.config.cluster.v3.Cluster.LbPolicy', {
  ROUND_ROBIN: 0,
  LEAST_REQUEST: 1,
  RING_HASH: 2,
  RANDOM: 3,
  MAGLEV: 5,
  CLUSTER_PROVIDED: 6,
  LOAD_BALANCING_POLICY_CONFIG: 7,
});

/** The legacy ring hash config's enum: note XX_HASH is 0 here, unlike the RingHash extension's. */
export const LegacyRingHashFunction = new EnumType(
  'envoy.config.cluster.v3.Cluster.RingHashLbConfig.HashFunction',
  { XX_HASH: 0, MURMUR_HASH_2: 1 },
);

export const CustomClusterType = defineMessage('envoy.config.cluster.v3.Cluster.CustomClusterType', () => [
  { name: 'name', number: 1, type: 'string' },
  { name: 'typed_config', number: 2, type: Any },
]);

export const EdsClusterConfig = defineMessage('envoy.config.cluster.v3.Cluster.EdsClusterConfig', () => [
  { name: 'eds_config', number: 1, type: ConfigSource },
  { name: 'service_name', number: 2, type: 'string' },
]);

export const RingHashLbConfig = defineMessage('envoy.config.cluster.v3.Cluster.RingHashLbConfig', () => [
  { name: 'minimum_ring_size', number: 1, type: UInt64Value },
  { name: 'hash_function', number: 3, type: LegacyRingHashFunction },
  { name: 'maximum_ring_size', number: 4, type: UInt64Value },
]);

export const LeastRequestLbConfig = defineMessage(
  'envoy.config.cluster.v3.Cluster.LeastRequestLbConfig',
  () => [
    { name: 'choice_count', number: 1, type: UInt32Value },
    { name: 'active_request_bias', number: 2, type: RuntimeDouble },
  ],
);

export const Cluster = defineMessage('envoy.config.cluster.v3.Cluster', () => [
  { name: 'name', number: 1, type: 'string' },
  { name: 'type', number: 2, type: DiscoveryType, oneof: 'cluster_discovery_type' },
  { name: 'eds_cluster_config', number: 3, type: EdsClusterConfig },
  { name: 'connect_timeout', number: 4, type: Duration },
  { name: 'lb_policy', number: 6, type: LbPolicy },
  { name: 'ring_hash_lb_config', number: 23, type: RingHashLbConfig, oneof: 'lb_config' },
  { name: 'metadata', number: 25, type: Metadata },
  { name: 'load_assignment', number: 33, type: () => ClusterLoadAssignment },
  { name: 'least_request_lb_config', number: 37, type: LeastRequestLbConfig, oneof: 'lb_config' },
  { name: 'cluster_type', number: 38, type: CustomClusterType, oneof: 'cluster_discovery_type' },
  { name: 'load_balancing_policy', number: 41, type: LoadBalancingPolicy },
  { name: 'lrs_server', number: 42, type: ConfigSource },
]);

export interface ClusterMessage {
  readonly name: string;
  /** A DiscoveryType value; undefined when `cluster_type` is set instead (or neither is). */
  readonly type: number | undefined;
  readonly clusterType: { readonly name: string; readonly typedConfig: AnyMessage | undefined } | undefined;
  readonly edsClusterConfig:
    | { readonly edsConfig: ConfigSourceMessage | undefined; readonly serviceName: string }
    | undefined;
  readonly connectTimeout: DurationMessage | undefined;
  readonly lbPolicy: number;
  readonly ringHashLbConfig:
    | {
        readonly minimumRingSize: bigint | undefined;
        readonly hashFunction: number;
        readonly maximumRingSize: bigint | undefined;
      }
    | undefined;
  readonly leastRequestLbConfig: { readonly choiceCount: number | undefined } | undefined;
  readonly metadata: MetadataMessage | undefined;
  readonly loadAssignment: ClusterLoadAssignmentMessage | undefined;
  readonly loadBalancingPolicy: LoadBalancingPolicyMessage | undefined;
  readonly lrsServer: ConfigSourceMessage | undefined;
}

// ---------------------------------------------------------------------------------------------------------
// envoy.extensions.load_balancing_policies.*.v3

export const RingHashFunction = new EnumType(
  'envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash.HashFunction',
  { DEFAULT_HASH: 0, XX_HASH: 1, MURMUR_HASH_2: 2 },
);

export const RingHash = defineMessage(
  'envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash',
  () => [
    { name: 'hash_function', number: 1, type: RingHashFunction },
    { name: 'minimum_ring_size', number: 2, type: UInt64Value },
    { name: 'maximum_ring_size', number: 3, type: UInt64Value },
    { name: 'use_hostname_for_hashing', number: 4, type: 'bool' },
    { name: 'hash_balance_factor', number: 5, type: UInt32Value },
  ],
);

export interface RingHashMessage {
  readonly hashFunction: number;
  readonly minimumRingSize: bigint | undefined;
  readonly maximumRingSize: bigint | undefined;
  readonly useHostnameForHashing: boolean;
  readonly hashBalanceFactor: number | undefined;
}

export const RoundRobin = defineMessage(
  'envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin',
  () => [],
);

export const WrrLocality = defineMessage(
  'envoy.extensions.load_balancing_policies.wrr_locality.v3.WrrLocality',
  () => [{ name: 'endpoint_picking_policy', number: 1, type: LoadBalancingPolicy }],
);

export interface WrrLocalityMessage {
  readonly endpointPickingPolicy: LoadBalancingPolicyMessage | undefined;
}

export const LeastRequestSelectionMethod = new EnumType(
  'envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest.SelectionMethod',
  { N_CHOICES: 0, FULL_SCAN: 1 },
);

export const LeastRequest = defineMessage(
  'envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest',
  () => [
    { name: 'choice_count', number: 1, type: UInt32Value },
    { name: 'active_request_bias', number: 2, type: RuntimeDouble },
    { name: 'enable_full_scan', number: 5, type: BoolValue },
    { name: 'selection_method', number: 6, type: LeastRequestSelectionMethod },
  ],
);

export interface LeastRequestMessage {
  readonly choiceCount: number | undefined;
}

export const PickFirst = defineMessage(
  'envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst',
  () => [{ name: 'shuffle_address_list', number: 1, type: 'bool' }],
);

export interface PickFirstMessage {
  readonly shuffleAddressList: boolean;
}

// ---------------------------------------------------------------------------------------------------------
// envoy.config.endpoint.v3

export const AdditionalAddress = defineMessage('envoy.config.endpoint.v3.Endpoint.AdditionalAddress', () => [
  { name: 'address', number: 1, type: Address },
]);

export const EndpointMsg = defineMessage('envoy.config.endpoint.v3.Endpoint', () => [
  { name: 'address', number: 1, type: Address },
  { name: 'hostname', number: 3, type: 'string' },
  { name: 'additional_addresses', number: 4, type: AdditionalAddress, repeated: true },
]);

export interface EndpointMessage {
  readonly address: AddressMessage | undefined;
  readonly hostname: string;
  readonly additionalAddresses: readonly { readonly address: AddressMessage | undefined }[];
}

export const LbEndpoint = defineMessage('envoy.config.endpoint.v3.LbEndpoint', () => [
  { name: 'endpoint', number: 1, type: EndpointMsg, oneof: 'host_identifier' },
  { name: 'health_status', number: 2, type: HealthStatus },
  { name: 'metadata', number: 3, type: Metadata },
  { name: 'load_balancing_weight', number: 4, type: UInt32Value },
  { name: 'endpoint_name', number: 5, type: 'string', oneof: 'host_identifier' },
]);

export interface LbEndpointMessage {
  readonly endpoint: EndpointMessage | undefined;
  readonly endpointName: string | undefined;
  readonly healthStatus: number;
  readonly metadata: MetadataMessage | undefined;
  readonly loadBalancingWeight: number | undefined;
}

export const LocalityLbEndpoints = defineMessage('envoy.config.endpoint.v3.LocalityLbEndpoints', () => [
  { name: 'locality', number: 1, type: Locality },
  { name: 'lb_endpoints', number: 2, type: LbEndpoint, repeated: true },
  { name: 'load_balancing_weight', number: 3, type: UInt32Value },
  { name: 'priority', number: 5, type: 'uint32' },
  { name: 'proximity', number: 6, type: UInt32Value },
  { name: 'metadata', number: 9, type: Metadata },
]);

export interface LocalityLbEndpointsMessage {
  readonly locality: LocalityMessage | undefined;
  readonly lbEndpoints: readonly LbEndpointMessage[];
  readonly loadBalancingWeight: number | undefined;
  readonly priority: number;
  readonly proximity: number | undefined;
  readonly metadata: MetadataMessage | undefined;
}

export const DropOverload = defineMessage(
  'envoy.config.endpoint.v3.ClusterLoadAssignment.Policy.DropOverload',
  () => [
    { name: 'category', number: 1, type: 'string' },
    { name: 'drop_percentage', number: 2, type: FractionalPercent },
  ],
);

export const ClusterLoadAssignmentPolicy = defineMessage(
  'envoy.config.endpoint.v3.ClusterLoadAssignment.Policy',
  () => [
    { name: 'drop_overloads', number: 2, type: DropOverload, repeated: true },
    { name: 'overprovisioning_factor', number: 3, type: UInt32Value },
    { name: 'endpoint_stale_after', number: 4, type: Duration },
    { name: 'weighted_priority_health', number: 6, type: 'bool' },
  ],
);

export const ClusterLoadAssignment: MessageType = defineMessage(
  'envoy.config.endpoint.v3.ClusterLoadAssignment',
  () => [
    { name: 'cluster_name', number: 1, type: 'string' },
    { name: 'endpoints', number: 2, type: LocalityLbEndpoints, repeated: true },
    { name: 'policy', number: 4, type: ClusterLoadAssignmentPolicy },
    { name: 'named_endpoints', number: 5, type: EndpointMsg, mapKey: 'string' },
  ],
);

export interface ClusterLoadAssignmentMessage {
  readonly clusterName: string;
  readonly endpoints: readonly LocalityLbEndpointsMessage[];
  readonly policy:
    | {
        readonly dropOverloads: readonly {
          readonly category: string;
          readonly dropPercentage: FractionalPercentMessage | undefined;
        }[];
        readonly overprovisioningFactor: number | undefined;
      }
    | undefined;
  readonly namedEndpoints: Readonly<Record<string, EndpointMessage>>;
}

/** Type URLs as an xDS server writes them. */
export function typeUrlOf(type: MessageType): string {
  return `type.googleapis.com/${type.fullName}`;
}

export type { JsonObject, JsonValue };
