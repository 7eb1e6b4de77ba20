// The xds resolver's per-call config selector (A31 "Implementation for xDS RouteAction Support"): the first
// route of the channel's virtual host that matches the call (A28), its cluster (weighted_clusters chosen at
// random by weight, A28), the request hash from its hash policies (A42 "XdsConfigSelector Changes"), its
// timeout (A31 "Supported Fields"), its retry policy (A44), the request side of A55's stateful session filter
// (with A60's cluster from the cookie), and the A33 fault injection filters that apply to the call. It holds a
// reference on every cluster it can choose, and each call holds one on its cluster until it is done picking
// (A31's two-step cluster removal).

import { type CallMetadata, Code, type Status, status } from '../../core/index.js';
import { RequestHasher } from '../../hash/index.js';
import type {
  XdsFilterOverrides,
  XdsHttpFilter,
  XdsRetryPolicy,
  XdsRoute,
  XdsRouteAction,
  XdsSessionCookie,
  XdsVirtualHost,
} from '../resources/types.js';
import type { ClusterRefs } from './cluster-refs.js';
import { type ActiveFaults, FaultInjector, faultConfigFor, processActiveFaults } from './fault-injection.js';
import { matchesRoute } from './route-matcher.js';
import { RoutedCall } from './routed-call.js';
import {
  cookiePathMatches,
  decodeSessionCookie,
  findCookie,
  StatefulSessionCall,
  sessionCookieFor,
} from './stateful-session.js';

/** The xds_cluster_manager child name of a cluster (room for other kinds, e.g. cluster specifier plugins). */
export function clusterChildName(cluster: string): string {
  return `cluster:${cluster}`;
}

/** A call's route ({@link RoutedCall}), or why it has none. */
export type RouteSelection = RoutedCall | { readonly ok: false; readonly status: Status };

export interface ConfigSelectorOptions {
  /** A42 `io.grpc.channel_id`: one random 64-bit value per channel. */
  readonly channelId: bigint;
  /** Uniform in [0, 1): runtime_fraction, weighted_clusters and random hashes. Seed it in tests. */
  readonly random: () => number;
  /** A31: the listener's HttpConnectionManager max_stream_duration, for routes that set none. */
  readonly defaultMaxStreamDurationMs?: number | undefined;
  /** The listener's HTTP filters (A39), for the A55 stateful_session and A33 fault filters and their overrides. */
  readonly httpFilters?: readonly XdsHttpFilter[];
  /** A33: the active faults max_active_faults limits; the process's counter unless a test gives its own. */
  readonly activeFaults?: ActiveFaults;
}

/** A route prepared once per selector: compiled hash policies, cumulative weights, its timeout. */
interface PreparedRoute {
  readonly route: XdsRoute;
  /** Its index in the virtual host's routes, as a decimal string (made once, not per call). */
  readonly key: string;
  readonly hasher: RequestHasher | null;
  readonly clusters: readonly string[];
  /** The xds_cluster_manager child of each of `clusters` (named once here, not per call). */
  readonly clusterChildren: readonly string[];
  /** Cumulative weights, for weighted_clusters (empty for a single cluster). */
  readonly cumulative: readonly number[];
  readonly totalWeight: number;
  readonly timeoutMs: number | undefined;
  readonly retryPolicy: XdsRetryPolicy | undefined;
  readonly failure: Status | null;
  /** A55: the session cookie of each of `clusters` (weighted clusters may override it), if any. */
  readonly sessionCookies: readonly (XdsSessionCookie | undefined)[];
  /** A33: the fault filters of each of `clusters` that inject anything (weighted clusters may override them). */
  readonly faults: readonly (readonly FaultInjector[])[];
}

/**
 * A44: the route's retry_policy if it has one, else its virtual host's; a policy whose retry_on names no
 * condition gRPC supports gives the call no retry policy (and, on a route, still hides the virtual host's).
 */
export function routeRetryPolicy(
  action: XdsRouteAction,
  virtualHost: XdsVirtualHost,
): XdsRetryPolicy | undefined {
  if (action.kind === 'non_forwarding') return undefined;
  const policy = action.retryPolicy ?? virtualHost.retryPolicy;
  return policy !== undefined && policy.retryableStatusCodes.length > 0 ? policy : undefined;
}

/** A31: grpc_timeout_header_max replaces max_stream_duration when set; zero (or nothing) means no limit. */
export function routeTimeoutMs(action: XdsRouteAction, defaultMs: number | undefined): number | undefined {
  if (action.kind === 'non_forwarding') return undefined;
  const limit = action.grpcTimeoutHeaderMaxMs ?? action.maxStreamDurationMs ?? defaultMs;
  return limit === undefined || limit === 0 ? undefined : limit;
}

