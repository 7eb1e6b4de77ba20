// The XdsDependencyManager of gRFC A74 "Changes in xds Resolver": it watches the Listener, its
// RouteConfiguration, every cluster the chosen virtual host's routes name (and every cluster subscribed to
// separately), recursively through aggregate clusters (A37, A75), and each cluster's EDS resource or DNS name,
// and hands out one complete XdsConfig at a time — never one that mixes a new route with a cluster it has not
// heard of yet. Errors follow A88: data errors replace what they concern, ambient errors change nothing.

import { type Address, Code, err, ok, type Status, type StatusOr, unavailable } from '../../core/index.js';
import type { XdsResourceType } from '../client/resource-type.js';
import type { CancelWatch, XdsResourceWatcher, XdsWatcher } from '../client/watcher.js';
import { localityKey } from '../resources/cluster-load-assignment.js';
import { selectVirtualHost } from '../resources/select-virtual-host.js';
import type {
  XdsCluster,
  XdsEndpointResource,
  XdsListener,
  XdsRouteConfiguration,
  XdsVirtualHost,
} from '../resources/types.js';
import type { XdsClusterConfig, XdsConfig } from '../xds-config.js';

/** A37: an aggregate cluster graph deeper than this fails. */
export const MAX_AGGREGATE_CLUSTER_DEPTH = 16;

/** The four resource types the manager watches (the client's LDS / RDS / CDS / EDS types). */
export interface XdsResourceTypes {
  readonly listener: XdsResourceType<XdsListener>;
  readonly routeConfiguration: XdsResourceType<XdsRouteConfiguration>;
  readonly cluster: XdsResourceType<XdsCluster>;
  readonly endpoint: XdsResourceType<XdsEndpointResource>;
}

/** Resolves a LOGICAL_DNS cluster's host name to IP addresses (Node's dns in production, a fake in tests). */
export interface DnsResolver {
  resolve(hostname: string): Promise<readonly string[]>;
}

export interface XdsDependencyManagerOptions {
  readonly watcher: XdsWatcher;
  readonly types: XdsResourceTypes;
  readonly listenerName: string;
  /** The data plane authority (the target's name) that selects the virtual host (A27). */
  readonly authority: string;
  readonly dns: DnsResolver;
  /**
   * A complete config, or an error that makes the channel stop using the previous one (A74: the listener or
   * route configuration does not exist or was rejected with nothing cached, or no virtual host matches).
   */
  readonly onUpdate: (config: StatusOr<XdsConfig>) => void;
  readonly trace?: (message: () => string) => void;
}

/** One watched resource: its latest value or data error (A88), and the watch to cancel. */
class Watched<T> implements XdsResourceWatcher<T> {
  value: T | undefined;
  error: Status | undefined;
  cancel: CancelWatch = () => {};

  constructor(
    private readonly onChange: () => void,
    private readonly trace: (message: () => string) => void,
    private readonly what: string,
  ) {}

  /** Whether the watch has heard anything decisive yet. */
  get settled(): boolean {
    return this.value !== undefined || this.error !== undefined;
  }

  onResourceChanged(value: T): void {
    this.value = value;
    this.error = undefined;
    this.onChange();
  }

  onResourceError(s: Status): void {
    this.value = undefined;
    // A88 "Propagating Status to Data Plane RPCs" (with A54): the client's NOT_FOUND / INVALID_ARGUMENT
    // describe the resource, not the call; what reaches calls is UNAVAILABLE with the reason.
    this.error = s.code === Code.UNAVAILABLE ? s : unavailable(s.details);
    this.onChange();
  }

  onAmbientError(s: Status): void {
    // A88: an ambient error leaves the cached resource in use.
    this.trace(() => `${this.what}: ambient error ignored: ${s.details}`);
  }
}

/** A LOGICAL_DNS name being resolved. */
class DnsName {
  endpoints: XdsEndpointResource | undefined;
  error: string | undefined;
  settled = false;
  private generation = 0;
  stopped = false;

