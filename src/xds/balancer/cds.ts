// cds_experimental without xds_cluster_resolver (gRFC A74 "Changes in cds LB policy"): the cluster's
// resources come from the XdsConfig attribute the xds resolver delivers. An EDS or LOGICAL_DNS cluster becomes
// the priority tree (A56, stable child names) with xds_cluster_impl above the cluster's endpoint-picking
// policy in each priority (A37) with xds_override_host between them (A55), under outlier_detection when the cluster asks for it (A50, A75); an aggregate cluster becomes a priority over cds children for its leaf
// clusters (A75 "Aggregate Cluster Changes").

import {
  Code,
  ConfigError,
  ConfigReader,
  childHelper,
  type DropPick,
  FailPicker,
  type Helper,
  type LbUpdate,
  type LoadBalancer,
  ok,
  type ParsedLbConfig,
  type Picker,
  type PickResult,
  type PolicyFactory,
  type PolicyLookup,
  type Status,
  status,
  TRANSIENT_FAILURE,
  unavailable,
} from '../../core/index.js';
import { OUTLIER_DETECTION } from '../../policies/outlier-detection/config.js';
import { PRIORITY } from '../../policies/priority/index.js';
import { ChildPolicy } from '../../policies/shared/child-policy.js';
import type { JsonObject } from '../../protos/json.js';
import type { LbConfigList } from '../resources/lb-policy-registry.js';
import { type XdsClusterConfig, xdsConfigOf } from '../xds-config.js';
import { XDS_CLUSTER_IMPL } from './cluster-impl.js';
import { XDS_OVERRIDE_HOST } from './override-host/config.js';
import { PriorityTreeGenerator } from './priority-tree.js';

export const CDS = 'cds_experimental';

export interface CdsConfig {
  readonly cluster: string;
  /** A74: a cluster chosen dynamically rather than named by the routes; updates without it are ignored. */
  readonly isDynamic: boolean;
}

export function parseCdsConfig(json: unknown, path: string): CdsConfig {
  const reader = new ConfigReader(json, path);
  const cluster = reader.required('cluster');
  if (typeof cluster.value !== 'string' || cluster.value === '') {
    throw new ConfigError(cluster.path, 'expected a non-empty cluster name');
  }
  return { cluster: cluster.value, isDynamic: reader.optionalBoolean('isDynamic') ?? false };
}

/** Drops every call (A31: a deleted cluster must not queue wait-for-ready calls forever). */
class DropPicker implements Picker {
  readonly constantResult: DropPick;
  constructor(s: Status) {
    this.constantResult = Object.freeze({ type: 'drop', status: s });
  }
  pick(): PickResult {
    return this.constantResult;
  }
}

/** The child config of an aggregate cluster: one cds child per leaf cluster, in priority order (A75). */
export function aggregatePriorityConfig(leafClusters: readonly string[]): LbConfigList {
  const children: JsonObject = {};
  for (const leaf of leafClusters) {
    children[leaf] = { config: [{ [CDS]: { cluster: leaf } }], ignoreReresolutionRequests: false };
  }
  return [{ [PRIORITY]: { children, priorities: [...leafClusters] } }];
}

export class CdsLb implements LoadBalancer<CdsConfig> {
  private readonly child: ChildPolicy;
  /** Priority child names stay stable across EDS updates (A56) — one generator per cds instance. */
  private readonly priorities = new PriorityTreeGenerator();
  private hasChild = false;
  private destroyed = false;

  constructor(
    private readonly helper: Helper,
    private readonly registry: PolicyLookup,
  ) {
    this.child = new ChildPolicy(
      childHelper(helper, {
        updateState: (state, s, picker) => {
          if (!this.destroyed) helper.updateState(state, s, picker);
        },
      }),
      registry,
    );
  }

