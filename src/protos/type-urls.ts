// The one table of type URLs: the four resource types of gRPC's xDS (and the discovery Resource wrapper), the
// names people read for them, and the one rule of state-of-the-world ADS that depends on the type.
// Literals, so reading a type URL loads no generated code (test/xds/generated-protos.test.ts checks them
// against the generated messages).

const PREFIX = 'type.googleapis.com/';

export const LISTENER_TYPE_URL = `${PREFIX}envoy.config.listener.v3.Listener`;
export const ROUTE_CONFIGURATION_TYPE_URL = `${PREFIX}envoy.config.route.v3.RouteConfiguration`;
export const CLUSTER_TYPE_URL = `${PREFIX}envoy.config.cluster.v3.Cluster`;
export const CLUSTER_LOAD_ASSIGNMENT_TYPE_URL = `${PREFIX}envoy.config.endpoint.v3.ClusterLoadAssignment`;
/** discovery.v3.Resource: the wrapper a response may put around a resource (A27; xdstp names, TTLs). */
export const RESOURCE_WRAPPER_TYPE_URL = `${PREFIX}envoy.service.discovery.v3.Resource`;

/** `type.googleapis.com/envoy.config.cluster.v3.Cluster` for `envoy.config.cluster.v3.Cluster`. */
export function typeUrlOf(typeName: string): string {
  return `${PREFIX}${typeName}`;
}

/** The message name after the last `/` of a type URL (any host part is accepted, as Any allows). */
export function typeNameOf(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf('/') + 1);
}

/** `Cluster` for the cluster type URL: short names for logs. */
export function shortTypeName(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf('.') + 1);
}

/**
 * LDS and CDS: every response carries the whole subscribed set, so a resource left out is deleted, and an
 * empty name list in the first request of the type is the (legacy) wildcard subscription. RDS and EDS name
 * their resources explicitly and a missing one means nothing.
 */
export function allResourcesRequiredInSotW(typeUrl: string): boolean {
  return typeUrl === LISTENER_TYPE_URL || typeUrl === CLUSTER_TYPE_URL;
}
