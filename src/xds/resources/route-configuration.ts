// RDS: envoy.config.route.v3.RouteConfiguration validated as A28 describes (virtual hosts, route matches, route
// actions with cluster / weighted_clusters, A42 hash_policy, A31 max_stream_duration, A44 retry_policy on the
// route action and the virtual host). Also used for the
// route_config a Listener carries inline.

import type { Any } from '@bufbuild/protobuf/wkt';
import type {
  Route,
  RouteAction,
  VirtualHost,
  WeightedCluster,
} from '../../protos/gen/envoy/config/route/v3/route_components_pb.js';
import {
  type RouteConfiguration,
  RouteConfigurationSchema,
} from '../../protos/gen/envoy/config/route/v3/route_pb.js';
import { ROUTE_CONFIGURATION_TYPE_URL } from '../../protos/type-urls.js';
import type { XdsResourceType } from '../client/resource-type.js';
import { decodeOrNack } from './decode-or-nack.js';
import { parseFaultOverride } from './fault.js';
import { parseHashPolicies } from './hash-policies.js';
import { parseRetryPolicy } from './retry-policy.js';
import { parseRouteMatch, snake } from './route-match.js';
import { parseStatefulSessionOverride } from './stateful-session.js';
import type {
  XdsFilterOverrides,
  XdsForwardingOptions,
  XdsRoute,
  XdsRouteAction,
  XdsRouteConfiguration,
  XdsTypedConfig,
  XdsVirtualHost,
  XdsWeightedCluster,
} from './types.js';
import { decodeResource, fail, optionalDurationMs } from './validation.js';

const MAX_UINT32 = 0xffff_ffff;

/** Validates a RouteConfiguration; `at` prefixes every error path (the inline route_config of a Listener). */
export function parseRouteConfiguration(rc: RouteConfiguration, at = ''): XdsRouteConfiguration {
  const prefix = at === '' ? '' : `${at}.`;
  return {
    name: rc.name,
    virtualHosts: rc.virtualHosts.map((vh, i) => parseVirtualHost(vh, `${prefix}virtual_hosts[${i}]`)),
  };
}

function parseVirtualHost(vh: VirtualHost, at: string): XdsVirtualHost {
  if (vh.domains.length === 0) fail(`${at}.domains`, 'must not be empty');
  const routes: XdsRoute[] = [];
  for (let i = 0; i < vh.routes.length; i++) {
    const route = parseRoute(vh.routes[i]!, `${at}.routes[${i}]`);
    if (route !== null) routes.push(route);
  }
  return {
    name: vh.name,
    domains: vh.domains,
    routes,
    filterOverrides: filterOverrides(vh.typedPerFilterConfig, `${at}.typed_per_filter_config`),
    ...(vh.retryPolicy !== undefined
      ? { retryPolicy: parseRetryPolicy(vh.retryPolicy, `${at}.retry_policy`) }
      : {}),
  };
}

/** A validated route, or null when gRPC ignores it (A28: query_parameters, or an unsupported cluster specifier). */
function parseRoute(r: Route, at: string): XdsRoute | null {
  if (r.match === undefined) fail(`${at}.match`, 'field not present');
  const match = parseRouteMatch(r.match, `${at}.match`);
  if (match === null) return null;
  const action = parseAction(r, at);
  if (action === null) return null;
  return {
    match,
    action,
    filterOverrides: filterOverrides(r.typedPerFilterConfig, `${at}.typed_per_filter_config`),
  };
}

function parseAction(r: Route, at: string): XdsRouteAction | null {
  const action = r.action;
  switch (action.case) {
    case 'route':
      return parseRouteAction(action.value, `${at}.route`);
    case undefined:
      // Unset, or a kind added to the oneof after these protos were generated: RPCs on this route fail.
      return { kind: 'non_forwarding', action: 'unknown' };
    default:
      return { kind: 'non_forwarding', action: snake(action.case) };
  }
}

