// The calls of a recorded xDS channel routed and hashed again. The recording keeps the channel's routes (their
// matches and hash policies) and, per interval, its calls by class: route, cluster, path and the headers the
// routes read. The replay hands each class's path and headers to lbtree's own config selector, built over the
// recorded routes (A28 matching, A42 hash policies with the recorded io.grpc.channel_id), so a ring_hash tree
// (recorded, or given with --config) places the calls by the hashes the channel's selector computed.
//
// The route and cluster stay those the recording counted: the selector draws runtime_fraction and
// weighted_clusters at random, and the recording says how those draws fell on the channel. A call the
// selector matches to another route (a runtime_fraction draw that fell the other way) is counted, and hashed
// by its recorded route's policies.

import { type CallMetadata, ConfigError } from '../../core/index.js';
import { type HashPolicy, newChannelId, RequestHasher, randomRequestHash } from '../../hash/index.js';
import type {
  CallClassPicks,
  RecordedHeaderMatch,
  RecordedPathMatch,
  RecordedRoute,
  UpdateEvent,
} from '../../recorder/index.js';
import { ClusterRefs } from '../../xds/resolver/cluster-refs.js';
import { XdsConfigSelector } from '../../xds/resolver/config-selector.js';
import type {
  XdsFilterOverrides,
  XdsHeaderMatcher,
  XdsPathMatcher,
  XdsRoute,
  XdsRouteAction,
  XdsVirtualHost,
} from '../../xds/resources/types.js';
import { compileRe2 } from '../../xds/resources/validation.js';
import { ReplayError } from './replay-tree.js';

/** What the selector made of one replayed call. */
export interface RoutedCall {
  readonly hash: bigint;
  readonly metadata: CallMetadata;
  /** Whether the selector matched the call to the route the recording counted it under. */
  readonly sameRoute: boolean;
}

const NO_OVERRIDES: XdsFilterOverrides = new Map();

/** The config selector of one recorded update's routes, over the recorded call classes. */
export class ReplaySelector {
  private readonly selector: XdsConfigSelector;
  private readonly hashers: readonly (RequestHasher | undefined)[];
  private readonly channelId: bigint;
  private readonly metadata = new WeakMap<CallClassPicks, CallMetadata>();

  private constructor(
    routes: readonly RecordedRoute[],
    xdsChannelId: string | undefined,
    private readonly random: () => number,
  ) {
    const virtualHost: XdsVirtualHost = {
      name: 'recorded',
      domains: ['*'],
      routes: routes.map((r, i) => xdsRoute(r, `xdsRoutes[${i}]`)),
      filterOverrides: NO_OVERRIDES,
    };
    this.channelId = xdsChannelId === undefined ? newChannelId(random) : BigInt(xdsChannelId);
    this.selector = new XdsConfigSelector(virtualHost, new ClusterRefs(() => {}), {
      channelId: this.channelId,
      random,
    });
    this.hashers = routes.map((r) =>
      r.hashPolicies === undefined ? undefined : new RequestHasher(r.hashPolicies as HashPolicy[]),
    );
  }

  /**
   * The selector of an update's routes; undefined when the update has none, or routes recorded without their
   * matches (a file written before call classes were). Throws a {@link ReplayError} naming a route whose
   * match cannot be rebuilt (a regex that does not compile).
   */
  static of(update: UpdateEvent, random: () => number): ReplaySelector | undefined {
    const routes = update.xdsRoutes;
    if (routes === undefined || routes.length === 0 || routes.some((r) => r.matcher === undefined))
      return undefined;
    try {
      return new ReplaySelector(routes, update.xdsChannelId, random);
    } catch (e) {
      if (e instanceof ReplayError) throw e;
      throw new ReplayError(`the recorded routes cannot be rebuilt: ${(e as Error).message}`);
    }
  }

  /** Routes one call of `c` through the config selector: its request hash, and whether its route is c's. */
  route(c: CallClassPicks): RoutedCall {
    let metadata = this.metadata.get(c);
    if (metadata === undefined) {
      metadata = metadataOf(c.headers);
      this.metadata.set(c, metadata);
    }
    const selection = this.selector.select(c.path, metadata);
    if (selection.ok) {
      selection.release();
      if (selection.route === String(c.route))
        return { hash: selection.hash.value, metadata, sameRoute: true };
    }
    // Another route (or none) matched this time: the call keeps its recorded route, and that route's hash.
    const hasher = this.hashers[c.route];
    const hash =
      hasher === undefined
        ? randomRequestHash(this.random)
        : hasher.hash(metadata, this.channelId, this.random);
    return { hash, metadata, sameRoute: false };
  }
}

/** The recorded headers as call metadata: one value per header, as the channel's selector read it. */
function metadataOf(headers: Readonly<Record<string, string>>): CallMetadata {
  const values = new Map(Object.entries(headers).map(([name, value]) => [name, [value]]));
  return { get: (name: string) => values.get(name.toLowerCase()) ?? [] };
}

function xdsRoute(r: RecordedRoute, at: string): XdsRoute {
  const m = r.matcher!;
  return {
    match: {
      path: pathMatcher(m.path, `${at}.matcher.path`),
      headers: m.headers.map((h, i) => headerMatcher(h, `${at}.matcher.headers[${i}]`)),
      runtimeFractionPerMillion: m.runtimeFractionPerMillion,
    },
    action: routeAction(r),
    filterOverrides: NO_OVERRIDES,
  };
}

function routeAction(r: RecordedRoute): XdsRouteAction {
  const options = {
    hashPolicies: (r.hashPolicies ?? []) as HashPolicy[],
    maxStreamDurationMs: undefined,
    grpcTimeoutHeaderMaxMs: undefined,
  };
  if (r.cluster !== undefined) return { kind: 'cluster', cluster: r.cluster, ...options };
  if (r.weightedClusters !== undefined) {
    return {
      kind: 'weighted_clusters',
      clusters: r.weightedClusters.map((c) => ({ ...c, filterOverrides: NO_OVERRIDES })),
      totalWeight: r.weightedClusters.reduce((a, c) => a + c.weight, 0),
      ...options,
    };
  }
  return { kind: 'non_forwarding', action: r.nonForwarding ?? 'unknown' };
}

function regex(pattern: string, at: string) {
  try {
    return compileRe2(pattern, at);
  } catch (e) {
    const problem = e instanceof ConfigError ? e.problem : (e as Error).message;
    throw new ReplayError(`${at}: ${problem}`);
  }
}

function pathMatcher(p: RecordedPathMatch, at: string): XdsPathMatcher {
  if (p.kind === 'safe_regex') return { kind: 'safe_regex', regex: regex(p.regex, `${at}.regex`) };
  if (p.kind === 'prefix') return { kind: 'prefix', prefix: p.value, caseSensitive: p.caseSensitive };
  return { kind: 'path', path: p.value, caseSensitive: p.caseSensitive };
}

function headerMatcher(h: RecordedHeaderMatch, at: string): XdsHeaderMatcher {
  const base = { name: h.name.toLowerCase(), invert: h.invert };
  switch (h.kind) {
    case 'present':
      return { ...base, match: { kind: 'present', present: h.present } };
    case 'range':
      return { ...base, match: { kind: 'range', start: BigInt(h.start), end: BigInt(h.end) } };
    case 'safe_regex':
      return {
        ...base,
        match: { kind: 'string', matcher: { kind: 'safe_regex', regex: regex(h.regex, `${at}.regex`) } },
      };
    default:
      return {
        ...base,
        match: { kind: 'string', matcher: { kind: h.kind, value: h.value, ignoreCase: h.ignoreCase } },
      };
  }
}
