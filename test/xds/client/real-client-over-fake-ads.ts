// lbtree's real XdsClient and resource types over an in-memory ADS stream, in virtual time: the protocol under
// the dependency manager or the resolution a test builds on `client`. Build the watchers first, then
// `connect()`; `respond` sends one type's state-of-the-world response carrying the given resources.
import { type ResourceJson, ResourceSet } from '../../../src/control-plane/index.js';
import { VirtualClock } from '../../../src/sim/virtual-clock.js';
import { parseBootstrap } from '../../../src/xds/client/bootstrap.js';
import { XdsClient } from '../../../src/xds/client/xds-client.js';
import type { XdsResourceTypes } from '../../../src/xds/resolver/dependency-manager.js';
import {
  clusterResourceType,
  endpointResourceType,
  listenerResourceType,
  routeConfigurationResourceType,
} from '../../../src/xds/resources/index.js';
import { FakeAdsServer } from './fake-ads.js';

export const REAL_RESOURCE_TYPES: XdsResourceTypes = {
  listener: listenerResourceType,
  routeConfiguration: routeConfigurationResourceType,
  cluster: clusterResourceType,
  endpoint: endpointResourceType,
};

export interface RealClientOptions {
  /** The bootstrap server's server_features (A53 / A88: `fail_on_data_errors`, …). */
  readonly serverFeatures?: readonly string[];
  readonly dataErrorHandling?: boolean;
}

export function realClientOverFakeAds(options: RealClientOptions = {}) {
  const clock = new VirtualClock();
  const ads = new FakeAdsServer();
  const client = new XdsClient({
    bootstrap: parseBootstrap({
      xds_servers: [
        {
          server_uri: 'cp.example:443',
          channel_creds: [{ type: 'insecure' }],
          ...(options.serverFeatures && { server_features: [...options.serverFeatures] }),
        },
      ],
      node: { id: 'node-1', cluster: 'c' },
    }),
    transport: ads.factory,
    clock,
    ...(options.dataErrorHandling !== undefined && { dataErrorHandling: options.dataErrorHandling }),
  });
  /** Opens the stream with the subscriptions the watchers made so far. */
  const connect = () => {
    clock.runDue();
    ads.stream.connect();
    clock.runDue();
  };
  let version = 0;
  /** Sends the SotW response of one type carrying these resources. */
  const respond = (typeUrl: string, resources: ResourceJson[]) => {
    const set = ResourceSet.build(String(++version), resources);
    ads.stream.respond(
      typeUrl,
      String(version),
      [...set.ofType(typeUrl).values()].map((r) => r.any),
    );
    clock.runDue();
  };
  return { clock, ads, client, connect, respond };
}
