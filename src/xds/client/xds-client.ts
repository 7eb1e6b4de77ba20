// The public xDS client (gRFC A27, A57, A88, A47, A71): the authorities of the bootstrap, each with its own
// resource cache and watchers (./resource-cache.ts, ./authority.ts) and its servers in priority order, over one
// ADS stream per distinct server (./ads-stream.ts) shared by the authorities naming it. It routes each
// response's resources to the caches of the authorities using that server, falls back to the next server when
// the one in use is unreachable while something watched is not cached (A71), and goes back when a
// higher-priority server delivers again. Subscription changes of one turn go out as one request per type.
import type { Any } from '@bufbuild/protobuf/wkt';
import { type CancelTimer, type Clock, realClock } from '../../core/clock.js';
import { type BackoffOptions, envFlag, type GaugeReporter, type MetricsRecorder } from '../../core/index.js';
import type { Trace } from '../../core/load-balancer.js';
import { Code, type Status, status } from '../../core/status.js';
import { ServerAdsStream } from './ads-stream.js';
import { XdsAuthority } from './authority.js';
import { XDS_FEDERATION_ENV, type XdsBootstrap, type XdsServerConfig, xdsServerKey } from './bootstrap.js';
import { type DecodedResponse, decodeResources, type InvalidResource } from './decode-response.js';
import type { XdsClientDump, XdsServerDump } from './dump.js';
import {
  cacheStateLabel,
  resourceTypeLabel,
  XDS_AUTHORITY_LABEL,
  XDS_CACHE_STATE_LABEL,
  XDS_CLIENT_CONNECTED,
  XDS_CLIENT_RESOURCE_UPDATES_INVALID,
  XDS_CLIENT_RESOURCE_UPDATES_VALID,
  XDS_CLIENT_RESOURCES,
  XDS_CLIENT_SERVER_FAILURE,
  XDS_RESOURCE_TYPE_LABEL,
  XDS_SERVER_LABEL,
} from './metrics.js';
import { nodeProto } from './node.js';
import { nackDetail } from './resource-cache.js';
import type { XdsDecodeContext, XdsResourceType } from './resource-type.js';
import type { XdsTransportFactory } from './transport.js';
import type { CancelWatch, XdsResourceWatcher, XdsWatcher } from './watcher.js';
import { parseResourceName } from './xdstp-name.js';

/** A88: `false` restores the A53 rules (deletions drop resources unless ignore_resource_deletion). */
export const XDS_DATA_ERROR_HANDLING_ENV = 'GRPC_EXPERIMENTAL_XDS_DATA_ERROR_HANDLING';
/** A71: `false` uses only the first server of each list. On by default, as in grpc-go since 1.70. */
export const XDS_FALLBACK_ENV = 'GRPC_EXPERIMENTAL_XDS_FALLBACK';

export interface XdsClientOptions {
  readonly bootstrap: XdsBootstrap;
  readonly transport: XdsTransportFactory;
  /** Every timer (does-not-exist, backoff, deferred sends) runs on it. Default: the real clock. */
  readonly clock?: Clock;
  readonly trace?: Trace;
  /** Handed as it is to every resource type's decoder (e.g. the A52 registry and feature switches). */
  readonly decodeContext?: XdsDecodeContext;
  readonly backoff?: BackoffOptions;
  /** A88 data error handling; default from GRPC_EXPERIMENTAL_XDS_DATA_ERROR_HANDLING (on unless "false"). */
  readonly dataErrorHandling?: boolean;
  /** A47 xdstp: names; default from GRPC_EXPERIMENTAL_XDS_FEDERATION (on unless "false"). */
  readonly federation?: boolean;
  /** A71 fallback to the later servers of a list; default from GRPC_EXPERIMENTAL_XDS_FALLBACK (on unless "false"). */
  readonly fallback?: boolean;
  /** Where an exception thrown by a watcher goes (it never stops the client). Default: a process warning. */
  readonly onWatcherError?: (error: unknown) => void;
}