  constructor(
    readonly cluster: string,
    readonly hostname: string,
    readonly port: number,
    private readonly dns: DnsResolver,
    private readonly onChange: () => void,
  ) {
    this.resolve();
  }

  resolve(): void {
    const generation = ++this.generation;
    this.dns.resolve(this.hostname).then(
      (ips) => this.settle(generation, ips, undefined),
      (e: unknown) =>
        this.settle(
          generation,
          [],
          `DNS resolution of ${this.hostname} failed: ${(e as Error).message ?? e}`,
        ),
    );
  }

  private settle(generation: number, ips: readonly string[], error: string | undefined): void {
    if (this.stopped || generation !== this.generation) return;
    this.settled = true;
    if (error === undefined && ips.length === 0)
      error = `DNS resolution of ${this.hostname} returned no addresses`;
    if (error !== undefined) {
      // Keep serving the last good addresses; the note explains when there are none.
      this.error = error;
    } else {
      this.error = undefined;
      this.endpoints = dnsEndpoints(
        this.cluster,
        this.hostname,
        ips.map((host) => ({ host, port: this.port })),
      );
    }
    this.onChange();
  }
}

/** A61 "Changes to Logical DNS Clusters": every resolved address in one endpoint, one unnamed locality. */
export function dnsEndpoints(
  cluster: string,
  hostname: string,
  addresses: readonly Address[],
): XdsEndpointResource {
  const name = { region: '', zone: '', subZone: '' };
  return {
    clusterName: cluster,
    priorities: [
      [
        {
          name,
          key: localityKey(name),
          weight: 1,
          endpoints: [{ addresses, weight: 1, healthStatus: 'UNKNOWN', hashKey: undefined, hostname }],
        },
      ],
    ],
    drops: [],
  };
}

/** Collects the clusters map for one pass over the dependency graph. */
interface Walk {
  readonly clusters: Map<string, StatusOr<XdsClusterConfig>>;
  readonly neededClusters: Set<string>;
  readonly neededEds: Set<string>;
  readonly neededDns: Set<string>;
  complete: boolean;
}

export class XdsDependencyManager {
  private readonly trace: (message: () => string) => void;
  private readonly listener: Watched<XdsListener>;
  private route: { name: string; watch: Watched<XdsRouteConfiguration> } | null = null;
  private readonly clusters = new Map<string, Watched<XdsCluster>>();
  private readonly endpoints = new Map<string, Watched<XdsEndpointResource>>();
  private readonly dnsNames = new Map<string, DnsName>();
  private readonly subscriptions = new Map<string, number>();
  private destroyed = false;
  /** Set while a pass runs: changes during it (a cached resource delivered at once) cause one more pass. */
  private running = false;
  private again = false;

  constructor(private readonly options: XdsDependencyManagerOptions) {
    this.trace = options.trace ?? (() => {});
    this.listener = new Watched(() => this.changed(), this.trace, `Listener ${options.listenerName}`);
    this.listener.cancel = options.watcher.watch(options.types.listener, options.listenerName, this.listener);
  }