function parseRouteAction(a: RouteAction, at: string): XdsRouteAction | null {
  const spec = a.clusterSpecifier;
  switch (spec.case) {
    case 'cluster':
      if (spec.value === '') fail(`${at}.cluster`, 'must not be empty');
      return { kind: 'cluster', cluster: spec.value, ...forwardingOptions(a, at) };
    case 'weightedClusters': {
      const { clusters, totalWeight } = parseWeightedClusters(spec.value, `${at}.weighted_clusters`);
      return { kind: 'weighted_clusters', clusters, totalWeight, ...forwardingOptions(a, at) };
    }
    default:
      // A28: cluster_header, cluster specifier plugins, an unset or unknown specifier: the route is ignored.
      return null;
  }
}

/**
 * A28 weighted_clusters: at least one cluster, each named; entries of weight 0 are left out; the weights must
 * add up to more than 0 and at most uint32. total_weight is deprecated in Envoy's v3 API and ignored, as gRPC
 * implementations now do (the original A28 text asked for the sum to equal it).
 */
function parseWeightedClusters(
  w: WeightedCluster,
  at: string,
): { clusters: XdsWeightedCluster[]; totalWeight: number } {
  if (w.clusters.length === 0) fail(`${at}.clusters`, 'must not be empty');
  const clusters: XdsWeightedCluster[] = [];
  let totalWeight = 0;
  for (let i = 0; i < w.clusters.length; i++) {
    const c = w.clusters[i]!;
    if (c.name === '') fail(`${at}.clusters[${i}].name`, 'must not be empty');
    const weight = c.weight ?? 0;
    if (weight === 0) continue;
    totalWeight += weight;
    if (totalWeight > MAX_UINT32)
      fail(`${at}.clusters[${i}].weight`, `the weights add up to more than ${MAX_UINT32}`);
    clusters.push({
      name: c.name,
      weight,
      filterOverrides: filterOverrides(
        c.typedPerFilterConfig,
        `${at}.clusters[${i}].typed_per_filter_config`,
      ),
    });
  }
  if (totalWeight === 0) fail(`${at}.clusters`, 'the weights add up to 0');
  return { clusters, totalWeight };
}

function forwardingOptions(a: RouteAction, at: string): XdsForwardingOptions {
  const msd = a.maxStreamDuration;
  return {
    hashPolicies: parseHashPolicies(a.hashPolicy, `${at}.hash_policy`),
    maxStreamDurationMs: optionalDurationMs(
      msd?.maxStreamDuration,
      `${at}.max_stream_duration.max_stream_duration`,
    ),
    grpcTimeoutHeaderMaxMs: optionalDurationMs(
      msd?.grpcTimeoutHeaderMax,
      `${at}.max_stream_duration.grpc_timeout_header_max`,
    ),
    ...(a.retryPolicy !== undefined
      ? { retryPolicy: parseRetryPolicy(a.retryPolicy, `${at}.retry_policy`) }
      : {}),
  };
}

/**
 * typed_per_filter_config (`at` names the field): A55 StatefulSessionPerRoute and A33 HTTPFault entries are
 * validated and parsed here (a bad one is a NACK); other types are kept opaque for the HTTP filters that read
 * them.
 */
function filterOverrides(map: { [name: string]: Any }, at: string): XdsFilterOverrides {
  const overrides = new Map<string, XdsTypedConfig>();
  for (const [name, any] of Object.entries(map)) {
    const entryAt = `${at}[${JSON.stringify(name)}]`;
    const statefulSession = parseStatefulSessionOverride(any, entryAt);
    const fault = parseFaultOverride(any, entryAt);
    overrides.set(name, {
      typeUrl: any.typeUrl,
      value: any.value,
      ...(statefulSession !== undefined ? { statefulSession } : {}),
      ...(fault !== undefined ? { fault } : {}),
    });
  }
  return overrides;
}

/** RDS (A27 / A28): a RouteConfiguration missing from a response is not deleted (it is not required in SotW). */
export const routeConfigurationResourceType: XdsResourceType<XdsRouteConfiguration> = {
  typeUrl: ROUTE_CONFIGURATION_TYPE_URL,
  allResourcesRequiredInSotW: false,
  decode: (bytes) =>
    decodeResource(
      () => decodeOrNack(RouteConfigurationSchema, bytes),
      (rc) => rc.name,
      (rc) => parseRouteConfiguration(rc),
    ),
};
