// The heavy half of an `xds:` channel's resolver: the shared xDS client, the resource decoders and the
// dependency manager. xds-resolver.ts imports this module on a channel's first resolution, so a process that
// registers lbtree without using `xds:` targets never loads them (they are most of lbtree's load time).

import { loadBootstrap } from '../xds/client/bootstrap.js';
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
  requestReresolution(): void;
  stop(): void;
}

/**
 * Starts resolving the `xds:` target `name` on the client for `bootstrap` (GRPC_XDS_BOOTSTRAP(_CONFIG) when
 * undefined). Throws the bootstrap's ConfigError.
 */
export function startXdsResolution(
  name: string,
  bootstrap: unknown,
  channelId: bigint,
  onResult: (result: XdsResolutionResult) => boolean,
): XdsChannelResolution {
  const lease: XdsClientLease = leaseXdsClient(bootstrap);
  // A47: the listener name is the bootstrap's template with the target's name in place of %s.
  const template = loadBootstrap(bootstrap).clientDefaultListenerResourceNameTemplate;
  const resolution = new XdsResolution({
    watcher: lease.client,
    types: RESOURCE_TYPES,
    authority: name,
    listenerName: template.replace('%s', name),
    dns: nodeDnsResolver,
    channelId,
    random: Math.random,
    defer: (fn) => process.nextTick(fn),
    onResult,
  });
  return {
    certificateProviders: lease.certificateProviders,
    transportSecurity: lease.transportSecurity,
    requestReresolution: () => resolution.requestReresolution(),
    stop: () => {
      resolution.destroy();
      lease.release();
    },
  };
}
