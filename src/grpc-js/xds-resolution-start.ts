// The heavy half of an `xds:` channel's resolver: the shared xDS client, the resource decoders and the
// dependency manager. xds-resolver.ts imports this module on a channel's first resolution, so a process that
// registers lbtree without using `xds:` targets never loads them (they are most of lbtree's load time).

import type { MetricsRecorder } from '../core/index.js';
import { loadBootstrap, type XdsBootstrap } from '../xds/client/bootstrap.js';
import type { XdsClientDump } from '../xds/client/dump.js';
import { clientListenerResourceName } from '../xds/client/listener-name.js';
import type { XdsLoadReporting } from '../xds/load-store.js';
import { XdsResolution, type XdsResolutionResult } from '../xds/resolver/xds-resolution.js';
import {
  clusterResourceType,
  endpointResourceType,
  listenerResourceType,
  routeConfigurationResourceType,
} from '../xds/resources/index.js';
import type { ClusterTransportSecurityRegistry } from '../xds/transport-security.js';
import type { CertificateProviderStore } from './certificate-provider.js';
import { nodeDnsResolver } from './node-dns-resolver.js';
import { leaseXdsClient, type XdsClientLease } from './xds-client-pool.js';

const RESOURCE_TYPES = {
  listener: listenerResourceType,
  routeConfiguration: routeConfigurationResourceType,
  cluster: clusterResourceType,
  endpoint: endpointResourceType,
};

/** One channel's resolution and its lease on the shared client; `stop()` ends both. */
export interface XdsChannelResolution {
  /** A29: what XdsChannelCredentials finds the clusters' certificate provider instances in. */
  readonly certificateProviders: CertificateProviderStore;
  /** A29: the client's per-cluster TLS configs, for cds. */
  readonly transportSecurity: ClusterTransportSecurityRegistry;
  /** A27: the client's load reporting, for xds_cluster_impl. */
  readonly loadReporting: XdsLoadReporting;
  requestReresolution(): void;
  stop(): void;
  /** The CSDS view of the shared client the channel resolves on (the live view shows it). */
  readonly dump: () => XdsClientDump;
  /** The recorder the shared client records its metrics through (the first channel's), for the live view. */
  readonly clientMetrics: () => MetricsRecorder | undefined;
}

/** Some server list of the bootstrap has a server to fall back to (A71). */
function canFallBack(bootstrap: XdsBootstrap): boolean {
  return (
    bootstrap.xdsServers.length > 1 ||
    [...bootstrap.authorities.values()].some((a) => a.xdsServers.length > 1)
  );
}

/** An `xds:` target: `xds://authority/name` or `xds:///name` (authority undefined or ''). */
export interface XdsTarget {
  readonly authority: string | undefined;
  readonly name: string;
}

/**
 * Starts resolving the `xds:` target on the client for `bootstrap` (GRPC_XDS_BOOTSTRAP(_CONFIG) when
 * undefined) and the target (A71: one client per target); `metrics`: the channel's recorder, for the client's
 * metrics. Throws the bootstrap's ConfigError, or UnknownXdsAuthorityError for an authority the bootstrap
 * lacks (A47).
 */
export function startXdsResolution(
  target: XdsTarget,
  bootstrap: unknown,
  channelId: bigint,
  onResult: (result: XdsResolutionResult) => boolean,
  metrics?: MetricsRecorder,
): XdsChannelResolution {
  // A47 "xds Resolver Changes": the target's authority picks the template (and must be in the bootstrap).
  const parsed = loadBootstrap(bootstrap);
  const listenerName = clientListenerResourceName(parsed, target.authority, target.name);
  // A71 wants a client per target, so that one target falling back moves no other. That matters only where
  // there is a server to fall back to: with one server per list, the targets share a client and its one
  // stream per server (istio-agent closes every stream but a process's first).
  const scope = canFallBack(parsed) ? `xds://${target.authority ?? ''}/${target.name}` : '';
  const lease: XdsClientLease = leaseXdsClient(bootstrap, undefined, scope);
  // A78 / A79: a client shared by channels records its metrics through the first channel's recorder.
  if (metrics !== undefined) lease.client.useMetricsRecorder(metrics);
  const resolution = new XdsResolution({
    watcher: lease.client,
    types: RESOURCE_TYPES,
    // A47: the data plane authority (which selects the virtual host) stays the target's path.
    authority: target.name,
    listenerName,
    dns: nodeDnsResolver,
    channelId,
    random: Math.random,
    defer: (fn) => process.nextTick(fn),
    onResult,
  });
  return {
    certificateProviders: lease.certificateProviders,
    transportSecurity: lease.transportSecurity,
    loadReporting: lease.loadReporting,
    requestReresolution: () => resolution.requestReresolution(),
    dump: () => lease.client.dump(),
    clientMetrics: () => lease.client.metricsRecorder,
    stop: () => {
      resolution.destroy();
      lease.release();
    },
  };
}