  /**
   * Keeps `cluster` in the config although no route names it (A74 dynamic subscriptions; A31: a cluster that
   * calls still reference). Returns the function that ends the subscription.
   */
  subscribe(cluster: string): () => void {
    this.subscriptions.set(cluster, (this.subscriptions.get(cluster) ?? 0) + 1);
    this.changed();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const n = this.subscriptions.get(cluster) ?? 0;
      if (n <= 1) this.subscriptions.delete(cluster);
      else this.subscriptions.set(cluster, n - 1);
      this.changed();
    };
  }

  /** A74: a re-resolution request from the LB tree re-resolves every LOGICAL_DNS cluster. */
  requestReresolution(): void {
    for (const name of this.dnsNames.values()) name.resolve();
  }

  destroy(): void {
    this.destroyed = true;
    this.listener.cancel();
    this.route?.watch.cancel();
    for (const w of this.clusters.values()) w.cancel();
    for (const w of this.endpoints.values()) w.cancel();
    for (const d of this.dnsNames.values()) d.stopped = true;
    this.clusters.clear();
    this.endpoints.clear();
    this.dnsNames.clear();
  }

  private changed(): void {
    if (this.destroyed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      do {
        this.again = false;
        this.pass();
      } while (this.again && !this.destroyed);
    } finally {
      this.running = false;
    }
  }

  /** One look at everything: start and stop watches, and report if the picture is complete. */
  private pass(): void {
    const listener = this.listener;
    if (listener.error !== undefined) {
      this.fail(listener.error, 'Listener', this.options.listenerName);
      return;
    }
    if (listener.value === undefined) return;
    const source = listener.value.routeSource;
    let routeConfig: XdsRouteConfiguration | undefined;
    if (source.kind === 'inline') {
      this.setRouteWatch(null);
      routeConfig = source.routeConfig;
    } else {
      const watch = this.setRouteWatch(source.routeConfigName);
      if (watch.error !== undefined) {
        this.fail(watch.error, 'RouteConfiguration', source.routeConfigName);
        return;
      }
      routeConfig = watch.value;
      if (routeConfig === undefined) return;
    }
    const virtualHost = selectVirtualHost(routeConfig.virtualHosts, this.options.authority);
    if (virtualHost === undefined) {
      this.clearClusters();
      this.options.onUpdate(
        err(
          unavailable(
            `RouteConfiguration ${routeConfig.name}: no virtual host matches "${this.options.authority}"`,
          ),
        ),
      );
      return;
    }
    const walk: Walk = {
      clusters: new Map(),
      neededClusters: new Set(),
      neededEds: new Set(),
      neededDns: new Set(),
      complete: true,
    };
    for (const name of rootClusters(virtualHost, this.subscriptions.keys())) this.visit(name, walk, 0, []);
    this.dropUnneeded(walk);
    if (!walk.complete) return;
    this.options.onUpdate(
      ok({ listener: listener.value, routeConfig, virtualHost, clusters: walk.clusters }),
    );
  }

  /**
   * Visits one cluster (recording its entry) and returns its leaf clusters for an enclosing aggregate: itself
   * for an EDS / LOGICAL_DNS cluster, its own leaves for an aggregate one, none when it cannot be used.
   */
  private visit(name: string, walk: Walk, depth: number, path: readonly string[]): readonly string[] {
    walk.neededClusters.add(name);
    const watch = this.clusterWatch(name);
    if (watch.error !== undefined) {
      walk.clusters.set(name, err(watch.error));
      return [];
    }
    const cluster = watch.value;
    if (cluster === undefined) {
      walk.complete = false;
      return [];
    }
    const discovery = cluster.discovery;
    if (discovery.kind === 'aggregate') {
      if (path.includes(name)) return []; // A75: a loop contributes nothing
      if (depth >= MAX_AGGREGATE_CLUSTER_DEPTH) {
        walk.clusters.set(
          name,
          err(
            unavailable(
              `aggregate cluster ${name}: the cluster graph is deeper than ${MAX_AGGREGATE_CLUSTER_DEPTH}`,
            ),
          ),
        );
        return [];
      }
      const leaves: string[] = [];
      const seen = new Set<string>();
      const inner = [...path, name];
      for (const child of discovery.clusters) {
        // A37: a cluster reached twice keeps its earliest position.
        for (const leaf of this.visit(child, walk, depth + 1, inner)) {
          if (!seen.has(leaf)) {
            seen.add(leaf);
            leaves.push(leaf);
          }
        }
      }
      if (!walk.clusters.has(name)) {
        walk.clusters.set(
          name,
          leaves.length === 0 && walk.complete
            ? err(unavailable(`aggregate cluster ${name} has no usable leaf clusters`))
            : ok({ cluster, children: { kind: 'aggregate', leafClusters: leaves } }),
        );
      }
      return leaves;
    }
    if (discovery.kind === 'eds') {
      walk.neededEds.add(discovery.edsServiceName);
      const eds = this.endpointWatch(discovery.edsServiceName);
      if (!eds.settled) {
        walk.complete = false;
        return [name];
      }
      walk.clusters.set(
        name,
        ok({
          cluster,
          children: {
            kind: 'endpoints',
            endpoints: eds.value,
            resolutionNote: eds.error === undefined ? '' : eds.error.details,
          },
        }),
      );
      return [name];
    }
    const key = `${name}\n${discovery.hostname}:${discovery.port}`;
    walk.neededDns.add(key);
    let dns = this.dnsNames.get(key);
    if (dns === undefined) {
      dns = new DnsName(name, discovery.hostname, discovery.port, this.options.dns, () => this.changed());
      this.dnsNames.set(key, dns);
    }
    if (!dns.settled) {
      walk.complete = false;
      return [name];
    }
    walk.clusters.set(
      name,
      ok({
        cluster,
        children: { kind: 'endpoints', endpoints: dns.endpoints, resolutionNote: dns.error ?? '' },
      }),
    );
    return [name];
  }

  private setRouteWatch(name: string | null): Watched<XdsRouteConfiguration> {
    if (this.route !== null && this.route.name === name) return this.route.watch;
    this.route?.watch.cancel();
    this.route = null;
    if (name === null) return undefined as never;
    const watch = new Watched<XdsRouteConfiguration>(
      () => this.changed(),
      this.trace,
      `RouteConfiguration ${name}`,
    );
    this.route = { name, watch };
    watch.cancel = this.options.watcher.watch(this.options.types.routeConfiguration, name, watch);
    return watch;
  }

  private clusterWatch(name: string): Watched<XdsCluster> {
    let watch = this.clusters.get(name);
    if (watch === undefined) {
      watch = new Watched<XdsCluster>(() => this.changed(), this.trace, `Cluster ${name}`);
      this.clusters.set(name, watch);
      watch.cancel = this.options.watcher.watch(this.options.types.cluster, name, watch);
    }
    return watch;
  }

  private endpointWatch(name: string): Watched<XdsEndpointResource> {
    let watch = this.endpoints.get(name);
    if (watch === undefined) {
      watch = new Watched<XdsEndpointResource>(
        () => this.changed(),
        this.trace,
        `ClusterLoadAssignment ${name}`,
      );
      this.endpoints.set(name, watch);
      watch.cancel = this.options.watcher.watch(this.options.types.endpoint, name, watch);
    }
    return watch;
  }

  private dropUnneeded(walk: Walk): void {
    for (const [name, watch] of this.clusters) {
      if (!walk.neededClusters.has(name)) {
        this.clusters.delete(name);
        watch.cancel();
      }
    }
    for (const [name, watch] of this.endpoints) {
      if (!walk.neededEds.has(name)) {
        this.endpoints.delete(name);
        watch.cancel();
      }
    }
    for (const [key, dns] of this.dnsNames) {
      if (!walk.neededDns.has(key)) {
        this.dnsNames.delete(key);
        dns.stopped = true;
      }
    }
  }

  private clearClusters(): void {
    this.dropUnneeded({
      clusters: new Map(),
      neededClusters: new Set(),
      neededEds: new Set(),
      neededDns: new Set(),
      complete: true,
    });
  }

  /** A74: a listener or route configuration data error replaces the whole config. */
  private fail(s: Status, type: string, name: string): void {
    this.clearClusters();
    const details = s.details.includes(name) ? s.details : `${type} ${name}: ${s.details}`;
    this.options.onUpdate(err(unavailable(details)));
  }
}

/** The clusters the virtual host's routes name, then the separately subscribed ones, without repeats. */
function rootClusters(virtualHost: XdsVirtualHost, subscribed: Iterable<string>): string[] {
  const names = new Set<string>();
  for (const route of virtualHost.routes) {
    const action = route.action;
    if (action.kind === 'cluster') names.add(action.cluster);
    else if (action.kind === 'weighted_clusters') for (const c of action.clusters) names.add(c.name);
  }
  for (const name of subscribed) names.add(name);
  return [...names];
}
