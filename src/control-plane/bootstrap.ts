// The bootstrap a gRPC xDS client needs to reach a control plane (gRFC A27 "xDS Bootstrap File"): one
// insecure xds_server and a node identity, in the JSON form (XdsBootstrapJson) that both @grpc/grpc-js-xds
// and lbtree's client read.

import type { XdsBootstrapJson } from '../xds/client/bootstrap.js';

export interface BootstrapOptions {
  /** node.id the client reports (and the control plane logs its ACKs under); default "lbtree-client". */
  readonly nodeId?: string;
  readonly nodeCluster?: string;
  readonly locality?: { readonly region?: string; readonly zone?: string; readonly sub_zone?: string };
  /** server_features; default ["xds_v3"]. Add "ignore_resource_deletion" for gRFC A53. */
  readonly serverFeatures?: readonly string[];
}

/** A bootstrap for a control plane on `port` of 127.0.0.1, or on "host:port". */
export function bootstrapFor(
  portOrAddress: number | string,
  options: BootstrapOptions = {},
): XdsBootstrapJson {
  const serverUri =
    typeof portOrAddress === 'number' ? `127.0.0.1:${portOrAddress}` : reachable(portOrAddress);
  return {
    xds_servers: [
      {
        server_uri: serverUri,
        channel_creds: [{ type: 'insecure' }],
        server_features: [...(options.serverFeatures ?? ['xds_v3'])],
      },
    ],
    node: {
      id: options.nodeId ?? 'lbtree-client',
      ...(options.nodeCluster !== undefined ? { cluster: options.nodeCluster } : {}),
      // Always present: @grpc/grpc-js-xds 1.14 rejects a node without a locality.
      locality: options.locality ?? {},
    },
  };
}

/** A server listening on every interface is reached on loopback. */
function reachable(address: string): string {
  if (address.startsWith('0.0.0.0:')) return `127.0.0.1:${address.slice('0.0.0.0:'.length)}`;
  if (address.startsWith('[::]:')) return `[::1]:${address.slice('[::]:'.length)}`;
  return address;
}
