// The transport-neutral half of the xds resolver (A74, A31): it runs the dependency manager and turns each
// complete XdsConfig into what a channel needs — the xds_cluster_manager LB config over every cluster that
// anything can still route to, a fresh config selector, and the XdsConfig to hand the LB tree. A cluster that
// leaves the routes stays in the LB config (with its last entry) until the calls routed to it are done
// picking (A31's two-step removal); then a new result without it follows.

import { type Status, type StatusOr, unavailable } from '../../core/index.js';
import type { JsonObject } from '../../protos/json.js';
import type { XdsWatcher } from '../client/watcher.js';
import { CDS, XDS_CLUSTER_MANAGER } from '../policy-names.js';
import type { LbConfigList } from '../resources/lb-policy-registry.js';
import type { XdsClusterConfig, XdsConfig } from '../xds-config.js';
import { ClusterRefs } from './cluster-refs.js';
import { clusterChildName, type RouteSelection, XdsConfigSelector } from './config-selector.js';
import { type DnsResolver, XdsDependencyManager, type XdsResourceTypes } from './dependency-manager.js';

/** What routes calls: a config selector, or one that fails every call (no usable listener / routes). */
export interface CallRouter {
  select(path: string, metadata: Parameters<XdsConfigSelector['select']>[1]): RouteSelection;
  /**
   * Set while the resolution fails as a whole (A88: the listener or route configuration cannot be used, always
   * UNAVAILABLE): waiting can fix it, so wait-for-ready calls wait for a router without it.
   */
  readonly resolutionError?: Status;
  /** Releases the router's cluster references (once; when the channel stops using it). */
  release(): void;
}

/** Fails every call with one status (A88: the listener or route configuration cannot be used). */
export class FailingRouter implements CallRouter {
  private readonly result: RouteSelection;
  readonly resolutionError: Status;
  constructor(readonly status: Status) {
    this.result = { ok: false, status };
    this.resolutionError = status;
  }
  select(): RouteSelection {
    return this.result;
  }
  release(): void {}
}

export interface XdsResolutionResult {
  readonly router: CallRouter;
  /** The root LB config: xds_cluster_manager_experimental with one cds child per referenced cluster. */
  readonly lbConfig: LbConfigList;
  /** The XdsConfig for the LB tree (undefined before any was complete). */
  readonly xdsConfig: XdsConfig | undefined;
}

export interface XdsResolutionOptions {
  readonly watcher: XdsWatcher;
  readonly types: XdsResourceTypes;
  /** The target's name: the data plane authority that selects the virtual host. */
  readonly authority: string;
  readonly listenerName: string;
  readonly dns: DnsResolver;
  /** A42 io.grpc.channel_id of the channel. */
  readonly channelId: bigint;
  readonly random: () => number;
  /** Runs `fn` soon, outside the current call stack (a released cluster is never removed re-entrantly). */
  readonly defer: (fn: () => void) => void;
  /**
   * Delivers a result; returns whether the channel took it. A result not taken is released at once (the
   * channel never uses its router).
   */
  readonly onResult: (result: XdsResolutionResult) => boolean;
  readonly trace?: (message: () => string) => void;
}

export class XdsResolution {
  private readonly refs: ClusterRefs;
  private readonly manager: XdsDependencyManager;
  private config: XdsConfig | undefined;
  private error: Status | undefined;
  /** The last entry of every cluster still referenced, for clusters the newest config no longer has. */
  private entries = new Map<string, StatusOr<XdsClusterConfig>>();
  private emitting = false;
  private emitPending = false;
  private destroyed = false;

  constructor(private readonly options: XdsResolutionOptions) {
    this.refs = new ClusterRefs((cluster) => this.onClusterUnused(cluster));
    this.manager = new XdsDependencyManager({
      watcher: options.watcher,
      types: options.types,
      listenerName: options.listenerName,
      authority: options.authority,
      dns: options.dns,
      onUpdate: (update) => {
        if (update.ok) {
          this.config = update.value;
          this.error = undefined;
          for (const [name, entry] of update.value.clusters) this.entries.set(name, entry);
        } else {
          this.error = update.status;
        }
        this.emit();
      },
      ...(options.trace ? { trace: options.trace } : {}),
    });
  }

  /** A74: re-resolution requests from the LB tree re-resolve the LOGICAL_DNS clusters. */
  requestReresolution(): void {
    this.manager.requestReresolution();
  }

  destroy(): void {
    this.destroyed = true;
    this.manager.destroy();
  }

  private onClusterUnused(cluster: string): void {
    this.options.trace?.(() => `xds resolver: cluster ${cluster} is no longer referenced`);
    if (this.emitPending || this.destroyed) return;
    this.emitPending = true;
    this.options.defer(() => {
      this.emitPending = false;
      if (!this.destroyed && (this.config !== undefined || this.error !== undefined)) this.emit();
    });
  }

  private emit(): void {
    if (this.destroyed || this.emitting) return;
    this.emitting = true;
    try {
      const router: CallRouter =
        this.error !== undefined || this.config === undefined
          ? new FailingRouter(this.error ?? unavailable('no xDS config yet'))
          : new XdsConfigSelector(this.config.virtualHost, this.refs, {
              channelId: this.options.channelId,
              random: this.options.random,
              defaultMaxStreamDurationMs: this.config.listener.maxStreamDurationMs,
              httpFilters: this.config.listener.httpFilters,
            });
      const clusters = this.refs.names();
      for (const name of this.entries.keys()) if (!this.refs.has(name)) this.entries.delete(name);
      const children: JsonObject = {};
      for (const cluster of clusters) {
        children[clusterChildName(cluster)] = { childPolicy: [{ [CDS]: { cluster } }] };
      }
      let xdsConfig: XdsConfig | undefined;
      if (this.config !== undefined) {
        const merged = new Map(this.config.clusters);
        for (const cluster of clusters) {
          const entry = this.entries.get(cluster);
          if (!merged.has(cluster) && entry !== undefined) merged.set(cluster, entry);
        }
        xdsConfig = { ...this.config, clusters: merged };
      }
      const accepted = this.options.onResult({
        router,
        lbConfig: [{ [XDS_CLUSTER_MANAGER]: { children } }],
        xdsConfig,
      });
      if (!accepted) router.release();
    } finally {
      this.emitting = false;
    }
  }
}
