import type { ChannelOptions, experimental } from '@grpc/grpc-js';
import {
  type Address,
  Attributes,
  addressKey,
  type Clock,
  CONNECTING,
  ConnectionPacer,
  type ConnectivityState,
  type Helper,
  type MetricsRecorder,
  OK_STATUS,
  type Picker,
  realClock,
  type Status,
  type Subchannel,
  SubchannelMetrics,
  subchannelMetricLabels,
  type Trace,
  UpdateTurnQueue,
} from '../core/index.js';
import { type ClusterTransportSecurity, XDS_TRANSPORT_SECURITY } from '../xds/transport-security.js';
import { METRICS_CHANNEL_OPTION } from './channel-metrics.js';
import type { ChannelRecording } from './channel-recording.js';
import { CHANNEL_TARGET_OPTION } from './channel-registry.js';
import { connectionSecurityLevel } from './connection-security.js';
import { fromGrpcState, toGrpcState } from './connectivity.js';
import { GrpcPickerAdapter } from './picker-adapter.js';
import { FLIGHT_RECORDER_OPTION } from './recorded-channels.js';
import { GrpcSubchannelHandle, type HandleOwner } from './subchannel-adapter.js';
import { lbtreeTracer } from './tracers.js';
import { XDS_TRANSPORT_SECURITY_OPTION } from './xds-security-options.js';

/** grpc-js's channel-only arguments (the config selector, …): its InternalChannel drops only some of them. */
const GRPC_INTERNAL_PREFIX = 'grpc.internal.';

/**
 * The channel options a subchannel is created with: the update's, without grpc-js's internal ones and symbol
 * keys (lbtree's XdsConfig). The config selector is new with every resolution; handed to subchannels, it made
 * grpc-js's pool create a second subchannel (and connection) for an address it already had, and
 * GRPC_TRACE=subchannel fail every subchannel creation (its trace prints the options as JSON).
 */
export function subchannelOptions(options: ChannelOptions): ChannelOptions {
  const kept: ChannelOptions = {};
  for (const [key, value] of Object.entries(options)) {
    // The recorder's and the metrics' options hold objects of their own (the user's MeterProvider): not a
    // subchannel's concern, nor printable as JSON.
    if (
      key.startsWith(GRPC_INTERNAL_PREFIX) ||
      key === FLIGHT_RECORDER_OPTION ||
      key === METRICS_CHANNEL_OPTION ||
      key === CHANNEL_TARGET_OPTION
    )
      continue;
    kept[key] = value;
  }
  return kept;
}

/**
 * At most this many grpc-js subchannels are created in one event-loop turn; the handles of the others are
 * made at once and their grpc-js subchannels in the next turns (setImmediate), in order. Creating one costs
 * grpc-js a scan of all of the channel's subchannels (its pool) and starting it connecting a socket: 10,000 of
 * them in one turn stalled every call of the process for over a second (issue 25 §5), and the refused
 * connections of a whole batch then came back in one burst. An update of fewer is not deferred at all.
 */
export const SUBCHANNELS_PER_TURN = 100;

/**
 * One grpc-js subchannel the helper holds for an address, with the options it was made with, and the owner of
 * every lbtree handle on it: the last handle released gives it back (channelz included). `grpc` is null while
 * its creation waits for a later turn; the handles made meanwhile wait in `waiting`.
 */
class HeldSubchannel implements HandleOwner {
  handles = 0;
  /** Stops the flight recorder's watch on this subchannel (set while the channel records). */
  stopRecording: (() => void) | null = null;
  /** A94's metrics of the connection, while the helper records metrics. */
  private metrics: SubchannelMetrics | null = null;
  private metricsListener: experimental.ConnectivityStateListener | null = null;
  grpc: experimental.SubchannelInterface | null = null;
  waiting: GrpcSubchannelHandle[] | null = null;

  constructor(
    readonly key: string,
    readonly address: Address,
    /** The attributes of the endpoint it was first asked for (A94's metric labels). */
    private readonly attributes: Attributes,
    readonly options: ChannelOptions,
    private readonly helper: GrpcHelperAdapter,
  ) {}

  /** Creates the grpc-js subchannel (now), and attaches every handle waiting for it. */
  createNow(): void {
    if (this.grpc !== null) return;
    const grpc = this.helper.createGrpcSubchannel(this.address, this.options);
    this.grpc = grpc;
    const recording = this.helper.recording;
    if (recording !== null) this.stopRecording = recording.watch(addressKey(this.address), grpc);
    const metricsRecorder = this.helper.metricsRecorder;
    if (metricsRecorder !== undefined) this.recordMetrics(metricsRecorder, grpc);
    const waiting = this.waiting;
    this.waiting = null;
    if (waiting !== null) for (const handle of waiting) handle.attach(grpc);
  }

