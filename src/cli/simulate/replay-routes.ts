// Which cluster each replayed call of an xDS channel goes to. The channel's config selector chose a route and a
// cluster for each call (A28: the first matching route; weighted_clusters at random by weight) and handed the
// cluster to the LB tree as a call attribute: an input of the tree, which the recording counts per interval,
// route and cluster. The replay gives its calls the same clusters, spread evenly over the interval; what the
// tree does with them (each cluster's priorities, localities, endpoints) is the simulated tree's own. The calls
// the recording also counted by class (path and routed-on headers) carry their class, which the replay routes
// and hashes again (replay-selector.ts).

import type { CallClassPicks, RoutePicks } from '../../recorder/index.js';
import { clusterChildName } from '../../xds/resolver/config-selector.js';

/**
 * The (route, cluster) of each of an interval's `n` calls, spread evenly: each call goes to the entry furthest
 * behind its share (70 / 30 interleaves 7 and 3 in every 10). Without route counts, every call is `undefined`.
 * With call classes, a (route, cluster)'s calls are its classes' (a {@link CallClassPicks}) and, for the rest
 * of its picks (classes beyond the recorder's bound), the (route, cluster) alone.
 */
export function routeSchedule(
  routePicks: readonly RoutePicks[] | undefined,
  n: number,
  classes: readonly CallClassPicks[] = [],
): (RoutePicks | undefined)[] {
  const routes = routePicks === undefined ? undefined : withClasses(routePicks, classes);
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

/** Each (route, cluster)'s classes, then what is left of its picks; classes of a pair not counted count too. */
function withClasses(routes: readonly RoutePicks[], classes: readonly CallClassPicks[]): RoutePicks[] {
  if (classes.length === 0) return [...routes];
  const entries: RoutePicks[] = [];
  const key = (r: RoutePicks) => `${r.route}\n${r.child}`;
  const byPair = new Map<string, CallClassPicks[]>();
  for (const c of classes) {
    const list = byPair.get(key(c));
    if (list === undefined) byPair.set(key(c), [c]);
    else list.push(c);
  }
  for (const r of routes) {
    const list = byPair.get(key(r)) ?? [];
    byPair.delete(key(r));
    entries.push(...list);
    const rest = r.picks - list.reduce((a, c) => a + c.picks, 0);
    if (rest > 0) entries.push({ route: r.route, child: r.child, picks: rest });
  }
  for (const list of byPair.values()) entries.push(...list);
  return entries;
}

/** Whether a scheduled call carries its class (its path and headers), not only its route and cluster. */
export function isCallClass(entry: RoutePicks | undefined): entry is CallClassPicks {
  return entry !== undefined && 'path' in entry;
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
