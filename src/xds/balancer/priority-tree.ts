// The cluster resolver's job (A27 / A42 / A52 / A56): turn a cluster's LB policy and its EDS localities into a
// `priority_experimental` config with one child per priority, and the endpoints into a flat list whose
// hierarchical paths route each one to its priority child (and, below it, to its locality).

import {
  type Address,
  Attributes,
  addressKey,
  ENDPOINT_WEIGHT,
  type Endpoint,
  HASH_KEY,
  HIERARCHICAL_PATH,
  LOCALITY,
  LOCALITY_WEIGHT,
  localityLabelValue,
  METRIC_BACKEND_SERVICE,
  METRIC_LOCALITY,
} from '../../core/index.js';
import { weightedShufflingEnabled } from '../../policies/pick-first/index.js';
import { XDS_HEALTH_STATUS, XDS_LOCALITY_NAME, XDS_PRIORITY } from '../attribute-keys.js';
import type { XdsEndpointResource, XdsHealthStatus } from '../resources/cluster-load-assignment.js';
import type { LbConfigList } from '../resources/lb-policy-registry.js';
import { endpointWeightUq1_31, toUq1_31 } from './normalized-weight.js';

/**
 * Names priority children so that they survive updates (A56 "LB Policy Configuration": when localities move
 * between priorities, the child that held them keeps its name and so its connections). For each priority, in
 * order: the first of its localities that had a child name in the previous update, and whose name no higher
 * priority has already taken, lends that name; otherwise the priority gets a new name. New names never reuse
 * a number, so a name always means the same lineage of localities.
 */
export class PriorityChildNamer {
  private byLocality = new Map<string, string>();
  private next = 0;

  constructor(readonly prefix = 'priority-0-') {}

  /** One name per priority, given each priority's locality keys. */
  assign(priorities: readonly (readonly string[])[]): string[] {
    const names: string[] = [];
    const taken = new Set<string>();
    const byLocality = new Map<string, string>();
    for (const localities of priorities) {
      let name: string | undefined;
      for (const key of localities) {
        const previous = this.byLocality.get(key);
        if (previous !== undefined && !taken.has(previous)) {
          name = previous;
          break;
        }
      }
      name ??= `${this.prefix}${this.next++}`;
      taken.add(name);
      names.push(name);
      for (const key of localities) byLocality.set(key, name);
    }
    this.byLocality = byLocality;
    return names;
  }
}

/** A root LoadBalancingConfig and the endpoints to deliver with it. */
export interface ClusterTree {
  readonly config: LbConfigList;
  readonly endpoints: readonly Endpoint[];
  /** The priority child names, highest priority first. */
  readonly childNames: readonly string[];
}

export interface PriorityTreeOptions {
  /**
   * A37 "Priority Policy Reresolution Handling": EDS children ignore re-resolution requests (they would only
   * cause pointless DNS re-resolution elsewhere in an aggregate cluster). Default true.
   */
  readonly ignoreReresolutionRequests?: boolean;
  /**
   * A55: pass DRAINING endpoints on (default false: they are left out). Only a tree with xds_override_host above
   * the endpoint-picking policy may keep them: that policy hides them from its child.
   */
  readonly keepDrainingEndpoints?: boolean;
  /** A89 / A94: the cluster name, put on every endpoint for its subchannel's metrics. */
  readonly backendService?: string;
}

/** How endpoint weights are formed: A113's normalized product, or A42's raw product. */
export interface EndpointWeightRule {
  /**
   * A113: the product of the normalized locality weight (within the priority) and the normalized endpoint
   * weight (within the locality), in UQ1.31. Off: endpoint weight × locality weight (A42). Default: the
   * GRPC_EXPERIMENTAL_PF_WEIGHTED_SHUFFLING setting at each build (on unless `false`).
   */
  readonly normalizedWeights?: boolean;
}

/**
 * Builds successive trees for one cluster, keeping priority child names stable across EDS updates (see
 * {@link PriorityChildNamer}).
 *
 * Each child's config is the cluster's converted LB policy (A52: no special cases per policy). Every endpoint
 * gets the path `[priority child]` (xds_wrr_locality_experimental adds the locality level itself, from the
 * LOCALITY attribute), its locality and locality weight, its endpoint weight (A113's normalized product, or
 * A42's raw product with the switch off: see {@link EndpointWeightRule}; either way ratios within a locality
 * are unchanged up to rounding, so per-locality policies see the same relative weights), its priority, health
 * status and, when EDS gives one, its hash key (A76).
 */
export class PriorityTreeGenerator {
  private readonly namer: PriorityChildNamer;

  constructor(
    childNamePrefix?: string,
    private readonly weightRule: EndpointWeightRule = {},
  ) {
    this.namer = new PriorityChildNamer(childNamePrefix);
  }

