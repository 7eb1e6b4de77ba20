import { type ChannelOptions, experimental } from '@grpc/grpc-js';
import { CONNECTING, type ConnectivityState, type MetricsRecorder, type PolicyNode } from '../core/index.js';
import { ChannelMetricsRecorder, type InstrumentValues } from '../metrics/index.js';
import type { FlightRecorder } from '../recorder/index.js';
import type { XdsClientDump } from '../xds/client/dump.js';
import { type XdsConfig, xdsConfigOf } from '../xds/xds-config.js';
import { CHANNEL_METRICS_RECORDER_OPTION, channelMetricsRecorder } from './channel-metrics.js';
import { ChannelRecording } from './channel-recording.js';
import {
  CHANNEL_KEY_OPTION,
  CHANNEL_TARGET_OPTION,
  CHANNEL_XDS_DUMP_OPTION,
  CHANNEL_XDS_METRICS_OPTION,
  liveChannels,
  type RegisteredChannel,
} from './channel-registry.js';
import { recorderFor } from './recorded-channels.js';
import { channelInstrumentValues } from './xds-client-metric-values.js';

/** A root policy of a channel, as the channel's entry sees it. */
export interface ChannelRoot {
  /** The policy's name as grpc-js knows it (`lbtree_round_robin`, `xds_cluster_manager_experimental`, …). */
  readonly policyName: string;
  /** The root's tree now (undefined until its first update). */
  describe(): PolicyNode | undefined;
}

/**
 * One grpc-js channel in the registry, for the channel's whole life. grpc-js makes a new root policy when a
 * service config names another policy, and runs it beside the old one until the new one leaves CONNECTING
 * (its ChildLoadBalancerHandler then destroys the old root); it makes a new root again when the channel leaves
 * IDLE. Every root of the channel attaches to this entry: one id, one flight recording (a switch is an event in
 * it), one set of live-view metric values.
 */
export class ChannelEntry implements RegisteredChannel {
  readonly id = liveChannels.nextId();
  readonly createdAt = Date.now();
  target: string | undefined = undefined;
  /** The roots running now, oldest first: the first serves the channel, a second is the one grpc-js switches to. */
  private readonly roots: ChannelRoot[] = [];
  private listed = false;
  /** The root grpc-js is switching to, from its first picker that is not CONNECTING until the old root goes. */
  private switchingTo: ChannelRoot | undefined = undefined;
  private xdsDumpSource: (() => XdsClientDump) | undefined = undefined;
  private xdsMetricsSource: (() => MetricsRecorder | undefined) | undefined = undefined;
  private latestXdsConfig: XdsConfig | undefined = undefined;
  private metricsRecorder: MetricsRecorder | undefined = undefined;
  /** The flight recorder the channel writes to, whether the channel made it (`register({ recorder })`), and the writer. */
  private recording: { recorder: FlightRecorder; owned: boolean; writer: ChannelRecording } | null = null;

  /**
   * `root` runs in the channel from now on. A second root is the one grpc-js switches the channel to: the
   * recording says so. The first root lists the channel (again, after the channel was idle).
   */
  attach(root: ChannelRoot): void {
    if (this.roots.includes(root)) return;
    this.roots.push(root);
    if (this.roots.length > 1) {
      this.recording?.recorder.rootSwitch(this.roots[0]!.policyName, root.policyName, 'started');
    }
    if (!this.listed) {
      this.listed = true;
      liveChannels.add(this);
    }
  }

  /**
   * `root` was destroyed. When grpc-js destroyed the serving root to switch to the next one, the switch is
   * done. When no root is left, the channel is closed or idle and leaves the list (a root it makes later lists
   * it again, under the same id).
   */
  detach(root: ChannelRoot): void {
    const at = this.roots.indexOf(root);
    if (at < 0) return;
    this.roots.splice(at, 1);
    const next = this.roots[0];
    if (at === 0 && next !== undefined && next === this.switchingTo) {
      this.recording?.recorder.rootSwitch(root.policyName, next.policyName, 'done');
    }
    if (at === 0 || root === this.switchingTo) this.switchingTo = undefined;
    if (this.roots.length === 0 && this.listed) {
      this.listed = false;
      liveChannels.remove(this);
    }
  }

  /**
   * Whether grpc-js uses a picker `root` publishes in `state`: the serving root's always; the root it switches
   * to, from its first picker that is not CONNECTING (which makes grpc-js switch).
   */
  publishes(root: ChannelRoot, state: ConnectivityState): boolean {
    if (this.roots[0] === root) return true;
    if (state === CONNECTING) return false;
    // grpc-js switches to this root now: it destroys the serving one before it takes this picker. (A channel
    // closed or gone idle mid-switch destroys both roots, and no switch is done.)
    this.switchingTo = root;
    return true;
  }

