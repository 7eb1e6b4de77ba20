// cds_experimental without xds_cluster_resolver (gRFC A74 "Changes in cds LB policy"): the cluster's
// resources come from the XdsConfig attribute the xds resolver delivers, and its child tree from the one
// builder (cluster-config-builder.ts) that clusterToTree and the simulator use too.

import {
  BACKEND_SERVICE_ARG,
  type ChannelArgs,
  CONNECTING,
  Code,
  ConfigError,
  ConfigReader,
  type ConnectivityState,
  childHelper,
  type DropPick,
  FailPicker,
  type Helper,
  type LbUpdate,
  type LoadBalancer,
  OK_STATUS,
  ok,
  type ParsedLbConfig,
  type Picker,
  type PickResult,
  type PolicyFactory,
  type PolicyLookup,
  type PolicyNode,
  type Status,
  status,
  statusNode,
  TRANSIENT_FAILURE,
  unavailable,
} from '../../core/index.js';
import { ChildPolicy } from '../../policies/shared/child-policy.js';
import { SingleChildPolicy } from '../../policies/shared/single-child-policy.js';
import type { XdsUpstreamTls } from '../resources/tls-context.js';
import {
  ClusterTransportSecurity,
  type ClusterTransportSecurityRegistry,
  tlsFingerprint,
  transportSecurityRegistryOf,
  XDS_TRANSPORT_SECURITY_ARG,
} from '../transport-security.js';
import { xdsClustersOf } from '../xds-config.js';
import {
  buildClusterChildTree,
  CDS,
  type ClusterChildTree,
  ClusterUnusable,
} from './cluster-config-builder.js';
import { PriorityTreeGenerator } from './priority-tree.js';

export { aggregatePriorityConfig, CDS } from './cluster-config-builder.js';

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

export class CdsLb extends SingleChildPolicy implements LoadBalancer<CdsConfig> {
  protected readonly child: ChildPolicy;
  /** Priority child names stay stable across EDS updates (A56) — one generator per cds instance. */
  private readonly priorities = new PriorityTreeGenerator();
  private hasChild = false;
  /** A29: the cluster's TLS config for the connections below, one object kept across updates. */
  private security: { held: ClusterTransportSecurity; from: ClusterTransportSecurityRegistry | null } | null =
    null;
  /** What this policy last reported, and its cluster (the live view). */
  private state: ConnectivityState = CONNECTING;
  private status: Status = OK_STATUS;
  private cluster = '';

  constructor(
    private readonly helper: Helper,
    private readonly registry: PolicyLookup,
  ) {
    super();
    this.child = new ChildPolicy(
      childHelper(helper, {
        // One child: whether its exitIdle() would wake anything is ours to say too.
        updateWakeable: (wakeable) => helper.updateWakeable?.(wakeable),
        updateState: (state, s, picker) => {
          if (!this.destroyed) this.report(state, s, picker);
        },
      }),
      registry,
    );
  }

  update(update: LbUpdate<CdsConfig>): boolean {
    if (this.destroyed) return false;
    const name = update.config.cluster;
    this.cluster = name;
    const config = xdsClustersOf(update.attributes);
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
      this.report(
        TRANSIENT_FAILURE,
        unavailable(`cluster ${name} is not in the xDS config`),
        new DropPicker(unavailable(`cluster ${name} is not in the xDS config`)),
      );
      return false;
    }
    // A88: the cluster does not exist, or was rejected with no good version: its calls fail with that status.
    if (!entry.ok) return this.fail(entry.status);
    let tree: ClusterChildTree;
    try {
      tree = buildClusterChildTree(name, entry.value, this.priorities);
    } catch (e) {
      if (e instanceof ClusterUnusable) return this.fail(e.status);
      throw e;
    }
    let parsed: ParsedLbConfig;
    try {
      parsed = this.registry.parseLbConfigList(tree.config, `$.cluster(${name})`);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      return this.fail(status(Code.UNAVAILABLE, `cds ${name}: ${e.message}`));
    }
    const security = this.securityFor(
      name,
      entry.value.cluster.upstreamTls,
      transportSecurityRegistryOf(update.attributes),
    );
    this.hasChild = true;
    const note = entry.value.children.kind === 'endpoints' ? entry.value.children.resolutionNote : '';
    const attributes: ChannelArgs =
      entry.value.children.kind === 'aggregate'
        ? { ...update.attributes, [XDS_TRANSPORT_SECURITY_ARG]: security }
        : // A89: the tree below a leaf cluster records its metrics under this backend service.
          { ...update.attributes, [XDS_TRANSPORT_SECURITY_ARG]: security, [BACKEND_SERVICE_ARG]: name };
    return this.child.update(parsed, ok(tree.endpoints), attributes, note || update.resolutionNote);
  }

  /**
   * The cluster's object for this TLS config, from the xDS client's registry (or one of its own without a
   * registry). A changed config rebuilds the tree below: its subchannels carry the new object, so every
   * connection of the cluster is made with the new config (the old connections are left unused, as a changed
   * cluster's are in other gRPC implementations).
   */
  private securityFor(
    cluster: string,
    upstreamTls: XdsUpstreamTls | undefined,
    registry: ClusterTransportSecurityRegistry | undefined,
  ): ClusterTransportSecurity {
    const current = this.security;
    const from = registry ?? null;
    if (current !== null && current.held.cluster === cluster && current.from === from) {
      if (current.held.fingerprint === tlsFingerprint(upstreamTls)) return current.held;
      this.stopChild();
    }
    this.releaseSecurity();
    const held =
      registry?.acquire(cluster, upstreamTls) ?? new ClusterTransportSecurity(cluster, upstreamTls);
    this.security = { held, from };
    return held;
  }

  private releaseSecurity(): void {
    if (this.security !== null) this.security.from?.release(this.security.held);
    this.security = null;
  }

  protected override beforeChildDestroyed(): void {
    this.releaseSecurity();
  }

  /** Reports TRANSIENT_FAILURE with `s`; the child, if any, is dropped (its cluster is unusable). */
  private fail(s: Status): boolean {
    this.stopChild();
    this.report(TRANSIENT_FAILURE, s, new FailPicker(s));
    return false;
  }

  private report(state: ConnectivityState, s: Status, picker: Picker): void {
    this.state = state;
    this.status = s;
    this.helper.updateState(state, s, picker);
  }

  /** The live view: the cluster, and the tree built for it (none while the cluster is unusable). */
  describe(): PolicyNode {
    return statusNode(
      {
        policy: CDS,
        state: this.state,
        facts: { cluster: this.cluster },
        children: this.hasChild
          ? [{ name: this.cluster, node: this.child.describe(this.state, this.status) }]
          : [],
      },
      this.status,
    );
  }

  private stopChild(): void {
    if (!this.hasChild) return;
    this.hasChild = false;
    this.child.destroy();
  }
}

export const cdsFactory: PolicyFactory<CdsConfig> = {
  name: CDS,
  parseConfig: (json, path) => parseCdsConfig(json, path),
  create: (helper, registry) => new CdsLb(helper, registry),
};
