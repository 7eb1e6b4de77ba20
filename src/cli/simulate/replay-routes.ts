// How a replay sends each recorded call down the channel's routes (A28): the recording counts an interval's
// calls per route (the application's choice of method, an input); the route's action then chooses the cluster
// as the channel's config selector does — weighted_clusters at random by weight — so the split between
// clusters is the replayed tree's own, compared with the recorded one.

import type { RecordedRoute, RoutePicks } from '../../recorder/index.js';
import { clusterChildName } from '../../xds/resolver/config-selector.js';

/**
 * The route of each of an interval's `n` calls, spread evenly: each call goes to the route furthest behind its
 * share (so 70 / 30 interleaves 7 and 3 in every 10). Without route counts, every call is `undefined`.
 */
export function routeSchedule(routes: readonly RoutePicks[] | undefined, n: number): (number | undefined)[] {
  const total = routes?.reduce((a, r) => a + r.picks, 0) ?? 0;
  if (routes === undefined || total === 0) return new Array<undefined>(n).fill(undefined);
  const credit = routes.map(() => 0);
  const schedule: number[] = [];
  for (let i = 0; i < n; i++) {
    let best = 0;
    routes.forEach((r, j) => {
      credit[j]! += r.picks / total;
      if (credit[j]! > credit[best]!) best = j;
    });
    credit[best]! -= 1;
    schedule.push(routes[best]!.route);
  }
  return schedule;
}

/** The cluster_manager child a call goes to, or why it fails before any pick. */
export type RouteChoice = { readonly child: string } | { readonly fails: string };

/**
 * The cluster a call that took route `index` goes to. A call without a route (a recording without route
 * counts) goes to the only cluster the channel routed to.
 */
export function chooseCluster(
  routes: readonly RecordedRoute[] | undefined,
  index: number | undefined,
  onlyCluster: string | undefined,
  random: () => number,
): RouteChoice {
  if (index === undefined || routes === undefined) {
    return onlyCluster === undefined
      ? { fails: 'no route recorded for the call' }
      : { child: clusterChildName(onlyCluster) };
  }
  const route = routes[index];
  if (route === undefined) return { fails: `the call took route ${index}, which the update does not have` };
  if (route.cluster !== undefined) return { child: clusterChildName(route.cluster) };
  const weighted = route.weightedClusters;
  if (weighted === undefined) return { fails: `route ${index} is not forwarding (${route.nonForwarding})` };
  // A28: a point in [0, total weight) falls in one cluster's share.
  const total = weighted.reduce((a, c) => a + c.weight, 0);
  let point = Math.floor(random() * total);
  for (const c of weighted) {
    if (point < c.weight) return { child: clusterChildName(c.name) };
    point -= c.weight;
  }
  return { child: clusterChildName(weighted.at(-1)!.name) };
}