  /** Takes what an update's options tell of the channel (lbtree's resolvers say its target and xDS client). */
  noteOptions(options: ChannelOptions): void {
    const target = options[CHANNEL_TARGET_OPTION];
    if (typeof target === 'string') this.target = target;
    const dump = options[CHANNEL_XDS_DUMP_OPTION];
    if (typeof dump === 'function') this.xdsDumpSource = dump as () => XdsClientDump;
    const xdsMetrics = options[CHANNEL_XDS_METRICS_OPTION];
    if (typeof xdsMetrics === 'function') {
      this.xdsMetricsSource = xdsMetrics as () => MetricsRecorder | undefined;
    }
    this.latestXdsConfig = xdsConfigOf(options as Record<string | symbol, unknown>);
  }

  /**
   * The recorder a new root records its metrics through: the resolver's when it made one (an `xds:` channel's,
   * shared with its xDS client), else the channel's own, made once, so values carry on across a root switch.
   */
  metricsRecorderFor(options: ChannelOptions): MetricsRecorder | undefined {
    const made: unknown = options[CHANNEL_METRICS_RECORDER_OPTION];
    if (made instanceof ChannelMetricsRecorder) this.metricsRecorder = made;
    else this.metricsRecorder ??= channelMetricsRecorder(options);
    return this.metricsRecorder;
  }

  /** Starts, keeps or stops the channel's flight recording as an update's options say; returns its writer. */
  record(options: ChannelOptions): ChannelRecording | null {
    const next = recorderFor(options, this.recording?.recorder ?? null);
    if (next?.recorder !== this.recording?.recorder) {
      this.recording = next ? { ...next, writer: new ChannelRecording(next.recorder) } : null;
    }
    return this.recording?.writer ?? null;
  }

  describe(): PolicyNode | undefined {
    return this.roots[0]?.describe();
  }

  /** The tree of the root grpc-js is switching the channel to, while it is not serving yet. */
  describePending(): PolicyNode | undefined {
    return this.roots.at(-1) === this.roots[0] ? undefined : this.roots.at(-1)?.describe();
  }

  get recorder(): FlightRecorder | undefined {
    return this.recording?.recorder;
  }

  metrics(): readonly InstrumentValues[] | undefined {
    return channelInstrumentValues(this.metricsRecorder, this.xdsMetricsSource?.());
  }

  exportRecording(): string | undefined {
    return this.recording?.recorder.export();
  }

  xdsDump(): XdsClientDump | undefined {
    return this.xdsDumpSource?.();
  }

  xdsConfig(): XdsConfig | undefined {
    return this.latestXdsConfig;
  }
}

/** The channel's entry per key: a channel key from lbtree's resolver, or the grpc-js handler running its roots. */
const entries = new WeakMap<object, ChannelEntry>();

/**
 * The grpc-js ChildLoadBalancerHandler running the roots this helper was given to, or undefined. grpc-js gives
 * each root its own helper (and tells an LB policy neither its channel nor its channelz ref), but every helper
 * it gives the roots of one channel points to the one handler that runs them. `parent` is a private field of
 * grpc-js's: the fallback key, for channels whose resolver is not lbtree's (ipv4:, unix:, a user's scheme).
 */
function handlerOf(helper: experimental.ChannelControlHelper): object | undefined {
  const handler: unknown = (helper as { parent?: unknown }).parent;
  return handler instanceof experimental.ChildLoadBalancerHandler ? handler : undefined;
}

/**
 * The entry of the channel a root runs in, from the root's grpc-js helper and its first update's options.
 * The key lbtree's resolvers (dns:, endpoints:, xds:) put in their results is the channel's, for its whole
 * life; the handler (handlerOf) keys channels whose resolver adds none. Both are tied to the one entry once
 * seen together. With neither, the root gets an entry of its own.
 */
export function channelEntryFor(
  helper: experimental.ChannelControlHelper,
  options: ChannelOptions,
): ChannelEntry {
  const keys: object[] = [];
  const channelKey: unknown = options[CHANNEL_KEY_OPTION];
  if (typeof channelKey === 'object' && channelKey !== null) keys.push(channelKey);
  const handler = handlerOf(helper);
  if (handler !== undefined) keys.push(handler);
  let entry: ChannelEntry | undefined;
  for (const key of keys) entry ??= entries.get(key);
  entry ??= new ChannelEntry();
  for (const key of keys) entries.set(key, entry);
  return entry;
}
