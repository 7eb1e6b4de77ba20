import type { PickArgs } from '../../core/index.js';

/**
 * The call attribute under which the xDS config selector hands the chosen cluster to
 * xds_cluster_manager_experimental (A31: "it will also return the cluster name to the top-level Load
 * Balancing Policy"). A string, so that grpc-js's string-valued pick information can carry it as is.
 */
export const XDS_CLUSTER_CALL_ATTRIBUTE = 'lbtree.xds.cluster';

/** The cluster the config selector chose for this call, if any. */
export function selectedCluster(args: PickArgs): string | undefined {
  const value = args.callAttributes?.get(XDS_CLUSTER_CALL_ATTRIBUTE);
  return typeof value === 'string' ? value : undefined;
}
