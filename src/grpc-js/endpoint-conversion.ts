import type { experimental } from '@grpc/grpc-js';
import {
  type Address,
  Attributes,
  ENDPOINT_WEIGHT,
  type Endpoint,
  err,
  HIERARCHICAL_PATH,
  LOCALITY,
  LOCALITY_WEIGHT,
  ok,
  type StatusOr,
  unavailable,
} from '../core/index.js';

/**
 * The fields @grpc/grpc-js-xds adds to the endpoints it hands its policies (its `LocalityEndpoint`), so that
 * lbtree's priority / weighted_target / wrr_locality / ring_hash work under grpc-js-xds's cluster policies.
 */
interface GrpcJsXdsEndpoint extends experimental.Endpoint {
  localityPath?: string[];
  locality?: { region?: string; zone?: string; sub_zone?: string };
  localityWeight?: number;
  endpointWeight?: number;
}

/**
 * grpc-js endpoints → ours. grpc-js addresses already have our shape ({host, port} or {path}), so they are
 * used as they are; an unchanged list keeps its address objects, and with them their cached keys.
 */
export function fromGrpcEndpoints(
  list: experimental.StatusOr<experimental.Endpoint[]>,
): StatusOr<readonly Endpoint[]> {
  if (!list.ok) return err(unavailable(list.error.details));
  return ok(list.value.map(fromGrpcEndpoint));
}

function fromGrpcEndpoint(e: GrpcJsXdsEndpoint): Endpoint {
  let attributes = Attributes.EMPTY;
  if (Array.isArray(e.localityPath)) attributes = attributes.with(HIERARCHICAL_PATH, e.localityPath);
  if (e.locality) {
    // grpc-js-xds's own locality naming, so names match what its cluster policies generate.
    const l = e.locality;
    attributes = attributes.with(
      LOCALITY,
      `{region=${l.region ?? ''},zone=${l.zone ?? ''},sub_zone=${l.sub_zone ?? ''}}`,
    );
  }
  if (typeof e.localityWeight === 'number') attributes = attributes.with(LOCALITY_WEIGHT, e.localityWeight);
  if (typeof e.endpointWeight === 'number') attributes = attributes.with(ENDPOINT_WEIGHT, e.endpointWeight);
  return { addresses: e.addresses as readonly Address[], attributes };
}