/** One distinct server (A47 "Server Channel Map"): its ADS stream and the authorities using it now. */
interface ServerChannel {
  readonly server: XdsServerConfig;
  readonly stream: ServerAdsStream;
  readonly users: Set<XdsAuthority>;
}

/**
 * The xDS client: one ADS stream (state of the world, v3) per server in use, shared by every watcher of the
 * authorities using it; per authority a cache of the resources watched, with their versions, errors and
 * does-not-exist timers, all on the given Clock.
 */
export class XdsClient implements XdsWatcher {
  private readonly clock: Clock;
  private readonly trace: Trace;
  private readonly federation: boolean;
  private readonly fallback: boolean;
  private readonly dataErrorHandling: boolean;
  private readonly onWatcherError: (error: unknown) => void;
  /** By authority key: OLD_STYLE for old-style names, else `xdstp:<authority>`. */
  private readonly authorities = new Map<string, XdsAuthority>();
  /** By xdsServerKey. */
  private readonly channels = new Map<string, ServerChannel>();
  /** Every resource type watched, by type URL: a response is decoded once, whichever caches it feeds. */
  private readonly types = new Map<string, XdsResourceType<unknown>>();
  private flushTimer: CancelTimer | undefined;
  private closed = false;
  /** A78: where the client's metrics go (the first channel's recorder), and its gauges' removal. */
  private metrics: MetricsRecorder | undefined;
  private removeGauges: (() => void) | undefined;
  /** The resources gauge's label sets so far (authority × state × type: a few dozen), with their counts. */
  private readonly resourceCounts = new Map<string, { labels: Record<string, string>; count: number }>();

  constructor(private readonly options: XdsClientOptions) {
    this.clock = options.clock ?? realClock;
    this.trace = options.trace ?? (() => {});
    if (!options.bootstrap.xdsServers[0]) throw new Error('the xDS bootstrap lists no server');
    this.federation = options.federation ?? envFlag(XDS_FEDERATION_ENV, true);
    this.fallback = options.fallback ?? envFlag(XDS_FALLBACK_ENV, true);
    this.dataErrorHandling = options.dataErrorHandling ?? envFlag(XDS_DATA_ERROR_HANDLING_ENV, true);
    this.onWatcherError =
      options.onWatcherError ??
      ((e) => process.emitWarning(`xDS watcher threw: ${e instanceof Error ? e.stack : String(e)}`));
  }

  get nodeId(): string {
    return this.options.bootstrap.node.id;
  }

  watch<T>(type: XdsResourceType<T>, name: string, watcher: XdsResourceWatcher<T>): CancelWatch {
    if (this.closed) return this.failWatch(watcher, status(Code.UNAVAILABLE, 'the xDS client is closed'));
    const known = this.types.get(type.typeUrl);
    if (known && known !== type) throw new Error(`two resource types share the type URL ${type.typeUrl}`);
    this.types.set(type.typeUrl, type as XdsResourceType<unknown>);
    const parsed = parseResourceName(name, type.typeUrl, this.federation);
    if (!parsed.ok) return this.failWatch(watcher, status(Code.INVALID_ARGUMENT, parsed.error));
    const authority = this.authorityOf(parsed.authority);
    if (!authority) {
      return this.failWatch(
        watcher,
        status(
          Code.UNAVAILABLE,
          `xDS resource "${name}": authority "${parsed.authority}" is not in the bootstrap's "authorities" (gRFC A47)`,
        ),
      );
    }
    return authority.cache.watch(type, parsed.canonical, watcher);
  }

  /**
   * The server the cached resource came from (A47 "XdsClient CDS Watcher": where a cluster's LRS `self`
   * reports go), or undefined when it is not cached or its name is not one the client can watch.
   */
  serverOf(type: XdsResourceType<unknown>, name: string): XdsServerConfig | undefined {
    const parsed = parseResourceName(name, type.typeUrl, this.federation);
    if (!parsed.ok) return undefined;
    const authority = this.authorities.get(authorityKey(parsed.authority));
    return authority?.cache.sourceOf(type.typeUrl, parsed.canonical) as XdsServerConfig | undefined;
  }

