// One authority of the xDS client (gRFC A47 "Resource Cache", A71 "Change XdsClient to support fallback
// within each xDS authority"): its resource cache, its servers in priority order, and which of them it uses.
// Its names are subscribed on every server from the first to the one in use: a higher-priority server that is
// down keeps being retried, and the first resource it delivers brings the authority back to it (the lower
// ones are then dropped). It falls back to the next server only when the one in use is unreachable and some
// watched resource is not cached (or always, with A95's fallback_on_reachability_only).
import type { Clock } from '../../core/clock.js';
import type { Trace } from '../../core/load-balancer.js';
import type { Status } from '../../core/status.js';
import type { ServerAdsStream } from './ads-stream.js';
import { type XdsServerConfig, xdsServerKey } from './bootstrap.js';
import type { DecodedResponse } from './decode-response.js';
import { ResourceCache } from './resource-cache.js';
import type { XdsDecodeContext } from './resource-type.js';

/** How an authority reaches the client's shared server streams. */
export interface AuthorityChannels {
  /** Starts using the server (its stream is made if no authority has it yet). */
  use(authority: XdsAuthority, server: XdsServerConfig): ServerAdsStream;
  /** Stops using it (the stream closes when no authority uses it). */
  release(authority: XdsAuthority, server: XdsServerConfig): void;
  /** A57: why the server's last stream failed before any response, while it does. */
  connectivityError(server: XdsServerConfig): Status | undefined;
  /** Subscriptions changed: send them at the end of this turn. */
  flushDue(): void;
}

export interface XdsAuthorityOptions {
  /** undefined: old-style names. */
  readonly name: string | undefined;
  /** In priority order (A71); duplicates (same xdsServerKey) count once. */
  readonly servers: readonly XdsServerConfig[];
  readonly fallbackOnReachabilityOnly: boolean;
  readonly clock: Clock;
  readonly trace: Trace;
  readonly nodeId: string;
  readonly decodeContext: XdsDecodeContext;
  readonly dataErrorHandling: boolean;
  readonly onWatcherError: (error: unknown) => void;
  readonly channels: AuthorityChannels;
}

export class XdsAuthority {
  readonly name: string | undefined;
  readonly servers: readonly XdsServerConfig[];
  readonly cache: ResourceCache;
  private readonly keys: readonly string[];
  private readonly channels: AuthorityChannels;
  private readonly trace: Trace;
  /** The streams of servers[0..active], which all carry this authority's subscriptions. */
  private readonly streams: ServerAdsStream[] = [];

  constructor(private readonly options: XdsAuthorityOptions) {
    const seen = new Set<string>();
    this.servers = options.servers.filter((s) => {
      const key = xdsServerKey(s);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    this.keys = this.servers.map(xdsServerKey);
    this.name = options.name;
    this.channels = options.channels;
    this.trace = options.trace;
    this.cache = new ResourceCache({
      clock: options.clock,
      trace: options.trace,
      nodeId: options.nodeId,
      decodeContext: options.decodeContext,
      dataErrorHandling: options.dataErrorHandling,
      onWatcherError: options.onWatcherError,
      subscriptions: {
        add: (typeUrl, name) => {
          for (const stream of this.streams) stream.subscribe(typeUrl, name);
        },
        remove: (typeUrl, name) => {
          for (const stream of this.streams) stream.unsubscribe(typeUrl, name);
        },
        flushDue: () => this.channels.flushDue(),
      },
      connectivityError: () => this.channels.connectivityError(this.activeServer),
    });
  }

  /** The server whose resources the authority uses. */
  get activeServer(): XdsServerConfig {
    return this.servers[this.streams.length - 1] ?? this.servers[0]!;
  }

  private get active(): number {
    return this.streams.length - 1;
  }

  /** Starts on the first server. */
  useServers(): void {
    if (this.streams.length === 0) this.addServer();
  }

  /** The names went out on the server's connected stream: their timers start if it is the one in use (A57). */
  requested(server: XdsServerConfig, typeUrl: string, names: readonly string[]): void {
    if (xdsServerKey(server) === this.keys[this.active]) this.cache.requested(server, typeUrl, names);
  }

  /**
   * The resources of one response of the server that are this authority's. From a higher-priority server
   * than the one in use, a watched resource brings the authority back to it (A71); from a lower one (a
   * response crossing a switch), nothing.
   */
  response(
    server: XdsServerConfig,
    typeUrl: string,
    version: string,
    decoded: DecodedResponse<unknown>,
    deletionsKnown: boolean,
  ): void {
    const index = this.keys.indexOf(xdsServerKey(server));
    if (index < 0 || index > this.active) return;
    if (index < this.active) {
      const watched = new Set(this.cache.subscriptions().map((s) => `${s.typeUrl} ${s.name}`));
      if (!decoded.valid.some((r) => watched.has(`${typeUrl} ${r.name}`))) return;
      this.switchBack(index);
    }
    this.cache.applyDecoded(server, typeUrl, version, decoded, deletionsKnown);
  }

  /**
   * The server's stream ended. For the server in use: A71 falls back when it failed before any response and
   * the criteria hold; the watchers hear of a connectivity error only when no server is left (A57).
   */
  streamEnded(server: XdsServerConfig, connectivityError: Status | undefined): void {
    if (xdsServerKey(server) !== this.keys[this.active]) return;
    if (connectivityError && this.fallBackIfNeeded()) {
      this.cache.streamEnded(undefined);
      const stillFailing = this.channels.connectivityError(this.activeServer);
      if (stillFailing) this.cache.streamEnded(stillFailing);
      return;
    }
    this.cache.streamEnded(connectivityError);
  }

  /**
   * A71: while the server in use is unreachable and (A95's knob, or) some watched resource is not cached, the
   * next server is used. Returns whether the authority moved.
   */
  fallBackIfNeeded(): boolean {
    let moved = false;
    while (this.active < this.servers.length - 1) {
      const failing = this.channels.connectivityError(this.activeServer);
      if (!failing) break;
      if (!this.options.fallbackOnReachabilityOnly && !this.cache.hasUncachedWatch()) break;
      const from = this.activeServer.serverUri;
      this.addServer();
      this.trace(
        () =>
          `xds client: authority ${this.label} falls back from ${from} to ${this.activeServer.serverUri} (${failing.details})`,
      );
      moved = true;
    }
    if (moved) this.channels.flushDue();
    return moved;
  }

  private get label(): string {
    return this.name === undefined ? '(old-style names)' : `"${this.name}"`;
  }

  private addServer(): void {
    const stream = this.channels.use(this, this.servers[this.streams.length]!);
    for (const { typeUrl, name } of this.cache.subscriptions()) stream.subscribe(typeUrl, name);
    this.streams.push(stream);
  }

  /** A71: back on servers[index]; the lower-priority servers are dropped. */
  private switchBack(index: number): void {
    const from = this.activeServer.serverUri;
    const names = this.cache.subscriptions();
    while (this.active > index) {
      const stream = this.streams.pop()!;
      for (const { typeUrl, name } of names) stream.unsubscribe(typeUrl, name);
      this.channels.release(this, this.servers[this.streams.length]!);
    }
    this.trace(
      () => `xds client: authority ${this.label} back on ${this.activeServer.serverUri} from ${from}`,
    );
    this.channels.flushDue();
  }
}