  build(
    assignment: XdsEndpointResource,
    lbPolicy: LbConfigList,
    options: PriorityTreeOptions = {},
  ): ClusterTree {
    const ignore = options.ignoreReresolutionRequests ?? true;
    const keepDraining = options.keepDrainingEndpoints ?? false;
    const normalized = this.weightRule.normalizedWeights ?? weightedShufflingEnabled();
    const names = this.namer.assign(assignment.priorities.map((localities) => localities.map((l) => l.key)));
    const children: Record<string, { config: LbConfigList; ignoreReresolutionRequests: boolean }> = {};
    const endpoints: Endpoint[] = [];
    for (let p = 0; p < names.length; p++) {
      const child = names[p]!;
      children[child] = { config: lbPolicy, ignoreReresolutionRequests: ignore };
      const path: readonly string[] = [child];
      const localities = assignment.priorities[p]!;
      let localitySum = 0;
      for (const locality of localities) localitySum += locality.weight;
      for (const locality of localities) {
        let base = Attributes.EMPTY.with(HIERARCHICAL_PATH, path)
          .with(LOCALITY, locality.key)
          .with(LOCALITY_WEIGHT, locality.weight)
          .with(XDS_LOCALITY_NAME, locality.name)
          .with(XDS_PRIORITY, p)
          // A94: the metrics labels of the endpoint's subchannels (A78's locality text form).
          .with(
            METRIC_LOCALITY,
            localityLabelValue(locality.name.region, locality.name.zone, locality.name.subZone),
          );
        if (options.backendService !== undefined)
          base = base.with(METRIC_BACKEND_SERVICE, options.backendService);
        // Endpoints of a locality usually share weight and health, so they share one Attributes object:
        // found by health status, then by the EDS weight (a number key: no string to build and hash for each of
        // tens of thousands of endpoints).
        const shared = new Map<XdsHealthStatus, Map<number, Attributes>>();
        let endpointSum = 0;
        if (normalized) for (const e of locality.endpoints) endpointSum += e.weight;
        const localityShare = normalized ? toUq1_31(locality.weight, localitySum) : 0;
        for (const e of locality.endpoints) {
          if (e.healthStatus === 'DRAINING' && !keepDraining) continue;
          let attributes: Attributes | undefined;
          // Keyed by the EDS weight: within a locality it fixes the final weight. An endpoint with a hash key
          // has Attributes of its own.
          let byWeight: Map<number, Attributes> | undefined;
          if (e.hashKey === undefined) {
            byWeight = shared.get(e.healthStatus);
            if (byWeight === undefined) {
              byWeight = new Map();
              shared.set(e.healthStatus, byWeight);
            }
            attributes = byWeight.get(e.weight);
          }
          if (attributes === undefined) {
            const weight = normalized
              ? endpointWeightUq1_31(localityShare, toUq1_31(e.weight, endpointSum))
              : e.weight * locality.weight;
            attributes = base.with(ENDPOINT_WEIGHT, weight).with(XDS_HEALTH_STATUS, e.healthStatus);
            if (e.hashKey !== undefined) attributes = attributes.with(HASH_KEY, e.hashKey);
            byWeight?.set(e.weight, attributes);
          }
          endpoints.push({ addresses: e.addresses, attributes });
        }
      }
    }
    return {
      config: [{ priority_experimental: { children, priorities: names } }],
      endpoints,
      childNames: names,
    };
  }
}

/** The simulator's plain endpoint form (`lbtree/sim` accepts it as is). */
export interface PlainXdsEndpoint {
  readonly addresses: string[];
  readonly attributes: {
    readonly path: readonly string[];
    readonly weight: number;
    readonly locality: string;
    readonly localityWeight: number;
    readonly hashKey?: string;
  };
}

/**
 * Endpoints in the simulator's plain form: address strings and the five plain attributes. DRAINING endpoints
 * are left out: the plain form has no health status, and a DRAINING endpoint only takes calls that a session
 * cookie sends it (A55), which the simulator's calls never carry.
 */
export function toPlainEndpoints(endpoints: readonly Endpoint[]): PlainXdsEndpoint[] {
  return endpoints
    .filter((e) => e.attributes.get(XDS_HEALTH_STATUS) !== 'DRAINING')
    .map((e) => {
      const a = e.attributes;
      const hashKey = a.get(HASH_KEY);
      return {
        addresses: e.addresses.map((x: Address) => addressKey(x)),
        attributes: {
          path: [...(a.get(HIERARCHICAL_PATH) ?? [])],
          weight: a.get(ENDPOINT_WEIGHT) ?? 1,
          locality: a.get(LOCALITY) ?? '',
          localityWeight: a.get(LOCALITY_WEIGHT) ?? 1,
          ...(hashKey !== undefined ? { hashKey } : {}),
        },
      };
    });
}
