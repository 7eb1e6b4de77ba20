import { create, type JsonObject } from '@bufbuild/protobuf';
import { LocalitySchema, type Node, NodeSchema } from '../../protos/gen/envoy/config/core/v3/base_pb.js';
import type { XdsNodeConfig } from './bootstrap.js';

export const USER_AGENT_NAME = 'lbtree';
export const USER_AGENT_VERSION = '0.1.0';

/**
 * Client features the server may rely on: endpoints' weights are not overprovisioned (A27), and resources
 * may arrive wrapped in discovery.v3.Resource.
 */
export const CLIENT_FEATURES = ['envoy.lb.does_not_support_overprovisioning', 'xds.config.resource-in-sotw'];

/** The Node of the first request of each type on a stream (A27 "Initial Request on the ADS Stream"). */
export function nodeProto(config: XdsNodeConfig): Node {
  return create(NodeSchema, {
    id: config.id,
    cluster: config.cluster,
    ...(config.locality && { locality: create(LocalitySchema, config.locality) }),
    ...(config.metadata && { metadata: config.metadata as JsonObject }),
    userAgentName: USER_AGENT_NAME,
    userAgentVersionType: { case: 'userAgentVersion', value: USER_AGENT_VERSION },
    clientFeatures: CLIENT_FEATURES,
  });
}