  /** A94: counts this subchannel's connections, labelled with the endpoint's backend service and locality. */
  private recordMetrics(recorder: MetricsRecorder, grpc: experimental.SubchannelInterface): void {
    const state = fromGrpcState(grpc.getConnectivityState());
    const metrics = new SubchannelMetrics(recorder, subchannelMetricLabels(this.attributes), state, () =>
      connectionSecurityLevel(grpc),
    );
    this.metrics = metrics;
    this.metricsListener = (_subchannel, _previous, next, _keepalive, errorMessage) => {
      const nextState = fromGrpcState(next);
      // grpc-js links a new connection to its subchannel (in channelz) just after it announces READY, so the
      // connection's security level is readable a microtask later; every change is queued, so they stay in order.
      queueMicrotask(() => metrics.onState(nextState, errorMessage));
    };
    grpc.addConnectivityStateListener(this.metricsListener);
  }

  handleReleased(): void {
    if (--this.handles === 0) this.helper.drop(this);
  }

  /** The last handle went: the subchannel is shut down for this channel. */
  stopMetrics(): void {
    if (this.metricsListener !== null) this.grpc!.removeConnectivityStateListener(this.metricsListener);
    this.metricsListener = null;
    this.metrics?.shutdown();
    this.metrics = null;
  }
}

/** Whether one of {@link inNextIteration}'s callbacks is running (the loop is in its check phase). */
let inCheckPhase = false;

/**
 * Runs `fn` in the check phase of the event loop's next iteration, so that timers and I/O run before it. An
 * immediate set from an I/O callback (an xDS response: the update's first turn) runs in the same iteration, right
 * after it: that would have made the update's first two steps one stall.
 */
function inNextIteration(fn: () => void): void {
  const run = () => {
    inCheckPhase = true;
    try {
      fn();
    } finally {
      inCheckPhase = false;
    }
  };
  if (inCheckPhase) setImmediate(run);
  else setImmediate(() => setImmediate(run));
}

