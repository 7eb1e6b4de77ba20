import type { PolicyNode } from '../core/index.js';
import type { InstrumentValues } from '../metrics/index.js';
import type { FlightRecorder } from '../recorder/index.js';
import type { XdsClientDump } from '../xds/client/dump.js';
import type { XdsConfig } from '../xds/xds-config.js';

/**
 * Channel options lbtree's resolvers (endpoints:, xds:, and its front on grpc-js's dns:) add to their results:
 * grpc-js does not tell an LB policy its channel's target, which the registry lists channels by and A66's
 * `grpc.target` metric label needs (the canonical form). `grpc.internal.` keys: subchannels are never created
 * with them (helper-adapter.ts).
 */
export const CHANNEL_TARGET_OPTION = 'grpc.internal.lbtree.channel_target';
/**
 * An object made once per resolver, so once per grpc-js channel (grpc-js makes a channel's resolver once and
 * keeps it across idleness and root-policy switches): every root of the channel sees the same one, which keys
 * the channel's registry entry.
 */
export const CHANNEL_KEY_OPTION = 'grpc.internal.lbtree.channel_key';
/** A new channel key (see CHANNEL_KEY_OPTION). */
export function newChannelKey(): object {
  return Object.freeze({});
}
/** A function returning the CSDS view of the channel's xDS client (`xds:` channels). */
export const CHANNEL_XDS_DUMP_OPTION = 'grpc.internal.lbtree.xds_dump';
/** A function returning the recorder the channel's xDS client records its metrics through (`xds:` channels). */
export const CHANNEL_XDS_METRICS_OPTION = 'grpc.internal.lbtree.xds_client_metrics';

/** One channel lbtree's root policy runs in, as the registry lists it. */
export interface RegisteredChannel {
  /** Unique in the process, URL-safe ("1", "2", …). */
  readonly id: string;
  /** The channel's target, when its resolver is lbtree's (`xds:`, `endpoints:`); grpc-js's do not say. */
  readonly target: string | undefined;
  /** Wall-clock ms of the root policy's creation. */
  readonly createdAt: number;
  /** The root policy's tree now (undefined until its first update). */
  describe(): PolicyNode | undefined;
  /**
   * While grpc-js switches the channel to another root policy (a service config naming another policy), the
   * new root's tree, which does not serve yet; otherwise undefined.
   */
  describePending?(): PolicyNode | undefined;
  /** The CSDS view of the channel's xDS client, or undefined for a channel without xDS. */
  xdsDump(): XdsClientDump | undefined;
  /** The XdsConfig (A74) of the channel's latest resolution, or undefined for a channel without xDS. */
  xdsConfig(): XdsConfig | undefined;
  /**
   * The channel's metrics as lbtree records them (every enabled instrument with its values), or undefined
   * when no metrics options apply to the channel.
   */
  metrics?(): readonly InstrumentValues[] | undefined;
  /** The channel's flight recording as a file (docs/recording-format.md), or undefined when it does not record. */
  exportRecording?(): string | undefined;
  /** The flight recorder the channel writes to now, or undefined when it does not record. */
  readonly recorder?: FlightRecorder | undefined;
}

export interface ChannelRegistryListener {
  channelAdded?(channel: RegisteredChannel): void;
  channelRemoved?(channel: RegisteredChannel): void;
}

/**
 * The channels lbtree runs in, by id: the one list the live view shows and `recordedChannels()` reads (a
 * channel's entry carries its target, its tree and its recorder). Held weakly: a channel dropped without `close()` (whose root policy is
 * never destroyed) leaves the list when it is collected; a destroyed root leaves it at once.
 */
export class ChannelRegistry {
  private readonly entries = new Map<string, WeakRef<RegisteredChannel>>();
  private readonly listeners = new Set<ChannelRegistryListener>();
  private readonly collected = new FinalizationRegistry<string>((id) => this.forget(id));
  private lastId = 0;

  /** A new id for a channel about to be added. */
  nextId(): string {
    return String(++this.lastId);
  }

  add(channel: RegisteredChannel): void {
    this.entries.set(channel.id, new WeakRef(channel));
    this.collected.register(channel, channel.id, channel);
    for (const l of this.listeners) notify(() => l.channelAdded?.(channel));
  }

  remove(channel: RegisteredChannel): void {
    if (this.entries.get(channel.id)?.deref() !== channel) return;
    this.collected.unregister(channel);
    this.entries.delete(channel.id);
    for (const l of this.listeners) notify(() => l.channelRemoved?.(channel));
  }

  get(id: string): RegisteredChannel | undefined {
    return this.entries.get(id)?.deref();
  }

  /** Every live channel, oldest first. */
  list(): RegisteredChannel[] {
    const live: RegisteredChannel[] = [];
    for (const ref of this.entries.values()) {
      const channel = ref.deref();
      if (channel !== undefined) live.push(channel);
    }
    return live;
  }

  /** Hears of channels added and removed from now on; returns the unsubscribe. */
  subscribe(listener: ChannelRegistryListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private forget(id: string): void {
    this.entries.delete(id);
  }
}

/**
 * Runs a listener. Channels are added and removed from inside grpc-js's calls into the root policy: a listener
 * that throws is reported as a process warning and never reaches the channel.
 */
function notify(call: () => void): void {
  try {
    call();
  } catch (e) {
    process.emitWarning(`a channel registry listener threw: ${(e as Error)?.stack ?? e}`, 'LbtreeWarning');
  }
}

/** The process's channels: every grpc-js channel whose root policy is lbtree's. */
export const liveChannels = new ChannelRegistry();