  /** The cache as CSDS would show it (A40, A88 state names), with the streams' and authorities' states. */
  dump(): XdsClientDump {
    const first = this.options.bootstrap.xdsServers[0]!;
    const servers = [...this.channels.values()].map((c) => serverDump(c));
    const firstChannel = this.channelOf(first);
    const main: XdsServerDump = firstChannel
      ? serverDump(firstChannel)
      : { serverUri: first.serverUri, stream: this.closed ? 'closed' : 'idle', types: [] };
    return {
      serverUri: main.serverUri,
      now: this.clock.now(),
      node: this.options.bootstrap.node,
      stream: main.stream,
      ...(main.connectivityError && { connectivityError: main.connectivityError }),
      types: main.types,
      resources: [...this.authorities.values()].flatMap((a) =>
        a.cache.dump().map((r) => (a.name === undefined ? r : { ...r, authority: a.name })),
      ),
      servers,
      authorities: [...this.authorities.values()].map((a) => ({
        ...(a.name !== undefined && { name: a.name }),
        servers: a.servers.map((s) => s.serverUri),
        active: a.activeServer.serverUri,
      })),
    };
  }

  /**
   * A78: records the client's metrics through `recorder` from now on. The first recorder stays (A79: a client
   * shared by several channels uses the first channel's stats plugins); later ones are ignored.
   */
  /** The recorder the client's metrics go through (the first channel's), or undefined before one is given. */
  get metricsRecorder(): MetricsRecorder | undefined {
    return this.metrics;
  }

  useMetricsRecorder(recorder: MetricsRecorder): void {
    if (this.metrics !== undefined || this.closed) return;
    this.metrics = recorder;
    this.removeGauges = recorder.registerGaugeCallback(
      [XDS_CLIENT_CONNECTED, XDS_CLIENT_RESOURCES],
      (reporter) => this.reportGauges(reporter),
    );
  }

  /** A78's gauges: each server's stream health (A57: 0 from a failure before any response to the next response), and the caches. */
  private reportGauges(reporter: GaugeReporter): void {
    for (const channel of this.channels.values()) {
      const connected = channel.stream.connectivityError === undefined ? 1 : 0;
      reporter.report(XDS_CLIENT_CONNECTED, connected, { [XDS_SERVER_LABEL]: channel.server.serverUri });
    }
    // A label set once reported and now empty reports 0: an exporter keeps a gauge's last value otherwise.
    const counts = this.resourceCounts;
    for (const counted of counts.values()) counted.count = 0;
    for (const authority of this.authorities.values()) {
      const authorityLabel = authority.name ?? OLD_STYLE;
      for (const entry of authority.cache.allEntries()) {
        const state = cacheStateLabel(entry);
        const type = resourceTypeLabel(entry.type.typeUrl);
        const key = `${authorityLabel}\n${state}\n${type}`;
        const counted = counts.get(key);
        if (counted !== undefined) counted.count++;
        else
          counts.set(key, {
            labels: {
              [XDS_AUTHORITY_LABEL]: authorityLabel,
              [XDS_CACHE_STATE_LABEL]: state,
              [XDS_RESOURCE_TYPE_LABEL]: type,
            },
            count: 1,
          });
      }
    }
    for (const { labels, count } of counts.values()) reporter.report(XDS_CLIENT_RESOURCES, count, labels);
  }

