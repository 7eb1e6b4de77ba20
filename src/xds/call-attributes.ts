import type { PickArgs } from '../core/index.js';

/**
 * The call attribute under which the xDS config selector hands the chosen cluster to
 * xds_cluster_manager_experimental (A31: "it will also return the cluster name to the top-level Load
 * Balancing Policy"). A string, so that grpc-js's string-valued pick information can carry it as is.
 */
export const XDS_CLUSTER_CALL_ATTRIBUTE = 'lbtree.xds.cluster';

/**
 * The pick information under which the xDS config selector names the route the call matched: its index in the
 * virtual host's routes, a decimal string. Only a channel's flight recorder reads it (calls per route).
 */
export const XDS_ROUTE_CALL_ATTRIBUTE = 'lbtree.xds.route';

/**
 * The pick information under which the xDS config selector names the call's path (`/service/method`), the
 * input its routes matched: only a channel's flight recorder reads it (what a replay matches again).
 */
export const XDS_PATH_CALL_ATTRIBUTE = 'lbtree.xds.path';

/** The cluster the config selector chose for this call, if any. */
export function selectedCluster(args: PickArgs): string | undefined {
  const value = args.callAttributes?.get(XDS_CLUSTER_CALL_ATTRIBUTE);
  return typeof value === 'string' ? value : undefined;
}

/**
 * The call attribute the stateful session filter (A55, A60, A61) hands xds_override_host_experimental, under
 * {@link XDS_OVERRIDE_HOST_CALL_ATTRIBUTE}. Present whenever the filter runs for the call, with or without a
 * cookie: the policy always reports the endpoint it used, so the filter can set the cookie.
 */
export interface OverrideHostCallState {
  /** A61: the cookie's address list (address keys such as `10.0.0.1:80`, `[::1]:80`); empty: no cookie. */
  readonly cookieAddresses: readonly string[];
  /**
   * A61 "Changes to Stateful Session Affinity": the picked endpoint's addresses, comma-separated, the address
   * actually used first — what the cookie must hold.
   */
  setActualAddressList(list: string): void;
}

export const XDS_OVERRIDE_HOST_CALL_ATTRIBUTE = 'lbtree.xds.override_host';

/** The stateful session state of this call, if the filter runs for it. */
export function overrideHostState(args: PickArgs): OverrideHostCallState | undefined {
  const value = args.callAttributes?.get(XDS_OVERRIDE_HOST_CALL_ATTRIBUTE);
  return typeof value === 'object' && value !== null ? (value as OverrideHostCallState) : undefined;
}