function prepare(
  route: XdsRoute,
  index: number,
  virtualHost: XdsVirtualHost,
  options: ConfigSelectorOptions,
): PreparedRoute {
  const key = String(index);
  const defaultMs = options.defaultMaxStreamDurationMs;
  const filters = options.httpFilters ?? [];
  const action = route.action;
  if (action.kind === 'non_forwarding') {
    return {
      route,
      key,
      hasher: null,
      clusters: [],
      clusterChildren: [],
      cumulative: [],
      totalWeight: 0,
      timeoutMs: undefined,
      retryPolicy: undefined,
      failure: status(
        Code.UNAVAILABLE,
        `matched a non-forwarding route (routes[${index}], action ${action.action})`,
      ),
      sessionCookies: [],
      faults: [],
    };
  }
  const hasher = new RequestHasher(action.hashPolicies, `routes[${index}].route.hash_policy`);
  const timeoutMs = routeTimeoutMs(action, defaultMs);
  const retryPolicy = routeRetryPolicy(action, virtualHost);
  if (action.kind === 'cluster') {
    return {
      route,
      key,
      hasher,
      clusters: [action.cluster],
      clusterChildren: [clusterChildName(action.cluster)],
      cumulative: [],
      totalWeight: 0,
      timeoutMs,
      retryPolicy,
      failure: null,
      sessionCookies: [sessionCookieFor(filters, [route.filterOverrides, virtualHost.filterOverrides])],
      faults: [faultInjectors(filters, [route.filterOverrides, virtualHost.filterOverrides], options)],
    };
  }
  const cumulative: number[] = [];
  let sum = 0;
  for (const c of action.clusters) {
    sum += c.weight;
    cumulative.push(sum);
  }
  return {
    route,
    key,
    hasher,
    clusters: action.clusters.map((c) => c.name),
    clusterChildren: action.clusters.map((c) => clusterChildName(c.name)),
    cumulative,
    totalWeight: sum,
    timeoutMs,
    retryPolicy,
    failure: null,
    sessionCookies: action.clusters.map((c) =>
      sessionCookieFor(filters, [c.filterOverrides, route.filterOverrides, virtualHost.filterOverrides]),
    ),
    faults: action.clusters.map((c) =>
      faultInjectors(
        filters,
        [c.filterOverrides, route.filterOverrides, virtualHost.filterOverrides],
        options,
      ),
    ),
  };
}

const NO_FAULTS: readonly FaultInjector[] = Object.freeze([]);

/** A33: the fault filters that inject anything on a route and cluster, with their A39 overrides applied. */
function faultInjectors(
  filters: readonly XdsHttpFilter[],
  scopes: readonly XdsFilterOverrides[],
  options: ConfigSelectorOptions,
): readonly FaultInjector[] {
  let injectors: FaultInjector[] | undefined;
  for (const filter of filters) {
    const config = faultConfigFor(filter, scopes);
    if (config === undefined) continue;
    injectors ??= [];
    injectors.push(
      new FaultInjector(filter.name, config, options.random, options.activeFaults ?? processActiveFaults),
    );
  }
  return injectors ?? NO_FAULTS;
}

const NO_ROUTE = status(Code.UNAVAILABLE, 'no route of the virtual host matched the call');

export class XdsConfigSelector {
  private readonly routes: readonly PreparedRoute[];
  private readonly held: readonly string[];
  private released = false;

  constructor(
    readonly virtualHost: XdsVirtualHost,
    private readonly refs: ClusterRefs,
    private readonly options: ConfigSelectorOptions,
  ) {
    this.routes = virtualHost.routes.map((r, i) => prepare(r, i, virtualHost, options));
    const held = new Set<string>();
    for (const r of this.routes) for (const c of r.clusters) held.add(c);
    this.held = [...held];
    for (const c of this.held) refs.ref(c);
  }

  /** Every cluster this selector can route to. */
  get clusters(): readonly string[] {
    return this.held;
  }

  /** Routes one call: `path` is `/service/method`. */
  select(path: string, metadata: CallMetadata): RouteSelection {
    const random = this.options.random;
    for (const prepared of this.routes) {
      if (!matchesRoute(prepared.route.match, path, metadata, random)) continue;
      if (prepared.failure !== null) return { ok: false, status: prepared.failure };
      const chosen = this.chooseCluster(prepared);
      let index = chosen;
      let cluster = prepared.clusters[chosen]!;
      let clusterChild = prepared.clusterChildren[chosen]!;
      let session: StatefulSessionCall | undefined;
      const cookie = prepared.sessionCookies[chosen];
      if (cookie !== undefined && cookiePathMatches(cookie.path, path)) {
        const value = findCookie(metadata, cookie.name);
        const received = value === undefined ? undefined : decodeSessionCookie(value);
        // A60: the cookie's cluster wins when this route can send calls there.
        const cookieIndex =
          received === undefined || received.cluster === ''
            ? -1
            : prepared.clusters.indexOf(received.cluster);
        if (cookieIndex >= 0) {
          index = cookieIndex;
          cluster = prepared.clusters[index]!;
          clusterChild = prepared.clusterChildren[index]!;
        }
        session = new StatefulSessionCall(cookie, received, cluster);
      }
      return new RoutedCall(
        this.refs,
        cluster,
        clusterChild,
        prepared.key,
        prepared.hasher!,
        metadata,
        this.options.channelId,
        random,
        prepared.timeoutMs,
        prepared.retryPolicy,
        session,
        prepared.faults[index]!,
      );
    }
    return { ok: false, status: NO_ROUTE };
  }

  /** Drops this selector's references (when the channel replaces it); calls keep their own. Idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    for (const c of this.held) this.refs.unref(c);
  }

  /** A28: weighted_clusters — a random point in [0, total weight) falls in one cluster's share (its index). */
  private chooseCluster(route: PreparedRoute): number {
    if (route.cumulative.length === 0) return 0;
    const point = Math.floor(this.options.random() * route.totalWeight);
    const cumulative = route.cumulative;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (point < cumulative[mid]!) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}
