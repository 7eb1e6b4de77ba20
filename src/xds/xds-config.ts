// A74 "Changes in xds Resolver": the complete, consistent xDS configuration the dependency manager hands the
// resolver, and the resolver hands the LB tree as an update attribute. The cds and xds_cluster_impl policies
// read their cluster from it instead of watching the xDS client themselves, so a config change spanning
// several resources reaches the channel at once, never torn.

import type { ChannelArgs, StatusOr } from '../core/index.js';
import type {
  XdsCluster,
  XdsEndpointResource,
  XdsListener,
  XdsRouteConfiguration,
  XdsVirtualHost,
} from './resources/types.js';

/** Endpoints of an EDS or LOGICAL_DNS cluster. */
export interface XdsEndpointConfig {
  readonly kind: 'endpoints';
  /**
   * The EDS resource, or for LOGICAL_DNS one priority with one unnamed locality holding one endpoint with
   * every resolved address (A61 "Changes to Logical DNS Clusters"). Undefined when the endpoints could not be
   * obtained and none were obtained before; `resolutionNote` then says why.
   */
  readonly endpoints: XdsEndpointResource | undefined;
  readonly resolutionNote: string;
}

/** An aggregate cluster, flattened to its leaf clusters in priority order (A37, A75). */
export interface XdsAggregateConfig {
  readonly kind: 'aggregate';
  readonly leafClusters: readonly string[];
}

export interface XdsClusterConfig {
  readonly cluster: XdsCluster;
  readonly children: XdsEndpointConfig | XdsAggregateConfig;
}

/** The part of the XdsConfig the cluster policies (cds, xds_cluster_impl, xds_override_host) read. */
export interface XdsClusters {
  /**
   * Every cluster the routes name, every cluster an aggregate cluster reaches, and every dynamic subscription.
   * An error status when the cluster does not exist or was rejected with no good version before (A88).
   */
  readonly clusters: ReadonlyMap<string, StatusOr<XdsClusterConfig>>;
}

export interface XdsConfig extends XdsClusters {
  readonly listener: XdsListener;
  /** Set even when the route configuration is inlined in the listener. */
  readonly routeConfig: XdsRouteConfiguration;
  /** The virtual host selected for the channel's authority (one of routeConfig's). */
  readonly virtualHost: XdsVirtualHost;
}

/**
 * The update attribute (a ChannelArgs key no application can set) that carries the XdsConfig (A74); the
 * simulator's cluster trees (clusterToTree) carry only its clusters.
 */
export const XDS_CONFIG_ATTRIBUTE: unique symbol = Symbol('lbtree.xds.config');

/**
 * The update attribute carrying the channel's A42 `io.grpc.channel_id` (a bigint) beside the XdsConfig: only a
 * channel's flight recorder reads it (a replay hashes filter_state policies by it again).
 */
export const XDS_CHANNEL_ID_ATTRIBUTE: unique symbol = Symbol('lbtree.xds.channel_id');

export function xdsConfigOf(attributes: ChannelArgs): XdsConfig | undefined {
  return attributes[XDS_CONFIG_ATTRIBUTE] as XdsConfig | undefined;
}

/** The clusters of the XdsConfig (or of a simulated cluster tree) an update carries. */
export function xdsClustersOf(attributes: ChannelArgs): XdsClusters | undefined {
  return attributes[XDS_CONFIG_ATTRIBUTE] as XdsClusters | undefined;
}