  /** A78: the resources of one response from `server`, valid and invalid. */
  private recordUpdates(server: XdsServerConfig, typeUrl: string, valid: number, invalid: number): void {
    const metrics = this.metrics;
    if (metrics === undefined) return;
    const labels = {
      [XDS_SERVER_LABEL]: server.serverUri,
      [XDS_RESOURCE_TYPE_LABEL]: resourceTypeLabel(typeUrl),
    };
    if (valid > 0) metrics.addCounter(XDS_CLIENT_RESOURCE_UPDATES_VALID, valid, labels);
    if (invalid > 0) metrics.addCounter(XDS_CLIENT_RESOURCE_UPDATES_INVALID, invalid, labels);
  }

  /** Ends the streams and every timer; watchers hear nothing more. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.removeGauges?.();
    this.removeGauges = undefined;
    this.flushTimer?.();
    for (const authority of this.authorities.values()) authority.cache.close();
    for (const channel of this.channels.values()) channel.stream.close();
  }

  private failWatch<T>(watcher: XdsResourceWatcher<T>, error: Status): CancelWatch {
    let active = true;
    this.clock.setTimer(0, () => {
      if (!active) return;
      try {
        watcher.onResourceError(error);
      } catch (e) {
        this.onWatcherError(e);
      }
    });
    return () => {
      active = false;
    };
  }

  /** The authority of a parsed name, made on first use; undefined when the bootstrap lacks it (A47). */
  private authorityOf(name: string | undefined): XdsAuthority | undefined {
    const key = authorityKey(name);
    let authority = this.authorities.get(key);
    if (authority) return authority;
    const config = name === undefined ? undefined : this.options.bootstrap.authorities.get(name);
    if (name !== undefined && !config) return undefined;
    const servers = config ? config.xdsServers : this.options.bootstrap.xdsServers;
    authority = new XdsAuthority({
      name,
      // A71 "Temporary environment variable protection": without fallback, only the first server.
      servers: this.fallback ? servers : servers.slice(0, 1),
      fallbackOnReachabilityOnly: config?.fallbackOnReachabilityOnly ?? false,
      clock: this.clock,
      trace: this.trace,
      nodeId: this.options.bootstrap.node.id,
      decodeContext: this.options.decodeContext,
      dataErrorHandling: this.dataErrorHandling,
      onWatcherError: this.onWatcherError,
      channels: {
        use: (a, server) => this.use(a, server),
        release: (a, server) => this.release(a, server),
        connectivityError: (server) => this.channelOf(server)?.stream.connectivityError,
        flushDue: () => this.scheduleFlush(),
      },
    });
    this.authorities.set(key, authority);
    authority.useServers();
    return authority;
  }

  private channelOf(server: XdsServerConfig): ServerChannel | undefined {
    return this.channels.get(xdsServerKey(server));
  }

  /** The authority subscribes on the server: its stream is made when the first authority uses it. */
  private use(authority: XdsAuthority, server: XdsServerConfig): ServerAdsStream {
    const key = xdsServerKey(server);
    let channel = this.channels.get(key);
    if (!channel) {
      const stream: ServerAdsStream = new ServerAdsStream({
        server,
        transport: this.options.transport,
        node: nodeProto(this.options.bootstrap.node),
        clock: this.clock,
        trace: this.trace,
        ...(this.options.backoff && { backoff: this.options.backoff }),
        events: {
          onRequested: (typeUrl, names) => this.onRequested(key, typeUrl, names),
          onResources: (typeUrl, version, resources) => this.onResources(key, typeUrl, version, resources),
          onEnded: (connectivityError) => this.onEnded(key, connectivityError),
          beforeReconnect: () => this.prune(),
          onServerFailure: () =>
            this.metrics?.addCounter(XDS_CLIENT_SERVER_FAILURE, 1, { [XDS_SERVER_LABEL]: server.serverUri }),
        },
      });
      channel = { server, stream, users: new Set() };
      this.channels.set(key, channel);
    }
    channel.users.add(authority);
    return channel.stream;
  }