  update(update: LbUpdate<CdsConfig>): boolean {
    if (this.destroyed) return false;
    const name = update.config.cluster;
    const config = xdsConfigOf(update.attributes);
    if (config === undefined) {
      return this.fail(
        status(
          Code.UNAVAILABLE,
          `cds ${name}: no xDS config in the update (cds_experimental runs under lbtree's xds resolver)`,
        ),
      );
    }
    const entry = config.clusters.get(name);
    if (entry === undefined) {
      // A74: a dynamic cluster's subscription may not have reached the config yet.
      if (update.config.isDynamic) return true;
      this.stopChild();
      this.helper.updateState(
        TRANSIENT_FAILURE,
        unavailable(`cluster ${name} is not in the xDS config`),
        new DropPicker(unavailable(`cluster ${name} is not in the xDS config`)),
      );
      return false;
    }
    // A88: the cluster does not exist, or was rejected with no good version: its calls fail with that status.
    if (!entry.ok) return this.fail(entry.status);
    let tree: { config: LbConfigList; endpoints: LbUpdate['endpoints'] };
    try {
      tree = this.childTree(name, entry.value);
    } catch (e) {
      if (e instanceof CdsFailure) return this.fail(e.status);
      throw e;
    }
    let parsed: ParsedLbConfig;
    try {
      parsed = this.registry.parseLbConfigList(tree.config, `$.cluster(${name})`);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      return this.fail(status(Code.UNAVAILABLE, `cds ${name}: ${e.message}`));
    }
    this.hasChild = true;
    const note = entry.value.children.kind === 'endpoints' ? entry.value.children.resolutionNote : '';
    return this.child.update(parsed, tree.endpoints, update.attributes, note || update.resolutionNote);
  }

  private childTree(
    name: string,
    cluster: XdsClusterConfig,
  ): { config: LbConfigList; endpoints: LbUpdate['endpoints'] } {
    const children = cluster.children;
    if (children.kind === 'aggregate') {
      if (children.leafClusters.length === 0) {
        throw new CdsFailure(unavailable(`aggregate cluster ${name} has no usable leaf clusters`));
      }
      return { config: aggregatePriorityConfig(children.leafClusters), endpoints: ok([]) };
    }
    const endpoints = children.endpoints;
    if (endpoints === undefined) {
      throw new CdsFailure(
        unavailable(
          `cluster ${name}: no endpoints${children.resolutionNote ? `: ${children.resolutionNote}` : ''}`,
        ),
      );
    }
    if (endpoints.priorities.length === 0) {
      throw new CdsFailure(
        unavailable(
          `cluster ${name} has no endpoints${children.resolutionNote ? ` (${children.resolutionNote})` : ''}`,
        ),
      );
    }
    // A55: xds_override_host sits right below xds_cluster_impl (so load reports count every call), always,
    // whether or not a stateful session filter is configured.
    const endpointPolicy: LbConfigList = [
      {
        [XDS_CLUSTER_IMPL]: {
          clusterName: name,
          childPolicy: [
            { [XDS_OVERRIDE_HOST]: { clusterName: name, childPolicy: cluster.cluster.lbPolicy } },
          ],
        },
      },
    ];
    // A37: EDS priorities ignore re-resolution requests; a LOGICAL_DNS priority passes them to the resolver.
    const built = this.priorities.build(endpoints, endpointPolicy, {
      ignoreReresolutionRequests: cluster.cluster.discovery.kind === 'eds',
      keepDrainingEndpoints: true,
    });
    // A50 with A75's placement: outlier detection sits above the priorities, so it works across them.
    const outlier = cluster.cluster.outlierDetection;
    const config: LbConfigList =
      outlier === undefined
        ? built.config
        : [{ [OUTLIER_DETECTION]: { ...(outlier as unknown as JsonObject), childPolicy: built.config } }];
    return { config, endpoints: ok(built.endpoints) };
  }

  /** Reports TRANSIENT_FAILURE with `s`; the child, if any, is dropped (its cluster is unusable). */
  private fail(s: Status): boolean {
    this.stopChild();
    this.helper.updateState(TRANSIENT_FAILURE, s, new FailPicker(s));
    return false;
  }

  private stopChild(): void {
    if (!this.hasChild) return;
    this.hasChild = false;
    this.child.destroy();
  }

  exitIdle(): void {
    this.child.exitIdle();
  }

  resetBackoff(): void {
    this.child.resetBackoff();
  }

  destroy(): void {
    this.destroyed = true;
    this.child.destroy();
  }
}

class CdsFailure extends Error {
  constructor(readonly status: Status) {
    super(status.details);
  }
}

export const cdsFactory: PolicyFactory<CdsConfig> = {
  name: CDS,
  parseConfig: (json, path) => parseCdsConfig(json, path),
  create: (helper, registry) => new CdsLb(helper, registry),
};
