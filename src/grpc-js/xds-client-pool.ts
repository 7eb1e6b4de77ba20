import { loadBootstrap, type XdsBootstrap } from '../xds/client/bootstrap.js';
import { XdsClient } from '../xds/client/xds-client.js';
import { resolveXdsOptions, type XdsOptions } from '../xds/resources/xds-options.js';
import { ClusterTransportSecurityRegistry } from '../xds/transport-security.js';
import { CertificateProviderStore } from './certificate-provider.js';
import { grpcXdsTransportFactory, xdsClientTrace } from './xds-transport.js';

/** A shared client and the release that gives it back. */
export interface XdsClientLease {
  readonly client: XdsClient;
  /** A29: the bootstrap's certificate provider instances, shared by the client's channels. */
  readonly certificateProviders: CertificateProviderStore;
  /** A29: the clusters' TLS configs, one object per cluster shared by the client's channels. */
  readonly transportSecurity: ClusterTransportSecurityRegistry;
  /** Gives the lease back; the client closes when the last lease goes. Calling it twice is harmless. */
  release(): void;
}

interface PoolEntry {
  readonly client: XdsClient;
  readonly certificateProviders: CertificateProviderStore;
  /** A29: the clusters' TLS configs, one object per cluster shared by the client's channels. */
  readonly transportSecurity: ClusterTransportSecurityRegistry;
  leases: number;
}

const pool = new Map<string, PoolEntry>();

/**
 * The process-wide xDS client for a bootstrap (A27: one XdsClient, hence one ADS stream, shared by every xds:
 * channel). Without `bootstrap`, it comes from GRPC_XDS_BOOTSTRAP / GRPC_XDS_BOOTSTRAP_CONFIG. Channels with
 * the same bootstrap share a client; it runs on grpc-js, traces with GRPC_TRACE=xds_client (or lbtree).
 * The first lease of a bootstrap decides the decoder options. Throws the bootstrap's ConfigError.
 */
export function leaseXdsClient(bootstrap?: unknown, xdsOptions?: XdsOptions): XdsClientLease {
  const parsed: XdsBootstrap = loadBootstrap(bootstrap);
  // Maps (certificate_providers) are keyed by their entries: JSON would write each as {}.
  const key = JSON.stringify(parsed, (_k, v: unknown) => (v instanceof Map ? [...v] : v));
  let entry = pool.get(key);
  if (!entry) {
    const client = new XdsClient({
      bootstrap: parsed,
      transport: grpcXdsTransportFactory,
      trace: xdsClientTrace(),
      // A29: a Cluster may name only the bootstrap's certificate provider instances.
      decodeContext: resolveXdsOptions({
        ...xdsOptions,
        certificateProviderInstances: new Set(parsed.certificateProviders.keys()),
      }),
    });
    entry = {
      client,
      certificateProviders: new CertificateProviderStore(parsed.certificateProviders),
      transportSecurity: new ClusterTransportSecurityRegistry(),
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
    release() {
      if (released) return;
      released = true;
      if (--leased.leases === 0) {
        leased.client.close();
        pool.delete(key);
      }
    },
  };
}

/** The xDS clients channels use now (for CSDS, A40). */
export function pooledXdsClients(): XdsClient[] {
  return [...pool.values()].map((entry) => entry.client);
}
