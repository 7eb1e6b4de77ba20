// A cluster's transport security (gRFC A29, A82) on its way from the CDS resource to the connections: cds holds
// one object per cluster and TLS config and hands it down the tree; xds_cluster_impl puts it on every subchannel
// it creates; the grpc-js adapter gives it to XdsChannelCredentials, which connects with it. The object is
// shared per xDS client, cluster and config (the resolver hands cds the client's registry), so channels of one
// client keep sharing grpc-js subchannels to an endpoint; a changed config is a new object, so its subchannels
// (and connections) are new ones.

import { AttributeKey } from '../core/index.js';
import type { XdsUpstreamTls } from './resources/tls-context.js';

export class ClusterTransportSecurity {
  readonly fingerprint: string;

  constructor(
    readonly cluster: string,
    /** Absent: the cluster has no UpstreamTlsContext, connections use the fallback credentials. */
    readonly upstreamTls: XdsUpstreamTls | undefined,
  ) {
    this.fingerprint = tlsFingerprint(upstreamTls);
  }

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
  private readonly held = new Map<string, { security: ClusterTransportSecurity; holders: number }>();

  acquire(cluster: string, upstreamTls: XdsUpstreamTls | undefined): ClusterTransportSecurity {
    const wanted = new ClusterTransportSecurity(cluster, upstreamTls);
    const key = `${cluster}\n${wanted.fingerprint}`;
    let entry = this.held.get(key);
    if (entry === undefined) {
      entry = { security: wanted, holders: 0 };
      this.held.set(key, entry);
    }
    entry.holders++;
    return entry.security;
  }

  release(security: ClusterTransportSecurity): void {
    const key = `${security.cluster}\n${security.fingerprint}`;
    const entry = this.held.get(key);
    if (entry === undefined || entry.security !== security) return;
    if (--entry.holders === 0) this.held.delete(key);
  }

  /** The resolver's attributes are printed by grpc-js's traces as JSON. */
  toJSON(): string {
    return `xDS transport security of ${this.held.size} cluster configs`;
  }
}

/** Equal for equal configs (a regex by its pattern): what tells a changed UpstreamTlsContext from a re-sent one. */
export function tlsFingerprint(tls: XdsUpstreamTls | undefined): string {
  if (tls === undefined) return 'plaintext';
  return JSON.stringify(tls, (_key, value: unknown) =>
    value !== null && typeof value === 'object' && 'regex' in value && typeof value.regex === 'object'
      ? { ...value, regex: String(value.regex) }
      : value,
  );
}

/** The update attribute (channel args) the xds resolver sets: its xDS client's registry. */
export const XDS_TRANSPORT_SECURITY_REGISTRY_ARG = Symbol('lbtree.xds.transport_security_registry');

export function transportSecurityRegistryOf(
  args: Readonly<Record<string | symbol, unknown>>,
): ClusterTransportSecurityRegistry | undefined {
  const value = args[XDS_TRANSPORT_SECURITY_REGISTRY_ARG];
  return value instanceof ClusterTransportSecurityRegistry ? value : undefined;
}
