// From xDS resources to a runnable tree: (Cluster, ClusterLoadAssignment) → (root LoadBalancingConfig,
// endpoints), as bytes or as proto3 JSON, so a whole xDS cluster runs in the simulator or on a grpc-js channel
// before the ADS client exists.

import { toBinary } from '@bufbuild/protobuf';
import type { Endpoint } from '../../core/index.js';
import { OUTLIER_DETECTION } from '../../policies/outlier-detection/config.js';
import {
  type Cluster,
  ClusterSchema,
  LoadBalancingPolicySchema,
} from '../../protos/gen/envoy/config/cluster/v3/cluster_pb.js';
import {
  type ClusterLoadAssignment,
  ClusterLoadAssignmentSchema,
} from '../../protos/gen/envoy/config/endpoint/v3/endpoint_pb.js';
import { type JsonReadOptions, messageFromJson } from '../../protos/json.js';
import {
  type ClusterOptions,
  decodeCluster,
  parseCluster,
  type XdsClusterResource,
} from '../resources/cluster-lb-policy.js';
import {
  decodeClusterLoadAssignment,
  parseClusterLoadAssignment,
  type XdsEndpointResource,
} from '../resources/cluster-load-assignment.js';
import { XdsResourceError } from '../resources/errors.js';
import type { LbConfigList } from '../resources/lb-policy-registry.js';
import {
  type PlainXdsEndpoint,
  PriorityTreeGenerator,
  type PriorityTreeOptions,
  toPlainEndpoints,
} from './priority-tree.js';

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
    const tree = this.priorities.build(assignment, cluster.lbPolicy, this.options);
    // A50: outlier detection above the priorities, where the cds policy puts it too.
    const od = cluster.outlierDetection;
    return od === undefined
      ? tree
      : { ...tree, config: [{ [OUTLIER_DETECTION]: { ...od, childPolicy: tree.config } }] };
  }

  /** From encoded resources, with endpoints in lbtree's Endpoint form. */
  updateEndpoints(clusterBytes: Uint8Array, assignmentBytes: Uint8Array): EndpointClusterTree {
    return this.updateMessages(
      withResource('Cluster', () => decodeCluster(clusterBytes)),
      withResource('ClusterLoadAssignment', () => decodeClusterLoadAssignment(assignmentBytes)),
    );
  }

  /** From decoded resources (the generated messages), with endpoints in lbtree's Endpoint form. */
  updateMessages(cluster: Cluster, assignment: ClusterLoadAssignment): EndpointClusterTree {
    const validCluster = withResource('Cluster', () => parseCluster(cluster, this.options));
    const validAssignment = withResource('ClusterLoadAssignment', () =>
      parseClusterLoadAssignment(assignment, this.options),
    );
    return withResource('ClusterLoadAssignment', () => this.build(validCluster, validAssignment));
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
    return plain(
      this.updateMessages(
        messageFromJson(ClusterSchema, clusterJson, json),
        messageFromJson(ClusterLoadAssignmentSchema, assignmentJson, json),
      ),
    );
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

/** Encodes an `envoy.config.cluster.v3.Cluster` from its proto3 JSON form. Throws a ProtoJsonError naming the path. */
export function encodeCluster(json: unknown, options: JsonReadOptions = {}): Uint8Array {
  return toBinary(ClusterSchema, messageFromJson(ClusterSchema, json, options));
}

/** Encodes an `envoy.config.endpoint.v3.ClusterLoadAssignment` from its proto3 JSON form. */
export function encodeClusterLoadAssignment(json: unknown, options: JsonReadOptions = {}): Uint8Array {
  return toBinary(ClusterLoadAssignmentSchema, messageFromJson(ClusterLoadAssignmentSchema, json, options));
}

/** Encodes an `envoy.config.cluster.v3.LoadBalancingPolicy` from its proto3 JSON form. */
export function encodeLoadBalancingPolicy(json: unknown, options: JsonReadOptions = {}): Uint8Array {
  return toBinary(LoadBalancingPolicySchema, messageFromJson(LoadBalancingPolicySchema, json, options));
}
