// A cluster's transport security (gRFC A29, A82) on its way from the CDS resource to the connections: cds holds
// one object per cluster whose config follows the cluster's updates and hands it down the tree; xds_cluster_impl
// puts it on every subchannel it creates; the grpc-js adapter gives it to XdsChannelCredentials, which reads the
// current config at each connection attempt. The object is shared per xDS client and cluster (the resolver
// hands cds the client's registry), so channels of one client keep sharing grpc-js subchannels to an endpoint.

import { AttributeKey } from '../core/index.js';
import type { XdsUpstreamTls } from './resources/tls-context.js';

export class ClusterTransportSecurity {
  /** Absent: the cluster has no UpstreamTlsContext, connections use the fallback credentials. */
  upstreamTls: XdsUpstreamTls | undefined = undefined;
  constructor(readonly cluster: string) {}

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

/**
 * The ClusterTransportSecurity objects of one xDS client, one per cluster name while any cds holds it. The
 * resolver puts the client's registry in the update attributes; without one (the simulator), cds keeps its own.
 */
export class ClusterTransportSecurityRegistry {
  private readonly byCluster = new Map<string, { security: ClusterTransportSecurity; holders: number }>();

  acquire(cluster: string): ClusterTransportSecurity {
    let entry = this.byCluster.get(cluster);
    if (entry === undefined) {
      entry = { security: new ClusterTransportSecurity(cluster), holders: 0 };
      this.byCluster.set(cluster, entry);
    }
    entry.holders++;
    return entry.security;
  }

  release(security: ClusterTransportSecurity): void {
    const entry = this.byCluster.get(security.cluster);
    if (entry === undefined || entry.security !== security) return;
    if (--entry.holders === 0) this.byCluster.delete(security.cluster);
  }

  /** The resolver's attributes are printed by grpc-js's traces as JSON. */
  toJSON(): string {
    return `xDS transport security of ${this.byCluster.size} clusters`;
  }
}

/** The update attribute (channel args) the xds resolver sets: its xDS client's registry. */
export const XDS_TRANSPORT_SECURITY_REGISTRY_ARG = Symbol('lbtree.xds.transport_security_registry');

export function transportSecurityRegistryOf(
  args: Readonly<Record<string | symbol, unknown>>,
): ClusterTransportSecurityRegistry | undefined {
  const value = args[XDS_TRANSPORT_SECURITY_REGISTRY_ARG];
  return value instanceof ClusterTransportSecurityRegistry ? value : undefined;
}
