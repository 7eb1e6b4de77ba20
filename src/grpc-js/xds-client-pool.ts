import { loadBootstrap, type XdsBootstrap } from '../xds/client/bootstrap.js';
import { XdsClient } from '../xds/client/xds-client.js';
import { LrsClient } from '../xds/lrs/lrs-client.js';
import { clusterResourceType } from '../xds/resources/index.js';
import { resolveXdsOptions, type XdsOptions } from '../xds/resources/xds-options.js';
import { ClusterTransportSecurityRegistry } from '../xds/transport-security.js';
import { CertificateProviderStore } from './certificate-provider.js';
import { xdsClientClock } from './xds-client-clock.js';
import { grpcXdsTransportFactory, xdsClientTrace } from './xds-transport.js';

/** A shared client and the release that gives it back. */
export interface XdsClientLease {
  readonly client: XdsClient;
  /** A29: the bootstrap's certificate provider instances, shared by the client's channels. */
  readonly certificateProviders: CertificateProviderStore;
  /** A29: the clusters' TLS configs, one object per cluster shared by the client's channels. */
  readonly transportSecurity: ClusterTransportSecurityRegistry;
  /** A27: the bootstrap's load reporting (one LRS stream per server), shared by the client's channels. */
  readonly loadReporting: LrsClient;
  /** Gives the lease back; the client closes when the last lease goes. Calling it twice is harmless. */
  release(): void;
}

interface PoolEntry {
  readonly client: XdsClient;
  /** A71: the channel target the client serves ('' when leased without one). */
  readonly scope: string;
  readonly certificateProviders: CertificateProviderStore;
  /** A29: the clusters' TLS configs, one object per cluster shared by the client's channels. */
  readonly transportSecurity: ClusterTransportSecurityRegistry;
  readonly loadReporting: LrsClient;
  leases: number;
}

const pool = new Map<string, PoolEntry>();

/**
 * The process-wide xDS client for a bootstrap and a scope (A71 "Change global XdsClient from a single
 * instance to per-target instances": the channels of one target share a client, so one target falling back
 * moves no other). Without `bootstrap`, it comes from GRPC_XDS_BOOTSTRAP / GRPC_XDS_BOOTSTRAP_CONFIG. It runs
 * on grpc-js, traces with GRPC_TRACE=xds_client (or lbtree). The first lease of a bootstrap and scope decides
 * the decoder options. Throws the bootstrap's ConfigError.
 */
export function leaseXdsClient(bootstrap?: unknown, xdsOptions?: XdsOptions, scope = ''): XdsClientLease {
  const parsed: XdsBootstrap = loadBootstrap(bootstrap);
  // Maps (certificate_providers, authorities) are keyed by their entries: JSON would write each as {}.
  const key = JSON.stringify([scope, parsed], (_k, v: unknown) => (v instanceof Map ? [...v] : v));
  let entry = pool.get(key);
  if (!entry) {
    const client = new XdsClient({
      bootstrap: parsed,
      transport: grpcXdsTransportFactory,
      trace: xdsClientTrace(),
      clock: xdsClientClock,
      // A29: a Cluster may name only the bootstrap's certificate provider instances.
      decodeContext: resolveXdsOptions({
        ...xdsOptions,
        certificateProviderInstances: new Set(parsed.certificateProviders.keys()),
      }),
    });
    entry = {
      client,
      scope,
      certificateProviders: new CertificateProviderStore(parsed.certificateProviders),
      transportSecurity: new ClusterTransportSecurityRegistry(),
      loadReporting: new LrsClient({
        bootstrap: parsed,
        transport: grpcXdsTransportFactory,
        trace: xdsClientTrace(),
        // A47: a cluster's LRS `self` is the server that sent it.
        serverOfCluster: (name) => client.serverOf(clusterResourceType, name),
      }),
      leases: 0,
    };
    pool.set(key, entry);
  }
  entry.leases++;
  const leased = entry;
  let released = false;
  return {
    client: leased.client,
    certificateProviders: leased.certificateProviders,
    transportSecurity: leased.transportSecurity,
    loadReporting: leased.loadReporting,
    release() {
      if (released) return;
      released = true;
      if (--leased.leases === 0) {
        leased.client.close();
        leased.loadReporting.close();
        pool.delete(key);
      }
    },
  };
}

/** The xDS clients channels use now (for CSDS, A40). */
export function pooledXdsClients(): XdsClient[] {
  return [...pool.values()].map((entry) => entry.client);
}

/** The same, each with its scope (A71: CSDS's `client_scope`, the channel target). */
export function pooledXdsClientScopes(): { readonly client: XdsClient; readonly scope: string }[] {
  return [...pool.values()].map((entry) => ({ client: entry.client, scope: entry.scope }));
}