function sameOptions(a: ChannelOptions, b: ChannelOptions): boolean {
  if (a === b) return true;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

/**
 * Our Helper on top of grpc-js's ChannelControlHelper: subchannels are created with the latest channel
 * options and registered with channelz; pickers are wrapped for grpc-js.
 *
 * grpc-js is asked for a subchannel once per address (and options) while lbtree holds one there: another
 * policy of the tree asking for the same address (a new child after an LB policy switch, a locality moved to
 * another priority, xds_override_host keeping a draining endpoint) gets a new handle on the same grpc-js
 * subchannel. grpc-js's subchannel pool keeps all of a channel's subchannels in one array and scans it on
 * every creation, so asking again for each of 10,000 held addresses would cost 10,000² / 2 comparisons.
 */
export class GrpcHelperAdapter implements Helper {
  /** The wall clock; while the channel records, the tree's timers are recorded as they fire (their lateness). */
  readonly clock: Clock = {
    now: realClock.now,
    setTimer: (delayMs, fn) =>
      this.recording === null ? realClock.setTimer(delayMs, fn) : this.recording.timer(delayMs, fn),
  };
  private options: ChannelOptions = {};
  private readonly held = new Map<string, HeldSubchannel>();
  /** grpc-js subchannels created in this event-loop turn (see SUBCHANNELS_PER_TURN). */
  private createdThisTurn = 0;
  private turnScheduled = false;
  /** Held subchannels whose creation waits for a later turn, in order, from `nextDeferred` on. */
  private deferred: HeldSubchannel[] = [];
  private nextDeferred = 0;
  private readonly securityOptions = new WeakMap<
    ClusterTransportSecurity,
    { base: ChannelOptions; options: ChannelOptions }
  >();
  private readonly securityIds = new WeakMap<ClusterTransportSecurity, number>();
  private lastSecurityId = 0;
  readonly trace: Trace;
  /** The channel's flight recording, set by the root policy while the channel records. */
  recording: ChannelRecording | null = null;
  /**
   * Whether grpc-js uses a picker published in `state` (set by the root policy: not a CONNECTING one of a
   * root grpc-js is switching the channel to). The flight recording records only those.
   */
  publishes: (state: ConnectivityState) => boolean = () => true;
  /** A79: set from the first update's options (global plugins, the channel's own, its target), before the policy exists. */
  metricsRecorder: MetricsRecorder | undefined;
  /** What the root policy last reported (the live view's root node when the policy cannot describe itself). */
  lastState: ConnectivityState = CONNECTING;
  lastStatus: Status = OK_STATUS;
  /**
   * Big updates spread over event-loop turns (issue 25 §5): their steps run in setImmediate callbacks, and the
   * channel keeps its picker until the last one has run.
   */
  readonly updateTurns = new UpdateTurnQueue({
    nextTurn: inNextIteration,
    publish: (state, status, picker) => this.publish(state, status, picker),
  });
  /** Connection requests beyond a turn's budget wait for the next turns (setImmediate), in order (issue 25 §5). */
  readonly connectionPacer = new ConnectionPacer({ nextTurn: (fn) => setImmediate(fn) });
  /** Whether the root policy's exitIdle() would wake anything (its last word; yes until it says). */
  wakeable = true;

  constructor(
    private readonly grpc: experimental.ChannelControlHelper,
    policyName: string,
  ) {
    this.trace = lbtreeTracer(policyName);
  }

  /** Channel options of the latest update as `subchannelOptions` keeps them, passed on to new subchannels. */
  get channelOptions(): ChannelOptions {
    return this.options;
  }

  /** Takes an update's options; equal ones keep the object in use, so held subchannels stay reusable. */
  set channelOptions(options: ChannelOptions) {
    if (!sameOptions(options, this.options)) this.options = options;
  }

  createSubchannel(address: Address, attributes: Attributes = Attributes.EMPTY): Subchannel {
    const security = attributes.get(XDS_TRANSPORT_SECURITY);
    const options = security === undefined ? this.options : this.optionsWithSecurity(security);
    const key =
      security === undefined ? addressKey(address) : `${addressKey(address)}#${this.securityId(security)}`;
    let held = this.held.get(key);
    if (held === undefined || held.options !== options) {
      // One made with older options stays with the handles that have it; new handles get this one.
      held = new HeldSubchannel(key, address, attributes, options, this);
      this.held.set(key, held);
      if (this.createdThisTurn < SUBCHANNELS_PER_TURN && this.nextDeferred === this.deferred.length) {
        held.createNow();
      } else {
        this.deferred.push(held);
        this.scheduleTurn();
      }
    }
    held.handles++;
    const handle = new GrpcSubchannelHandle(address, held.grpc, held);
    if (held.grpc === null) {
      held.waiting ??= [];
      held.waiting.push(handle);
    }
    return handle;
  }

  /** @internal Creates a grpc-js subchannel (counted against this turn's limit) and registers it with channelz. */
  createGrpcSubchannel(address: Address, options: ChannelOptions): experimental.SubchannelInterface {
    this.createdThisTurn++;
    this.scheduleTurn();
    const grpcSubchannel = this.grpc.createSubchannel(address, options);
    this.grpc.addChannelzChild(grpcSubchannel.getChannelzRef());
    return grpcSubchannel;
  }

  /** The next turn starts a new count, and creates the deferred subchannels it has room for. */
  private scheduleTurn(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(() => this.nextTurn());
  }

  private nextTurn(): void {
    this.turnScheduled = false;
    this.createdThisTurn = 0;
    const deferred = this.deferred;
    while (this.nextDeferred < deferred.length && this.createdThisTurn < SUBCHANNELS_PER_TURN) {
      const held = deferred[this.nextDeferred++]!;
      // Released meanwhile (or created on demand): nothing to create.
      if (held.handles > 0) held.createNow();
    }
    if (this.nextDeferred === deferred.length) {
      this.deferred = [];
      this.nextDeferred = 0;
    } else {
      this.scheduleTurn();
    }
  }

  /**
   * The options of a subchannel of a cluster with xDS transport security (A29): the channel's plus the cluster's
   * object, which XdsChannelCredentials reads. One options object per cluster and channel options, so that
   * grpc-js's pool and `held` reuse subchannels.
   */
  private optionsWithSecurity(security: ClusterTransportSecurity): ChannelOptions {
    const cached = this.securityOptions.get(security);
    if (cached !== undefined && cached.base === this.options) return cached.options;
    const options = { ...this.options, [XDS_TRANSPORT_SECURITY_OPTION]: security };
    this.securityOptions.set(security, { base: this.options, options });
    return options;
  }

  private securityId(security: ClusterTransportSecurity): number {
    let id = this.securityIds.get(security);
    if (id === undefined) {
      id = ++this.lastSecurityId;
      this.securityIds.set(security, id);
    }
    return id;
  }

  /** @internal The last handle on `held` was released. */
  drop(held: HeldSubchannel): void {
    if (this.held.get(held.key) === held) this.held.delete(held.key);
    held.stopRecording?.();
    held.stopMetrics();
    if (held.grpc !== null) this.grpc.removeChannelzChild(held.grpc.getChannelzRef());
  }

  updateState(state: ConnectivityState, status: Status, picker: Picker): void {
    this.updateTurns.updateState(state, status, picker);
  }

  private publish(state: ConnectivityState, status: Status, picker: Picker): void {
    if (this.publishes(state)) this.recording?.picker(state, status);
    this.lastState = state;
    this.lastStatus = status;
    this.grpc.updateState(
      toGrpcState(state),
      new GrpcPickerAdapter(picker, this.recording),
      status.code === 0 ? null : status.details,
    );
  }

  requestReresolution(): void {
    this.grpc.requestReresolution();
  }

  updateWakeable(wakeable: boolean): void {
    this.wakeable = wakeable;
  }

  /** `Math.random` itself, not a method calling it: pickers then call it directly (see `randomOf`). */
  readonly random: () => number = Math.random;
}
