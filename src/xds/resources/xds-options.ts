import { envFlag, type PolicyLookup } from '../../core/index.js';
import { defaultRegistry } from '../../policies/default-registry.js';

// The gRFCs' temporary feature switches. Each is read when a resource is converted (not at import time), so a
// test or an application can flip the environment variable, or pass the option, per call. All are on unless
// set to "false"; an option passed in XdsOptions wins over the environment.

/** A52: `false` makes the converter ignore Cluster.load_balancing_policy and use the legacy fields. */
export const XDS_CUSTOM_LB_CONFIG_ENV = 'GRPC_EXPERIMENTAL_XDS_CUSTOM_LB_CONFIG';
/** A61: `false` ignores Endpoint.additional_addresses in EDS. */
export const XDS_DUALSTACK_ENDPOINTS_ENV = 'GRPC_EXPERIMENTAL_XDS_DUALSTACK_ENDPOINTS';
/** A42: `false` rejects ring hash (legacy RING_HASH is NACKed; the RingHash extension is unsupported). */
export const XDS_RING_HASH_ENV = 'GRPC_XDS_EXPERIMENTAL_ENABLE_RING_HASH';
/** A76: `true` ignores the `envoy.lb` `hash_key` endpoint metadata (the opt-out for the migration). */
export const XDS_ENDPOINT_HASH_KEY_BACKWARD_COMPAT_ENV = 'GRPC_XDS_ENDPOINT_HASH_KEY_BACKWARD_COMPAT';
/**
 * A55 / A60: `false` turns stateful session affinity off: DRAINING endpoints are left out of EDS updates and the
 * stateful_session HTTP filter is not known (a listener needing it is NACKed unless the filter is optional).
 */
export const XDS_OVERRIDE_HOST_ENV = 'GRPC_EXPERIMENTAL_XDS_ENABLE_OVERRIDE_HOST';

/** A82: `false` ignores CertificateValidationContext.system_root_certs (a cluster naming no roots is NACKed). */
export const XDS_SYSTEM_ROOT_CERTS_ENV = 'GRPC_EXPERIMENTAL_XDS_SYSTEM_ROOT_CERTS';

/**
 * A85: `false` restores A64's propagation of ORCA to LRS (every named metric, under its own key) and ignores
 * Cluster.lrs_report_endpoint_metrics.
 */
export const XDS_ORCA_LRS_PROPAGATION_ENV = 'GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION';

export interface XdsOptions {
  /**
   * The gRPC LB policy registry that custom (TypedStruct) policies are looked up in and that validates every
   * converted config. Default: the process-wide `defaultRegistry()`, which holds policies added with
   * `registerPolicy()`.
   */
  readonly registry?: PolicyLookup;
  /** A52 custom LB config; default from GRPC_EXPERIMENTAL_XDS_CUSTOM_LB_CONFIG (on unless "false"). */
  readonly customLbConfig?: boolean;
  /** A61 additional_addresses; default from GRPC_EXPERIMENTAL_XDS_DUALSTACK_ENDPOINTS (on unless "false"). */
  readonly dualstackEndpoints?: boolean;
  /** A42 ring hash; default from GRPC_XDS_EXPERIMENTAL_ENABLE_RING_HASH (on unless "false"). */
  readonly ringHash?: boolean;
  /** A76 endpoint hash keys; default on unless GRPC_XDS_ENDPOINT_HASH_KEY_BACKWARD_COMPAT is "true". */
  readonly endpointHashKey?: boolean;
  /** A55 stateful session affinity; default from GRPC_EXPERIMENTAL_XDS_ENABLE_OVERRIDE_HOST (on unless "false"). */
  readonly overrideHost?: boolean;
  /** A82 system root certs; default from GRPC_EXPERIMENTAL_XDS_SYSTEM_ROOT_CERTS (on unless "false"). */
  readonly systemRootCerts?: boolean;
  /** A85 ORCA → LRS propagation; default from GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION (on unless "false"). */
  readonly orcaLrsPropagation?: boolean;
  /**
   * A29: the bootstrap's `certificate_providers` instance names; a Cluster's UpstreamTlsContext naming another
   * is NACKed. Default: none (the xDS client pool passes its bootstrap's).
   */
  readonly certificateProviderInstances?: ReadonlySet<string>;
}

export interface ResolvedXdsOptions {
  readonly registry: PolicyLookup;
  readonly customLbConfig: boolean;
  readonly dualstackEndpoints: boolean;
  readonly ringHash: boolean;
  readonly endpointHashKey: boolean;
  readonly overrideHost: boolean;
  readonly systemRootCerts: boolean;
  readonly orcaLrsPropagation: boolean;
  readonly certificateProviderInstances: ReadonlySet<string>;
}

const NO_INSTANCES: ReadonlySet<string> = new Set();

export function resolveXdsOptions(options: XdsOptions = {}): ResolvedXdsOptions {
  return {
    registry: options.registry ?? defaultRegistry(),
    customLbConfig: options.customLbConfig ?? envFlag(XDS_CUSTOM_LB_CONFIG_ENV, true),
    dualstackEndpoints: options.dualstackEndpoints ?? envFlag(XDS_DUALSTACK_ENDPOINTS_ENV, true),
    ringHash: options.ringHash ?? envFlag(XDS_RING_HASH_ENV, true),
    endpointHashKey: options.endpointHashKey ?? !envFlag(XDS_ENDPOINT_HASH_KEY_BACKWARD_COMPAT_ENV, false),
    overrideHost: options.overrideHost ?? envFlag(XDS_OVERRIDE_HOST_ENV, true),
    systemRootCerts: options.systemRootCerts ?? envFlag(XDS_SYSTEM_ROOT_CERTS_ENV, true),
    orcaLrsPropagation: options.orcaLrsPropagation ?? envFlag(XDS_ORCA_LRS_PROPAGATION_ENV, true),
    certificateProviderInstances: options.certificateProviderInstances ?? NO_INSTANCES,
  };
}

/**
 * The options a resource type decodes with: the XdsClient hands its decoders the opaque context its owner gave
 * it (the resolved options, see src/grpc-js/xds-client-pool.ts); without one, the defaults.
 */
export function decodeOptions(context: unknown): ResolvedXdsOptions {
  return (context as ResolvedXdsOptions | undefined) ?? resolveXdsOptions();
}