  /** The authority no longer uses the server; a server no authority uses loses its stream. */
  private release(authority: XdsAuthority, server: XdsServerConfig): void {
    const key = xdsServerKey(server);
    const channel = this.channels.get(key);
    if (!channel) return;
    channel.users.delete(authority);
    if (channel.users.size > 0) return;
    this.trace(() => `xds client: closing the ADS stream to ${server.serverUri} (no authority uses it)`);
    channel.stream.close();
    this.channels.delete(key);
  }

  private onRequested(key: string, typeUrl: string, names: readonly string[]): void {
    const channel = this.channels.get(key);
    if (!channel) return;
    for (const authority of channel.users) authority.requested(channel.server, typeUrl, names);
  }

  /** One response: decoded once, each resource to the cache of its name's authority. Returns the NACK detail. */
  private onResources(
    key: string,
    typeUrl: string,
    version: string,
    resources: readonly Any[],
  ): string | undefined {
    const channel = this.channels.get(key);
    const type = this.types.get(typeUrl);
    if (!channel || !type) return `resource type ${typeUrl} was not subscribed to`;
    const decoded = decodeResources(type, resources, this.options.decodeContext);
    const invalid: InvalidResource[] = [];
    const byAuthority = new Map<string, DecodedResponse<unknown>>();
    const slot = (authority: string | undefined) => {
      const k = authorityKey(authority);
      let s = byAuthority.get(k);
      if (!s) {
        s = { valid: [], invalid: [] };
        byAuthority.set(k, s);
      }
      return s;
    };
    for (const resource of decoded.valid) {
      // A47: the cache keys xdstp: names normalised, whatever spelling the server used.
      const parsed = parseResourceName(resource.name, typeUrl, this.federation);
      if (!parsed.ok) {
        // Named as sent: it cannot be an entry of any cache, so deletions are still known.
        invalid.push({ name: resource.name, index: -1, error: parsed.error });
        continue;
      }
      slot(parsed.authority).valid.push({ ...resource, name: parsed.canonical });
    }
    for (const problem of decoded.invalid) {
      invalid.push(problem);
      if (problem.name === undefined) continue;
      const parsed = parseResourceName(problem.name, typeUrl, this.federation);
      if (parsed.ok) slot(parsed.authority).invalid.push({ ...problem, name: parsed.canonical });
    }
    this.recordUpdates(channel.server, typeUrl, resources.length - invalid.length, invalid.length);
    const deletionsKnown = invalid.every((p) => p.name !== undefined);
    for (const authority of [...channel.users]) {
      const mine = byAuthority.get(authorityKey(authority.name)) ?? { valid: [], invalid: [] };
      authority.response(channel.server, typeUrl, version, mine, deletionsKnown);
    }
    return nackDetail(typeUrl, invalid);
  }

  private onEnded(key: string, connectivityError: Status | undefined): void {
    const channel = this.channels.get(key);
    if (!channel) return;
    for (const authority of [...channel.users]) authority.streamEnded(channel.server, connectivityError);
  }

  private prune(): void {
    for (const authority of this.authorities.values()) authority.cache.prune();
  }

  /** Coalesces the subscription changes of one turn into one request per type. */
  private scheduleFlush(): void {
    if (this.flushTimer || this.closed) return;
    this.flushTimer = this.clock.setTimer(0, () => {
      this.flushTimer = undefined;
      this.prune();
      // A71: a new watch of a resource not cached, while the server in use is unreachable, falls back.
      for (const authority of this.authorities.values()) authority.fallBackIfNeeded();
      for (const channel of [...this.channels.values()]) channel.stream.sync();
    });
  }
}

const OLD_STYLE = '#old';

/** A47: old-style names have their own entry, apart from every xdstp: authority (including ''). */
function authorityKey(name: string | undefined): string {
  return name === undefined ? OLD_STYLE : `xdstp:${name}`;
}

function serverDump(channel: ServerChannel): XdsServerDump {
  const connectivityError = channel.stream.connectivityError;
  return {
    serverUri: channel.server.serverUri,
    stream: channel.stream.state,
    ...(connectivityError && { connectivityError }),
    types: channel.stream.versions(),
  };
}
