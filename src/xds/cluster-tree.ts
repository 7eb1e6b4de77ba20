// From xDS resources to a runnable tree: (Cluster, ClusterLoadAssignment) → (root LoadBalancingConfig,
// endpoints), as bytes or as proto3 JSON, so a whole xDS cluster runs in the simulator or on a grpc-js channel
// before the ADS client exists.

import type { Endpoint } from '../core/index.js';
import { type ClusterOptions, decodeCluster, parseCluster, type XdsClusterResource } from './cluster.js';
import {
  decodeClusterLoadAssignment,
  parseClusterLoadAssignment,
  type XdsEndpointResource,
} from './endpoints.js';
import { XdsResourceError } from './errors.js';
import type { LbConfigList } from './lb-policy-registry.js';
import {
  type PlainXdsEndpoint,
  PriorityTreeGenerator,
  type PriorityTreeOptions,
  toPlainEndpoints,
} from './priority-tree.js';
import { encodeMessage, type JsonReadOptions, messageFromJson, ProtoJsonError } from './proto/codec.js';
import { Cluster, ClusterLoadAssignment, LoadBalancingPolicy } from './proto/messages.js';

export interface ClusterTreeOptions extends ClusterOptions, PriorityTreeOptions {
  /** Prefix of the priority child names (`priority-0-` gives `priority-0-0`, `priority-0-1`, …). */
  readonly childNamePrefix?: string;
}

/** The result in the simulator's plain endpoint form: feed it to `sim.update(endpoints, config)`. */
export interface PlainClusterTree {
  readonly config: LbConfigList;
  readonly endpoints: PlainXdsEndpoint[];
  readonly childNames: readonly string[];
}

/** The result with lbtree Endpoints (typed attributes, including XDS_PRIORITY and XDS_HEALTH_STATUS). */
export interface EndpointClusterTree {
  readonly config: LbConfigList;
  readonly endpoints: readonly Endpoint[];
  readonly childNames: readonly string[];
}

/**
 * One cluster followed over successive CDS / EDS updates: each update is validated (a bad one throws the NACK
 * reason and changes nothing) and priority child names stay stable from one update to the next.
 */
export class XdsClusterTreeGenerator {
  private readonly priorities: PriorityTreeGenerator;

  constructor(private readonly options: ClusterTreeOptions = {}) {
    this.priorities = new PriorityTreeGenerator(options.childNamePrefix);
  }

  /** From already validated resources. */
  build(cluster: XdsClusterResource, assignment: XdsEndpointResource): EndpointClusterTree {
    if (assignment.clusterName !== '' && assignment.clusterName !== cluster.edsServiceName) {
      throw new XdsResourceError(
        'cluster_name',
        `the ClusterLoadAssignment is for "${assignment.clusterName}", but cluster "${cluster.name}" asks EDS for "${cluster.edsServiceName}"`,
      );
    }
    return this.priorities.build(assignment, cluster.lbPolicy, this.options);
  }

  /** From encoded resources, with endpoints in lbtree's Endpoint form. */
  updateEndpoints(clusterBytes: Uint8Array, assignmentBytes: Uint8Array): EndpointClusterTree {
    const cluster = withResource('Cluster', () => parseCluster(decodeCluster(clusterBytes), this.options));
    const assignment = withResource('ClusterLoadAssignment', () =>
      parseClusterLoadAssignment(decodeClusterLoadAssignment(assignmentBytes), this.options),
    );
    return withResource('ClusterLoadAssignment', () => this.build(cluster, assignment));
  }

  /** From encoded resources, with endpoints in the simulator's plain form. */
  update(clusterBytes: Uint8Array, assignmentBytes: Uint8Array): PlainClusterTree {
    return plain(this.updateEndpoints(clusterBytes, assignmentBytes));
  }

  /** From proto3 JSON resources (as Envoy configs write them), with endpoints in the plain form. */
  updateFromJson(
    clusterJson: unknown,
    assignmentJson: unknown,
    json: JsonReadOptions = {},
  ): PlainClusterTree {
    return this.update(encodeCluster(clusterJson, json), encodeClusterLoadAssignment(assignmentJson, json));
  }
}

/**
 * Prefixes a NACK reason with the resource it is about. XdsResourceError keeps its field, so callers can
 * still tell which field was wrong.
 */
function withResource<T>(resource: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof XdsResourceError && e.resource === undefined) {
      throw new XdsResourceError(e.field, e.problem, resource);
    }
    throw e;
  }
}

function plain(tree: EndpointClusterTree): PlainClusterTree {
  return { config: tree.config, endpoints: toPlainEndpoints(tree.endpoints), childNames: tree.childNames };
}

/**
 * (Cluster bytes, ClusterLoadAssignment bytes) → `{ config, endpoints }`: the root `priority_experimental`
 * config and the endpoints in the simulator's plain form. Throws an Error whose message is the NACK reason
 * when either resource is invalid.
 */
export function clusterToTree(
  clusterBytes: Uint8Array,
  assignmentBytes: Uint8Array,
  options: ClusterTreeOptions = {},
): PlainClusterTree {
  return new XdsClusterTreeGenerator(options).update(clusterBytes, assignmentBytes);
}

/** {@link clusterToTree} for resources written as proto3 JSON (or YAML parsed to the same objects). */
export function clusterToTreeFromJson(
  clusterJson: unknown,
  assignmentJson: unknown,
  options: ClusterTreeOptions & JsonReadOptions = {},
): PlainClusterTree {
  return new XdsClusterTreeGenerator(options).updateFromJson(clusterJson, assignmentJson, options);
}

function encodeJson(type: typeof Cluster, json: unknown, options: JsonReadOptions): Uint8Array {
  try {
    return encodeMessage(type, messageFromJson(type, json, '$', options));
  } catch (e) {
    if (e instanceof ProtoJsonError) {
      throw new ProtoJsonError(e.path, `${e.problem} (reading ${type.fullName} JSON)`);
    }
    throw e;
  }
}

/** Encodes an `envoy.config.cluster.v3.Cluster` from its proto3 JSON form. Throws a ProtoJsonError naming the path. */
export function encodeCluster(json: unknown, options: JsonReadOptions = {}): Uint8Array {
  return encodeJson(Cluster, json, options);
}

/** Encodes an `envoy.config.endpoint.v3.ClusterLoadAssignment` from its proto3 JSON form. */
export function encodeClusterLoadAssignment(json: unknown, options: JsonReadOptions = {}): Uint8Array {
  return encodeJson(ClusterLoadAssignment, json, options);
}

/** Encodes an `envoy.config.cluster.v3.LoadBalancingPolicy` from its proto3 JSON form. */
export function encodeLoadBalancingPolicy(json: unknown, options: JsonReadOptions = {}): Uint8Array {
  return encodeJson(LoadBalancingPolicy, json, options);
}
