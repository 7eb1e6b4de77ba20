// The CSDS answer (A40): one ClientConfig per xDS client in the pool, from its dump (src/xds/client/csds.ts).
// Loaded by csds-service.ts on the first CSDS request.

import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { status } from '@grpc/grpc-js';
import {
  ClientStatusRequestSchema,
  ClientStatusResponseSchema,
} from '../protos/gen/envoy/service/status/v3/csds_pb.js';
import { toCsdsClientConfig } from '../xds/client/csds.js';
import { pooledXdsClientScopes } from './xds-client-pool.js';

/** The response to one ClientStatusRequest (its bytes), or the status that refuses it. */
export function clientStatusResponse(
  request: Uint8Array,
): { bytes: Buffer } | { code: status; details: string } {
  let parsed: ReturnType<typeof fromBinary<typeof ClientStatusRequestSchema>>;
  try {
    parsed = fromBinary(ClientStatusRequestSchema, request);
  } catch (e) {
    return {
      code: status.INVALID_ARGUMENT,
      details: `CSDS: invalid ClientStatusRequest: ${(e as Error).message}`,
    };
  }
  // A40 "Node Matching": a gRPC process is one node; a request that filters by node is refused.
  if (parsed.nodeMatchers.length > 0) {
    return { code: status.INVALID_ARGUMENT, details: 'CSDS: node_matchers are not supported' };
  }
  const config = pooledXdsClientScopes().map(({ client, scope }) => {
    const c = toCsdsClientConfig(client.dump());
    // A71: the channel target whose client this is.
    c.clientScope = scope;
    if (parsed.excludeResourceContents) for (const r of c.genericXdsConfigs) r.xdsConfig = undefined;
    return c;
  });
  return {
    bytes: Buffer.from(toBinary(ClientStatusResponseSchema, create(ClientStatusResponseSchema, { config }))),
  };
}
