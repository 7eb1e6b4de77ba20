// How a replay sends each recorded call down the channel's routes (A28): the recording counts an interval's
// calls per route (the application's choice of method, an input); the route's action then chooses the cluster
// — weighted_clusters by weight — so the split between clusters is the replay's own, compared with the
// recorded one (what the channel's config selector drew).

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
 * Sends replayed calls down one update's routes. A call that took route `index` goes to the route's cluster;
 * on weighted_clusters the route deals its calls in proportion to the weights, interleaved (smooth weighted
 * round robin): the split A28's random choice makes on average, without a second random draw's noise beside
 * the channel's own. A call without a route (a recording without route counts) goes to the only cluster the
 * channel routed to.
 */
export class ReplayRouter {
  /** Per weighted route: each cluster's running credit. */
  private readonly credits = new Map<number, number[]>();

  constructor(
    private readonly routes: readonly RecordedRoute[] | undefined,
    private readonly onlyCluster: string | undefined,
  ) {}

  choose(index: number | undefined): RouteChoice {
    if (index === undefined || this.routes === undefined) {
      return this.onlyCluster === undefined
        ? { fails: 'no route recorded for the call' }
        : { child: clusterChildName(this.onlyCluster) };
    }
    const route = this.routes[index];
    if (route === undefined) return { fails: `the call took route ${index}, which the update does not have` };
    if (route.cluster !== undefined) return { child: clusterChildName(route.cluster) };
    const weighted = route.weightedClusters;
    if (weighted === undefined) return { fails: `route ${index} is not forwarding (${route.nonForwarding})` };
    let credit = this.credits.get(index);
    if (credit === undefined) {
      credit = weighted.map(() => 0);
      this.credits.set(index, credit);
    }
    const total = weighted.reduce((a, c) => a + c.weight, 0);
    let best = 0;
    weighted.forEach((c, i) => {
      credit[i]! += c.weight;
      if (credit[i]! > credit[best]!) best = i;
    });
    credit[best]! -= total;
    return { child: clusterChildName(weighted[best]!.name) };
  }
}
