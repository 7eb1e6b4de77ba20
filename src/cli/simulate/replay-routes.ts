// Which cluster each replayed call of an xDS channel goes to. The channel's config selector chose a route and a
// cluster for each call (A28: the first matching route; weighted_clusters at random by weight) and handed the
// cluster to the LB tree as a call attribute: an input of the tree, which the recording counts per interval,
// route and cluster. The replay gives its calls the same clusters, spread evenly over the interval; what the
// tree does with them (each cluster's priorities, localities, endpoints) is the simulated tree's own.

import type { RoutePicks } from '../../recorder/index.js';
import { clusterChildName } from '../../xds/resolver/config-selector.js';

/**
 * The (route, cluster) of each of an interval's `n` calls, spread evenly: each call goes to the entry furthest
 * behind its share (70 / 30 interleaves 7 and 3 in every 10). Without route counts, every call is `undefined`.
 */
export function routeSchedule(
  routes: readonly RoutePicks[] | undefined,
  n: number,
): (RoutePicks | undefined)[] {
  const total = routes?.reduce((a, r) => a + r.picks, 0) ?? 0;
  if (routes === undefined || total === 0) return new Array<undefined>(n).fill(undefined);
  const credit = routes.map(() => 0);
  const schedule: RoutePicks[] = [];
  for (let i = 0; i < n; i++) {
    let best = 0;
    routes.forEach((r, j) => {
      credit[j]! += r.picks / total;
      if (credit[j]! > credit[best]!) best = j;
    });
    credit[best]! -= 1;
    schedule.push(routes[best]!);
  }
  return schedule;
}

/**
 * The xds_cluster_manager child of a replayed call: the recorded one; for a call the recording has no route
 * for (a recording made before routes were counted), the only cluster the channel routed to, if it had one.
 */
export function clusterOfCall(
  recorded: RoutePicks | undefined,
  onlyCluster: string | undefined,
): string | undefined {
  if (recorded !== undefined) return recorded.child;
  return onlyCluster === undefined ? undefined : clusterChildName(onlyCluster);
}
