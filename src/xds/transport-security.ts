// A cluster's transport security (gRFC A29, A82) on its way from the CDS resource to the connections: cds holds
// one object per cluster whose config follows the cluster's updates and hands it down the tree; xds_cluster_impl
// puts it on every subchannel it creates; the grpc-js adapter gives it to XdsChannelCredentials, which reads the
// current config at each connection attempt.

import { AttributeKey } from '../core/index.js';
import type { XdsUpstreamTls } from './resources/tls-context.js';

export class ClusterTransportSecurity {
  /** Absent: the cluster has no UpstreamTlsContext, connections use the fallback credentials. */
  upstreamTls: XdsUpstreamTls | undefined = undefined;
  constructor(public cluster: string) {}

  /** grpc-js's subchannel trace prints subchannel options as JSON. */
  toJSON(): string {
    return `xDS transport security of cluster ${this.cluster}`;
  }
}

/** The update attribute (channel args) cds sets for the tree below it. */
export const XDS_TRANSPORT_SECURITY_ARG = Symbol('lbtree.xds.transport_security');

/** The subchannel attribute xds_cluster_impl sets. */
export const XDS_TRANSPORT_SECURITY = new AttributeKey<ClusterTransportSecurity>(
  'lbtree.xds.transport_security',
);

export function transportSecurityOf(
  args: Readonly<Record<string | symbol, unknown>>,
): ClusterTransportSecurity | undefined {
  const value = args[XDS_TRANSPORT_SECURITY_ARG];
  return value instanceof ClusterTransportSecurity ? value : undefined;
}
