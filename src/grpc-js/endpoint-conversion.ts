import type { experimental } from '@grpc/grpc-js';
import {
  type Address,
  Attributes,
  type Endpoint,
  err,
  ok,
  type StatusOr,
  unavailable,
} from '../core/index.js';

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

function fromGrpcEndpoint(e: experimental.Endpoint): Endpoint {
  return { addresses: e.addresses as readonly Address[], attributes: Attributes.EMPTY };
}
