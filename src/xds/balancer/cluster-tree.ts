// From xDS resources to a runnable tree: (Cluster, ClusterLoadAssignment) → (LoadBalancingConfig, endpoints,
// attributes), as bytes or as proto3 JSON, so a whole xDS cluster runs in the simulator or on a grpc-js
// channel without a control plane. The Cluster goes through the one cluster validator (parseCluster) and the
// tree through the one builder cds uses (buildClusterChildTree): outlier_detection, priority, xds_cluster_impl,
// xds_override_host and the endpoint-picking policy, as on an xds: channel. The attributes carry the cluster
// the way the xds resolver's XdsConfig does, so xds_cluster_impl finds its drops and request limit.

import { toBinary } from '@bufbuild/protobuf';
import { type ChannelArgs, type Endpoint, ok } from '../../core/index.js';
import { PRIORITY } from '../../policies/priority/index.js';
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
import { parseCluster } from '../resources/cluster.js';
import { type ClusterOptions, decodeCluster } from '../resources/cluster-lb-policy.js';
import {
  decodeClusterLoadAssignment,
  parseClusterLoadAssignment,
  type XdsEndpointResource,
} from '../resources/cluster-load-assignment.js';
import { XdsResourceError } from '../resources/errors.js';
import type { LbConfigList } from '../resources/lb-policy-registry.js';
import type { XdsCluster } from '../resources/types.js';
import { XDS_CONFIG_ATTRIBUTE, type XdsClusterConfig, type XdsClusters } from '../xds-config.js';
import { buildClusterChildTree, ClusterUnusable } from './cluster-config-builder.js';
import {
  type EndpointWeightRule,
  type PlainXdsEndpoint,
  PriorityTreeGenerator,
  toPlainEndpoints,
} from './priority-tree.js';

export interface ClusterTreeOptions extends ClusterOptions, EndpointWeightRule {
  /** Prefix of the priority child names (`priority-0-` gives `priority-0-0`, `priority-0-1`, …). */
  readonly childNamePrefix?: string;
}

/** The result in the simulator's plain endpoint form: feed it to `sim.update(endpoints, config, attributes)`. */
export interface PlainClusterTree {
  readonly config: LbConfigList;
  readonly endpoints: PlainXdsEndpoint[];
  readonly childNames: readonly string[];
  /** The cluster as an xds: channel's XdsConfig carries it (xds_cluster_impl reads its drops and limits). */
  readonly attributes: ChannelArgs;
}

/** The result with lbtree Endpoints (typed attributes, including XDS_PRIORITY and XDS_HEALTH_STATUS). */
export interface EndpointClusterTree {
  readonly config: LbConfigList;
  readonly endpoints: readonly Endpoint[];
  readonly childNames: readonly string[];
  readonly attributes: ChannelArgs;
}

/**
 * One cluster followed over successive CDS / EDS updates: each update is validated (a bad one throws the NACK
 * reason and changes nothing) and priority child names stay stable from one update to the next.
 */
export class XdsClusterTreeGenerator {
  private readonly priorities: PriorityTreeGenerator;

  constructor(private readonly options: ClusterTreeOptions = {}) {
    this.priorities = new PriorityTreeGenerator(options.childNamePrefix, options);
  }

  /** From already validated resources (an EDS cluster and its ClusterLoadAssignment). */
  build(cluster: XdsCluster, assignment: XdsEndpointResource): EndpointClusterTree {
    const discovery = cluster.discovery;
    if (discovery.kind !== 'eds') {
      const kind = discovery.kind === 'aggregate' ? 'an aggregate cluster' : 'a LOGICAL_DNS cluster';
      throw new XdsResourceError(
        'type',
        `cluster "${cluster.name}" is ${kind}; a cluster tree is built from an EDS cluster and its ClusterLoadAssignment`,
        'Cluster',
      );
    }
    if (assignment.clusterName !== '' && assignment.clusterName !== discovery.edsServiceName) {
      throw new XdsResourceError(
        'cluster_name',
        `the ClusterLoadAssignment is for "${assignment.clusterName}", but cluster "${cluster.name}" asks EDS for "${discovery.edsServiceName}"`,
      );
    }
    const entry: XdsClusterConfig = {
      cluster,
      children: { kind: 'endpoints', endpoints: assignment, resolutionNote: '' },
    };
    const clusters: XdsClusters = { clusters: new Map([[cluster.name, ok(entry)]]) };
    const attributes = { [XDS_CONFIG_ATTRIBUTE]: clusters };
    if (assignment.priorities.length === 0) {
      // A valid assignment with no endpoints: cds reports TRANSIENT_FAILURE for it, as a priority policy with
      // no priorities does.
      return {
        config: [{ [PRIORITY]: { children: {}, priorities: [] } }],
        endpoints: [],
        childNames: [],
        attributes,
      };
    }
    let tree: ReturnType<typeof buildClusterChildTree>;
    try {
      tree = buildClusterChildTree(cluster.name, entry, this.priorities);
    } catch (e) {
      if (e instanceof ClusterUnusable) throw new XdsResourceError('endpoints', e.status.details);
      throw e;
    }
    return { ...tree, attributes };
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
  return {
    config: tree.config,
    endpoints: toPlainEndpoints(tree.endpoints),
    childNames: tree.childNames,
    attributes: tree.attributes,
  };
}

/**
 * (Cluster bytes, ClusterLoadAssignment bytes) → `{ config, endpoints, attributes }`: the tree an xds:
 * channel's cds policy runs for the cluster, the endpoints in the simulator's plain form, and the attributes to
 * deliver with them. Throws an Error whose message is the NACK reason
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
