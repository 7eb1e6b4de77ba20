import {
  type Address,
  type Attributes,
  type ChannelArgs,
  CONNECTING,
  ConfigError,
  ConnectionPacer,
  type ConnectivityState,
  type DropPick,
  err,
  type Helper,
  type LbUpdate,
  type LoadBalancer,
  type MetricsRecorder,
  NO_CHANNEL_ARGS,
  OK_STATUS,
  ok,
  type ParsedLbConfig,
  type Picker,
  type PickResult,
  type PolicyNode,
  queuePicker,
  type Registry,
  type Status,
  SubchannelMetrics,
  subchannelMetricLabels,
  UpdateTurnQueue,
} from '../core/index.js';
import { FakeOrcaServer } from './fake-orca-server.js';
import {
  CONNECT_AT_ONCE,
  type ConnectionScript,
  FakeSubchannel,
  type SubchannelHandle,
} from './fake-subchannel.js';
import { type EndpointInput, toEndpoint } from './plain-endpoints.js';
import { seededRandom } from './seeded-random.js';
import { VirtualClock } from './virtual-clock.js';

export interface SimulationOptions {
  /** How long a subchannel backs off after a failed attempt before going IDLE (ms). Default 1000. */
  backoffMs?: number;
  /** Seed of the random source policies see (shuffles, random start indexes). Default 1. */
  seed?: number;
  /** Collect trace lines in `sim.traces`. */
  trace?: boolean;
  /**
   * Keep only the latest this many `sim.history` entries (a ring: the oldest are dropped and counted in
   * `sim.historyDropped`). Default: unlimited.
   */
  historyLimit?: number;
  /** A79: the recorder the tree's policies (and the fake subchannels, A94) record their metrics to. */
  metricsRecorder?: MetricsRecorder;
  /**
   * The virtual time an event-loop turn of a spread update takes (issue 25 §5: a petiole's or ring_hash's
   * list of 500 endpoints or more, or a shorter one once the turn has placed 1,000, is placed 1,000 endpoints
   * per turn, the channel keeping its picker until the update is complete). Default 0: every turn runs within
   * the operation that caused it; more lets a test watch the turns.
   */
  spreadTurnMs?: number;
  /**
   * The virtual time a turn of the connection pacer takes (issue 25 §5: connection requests over 100 in a turn
   * wait for later turns). Default 0: every turn runs at the instant of the operation that caused it; more lets
   * a test watch the turns.
   */
  connectionTurnMs?: number;
  /**
   * false: the tree's helper offers no update turns, so every update is applied in the turn it arrives in (as
   * under a helper of one's own); the reference a spread update's result is compared with. Default true.
   */
  spreadUpdates?: boolean;
}

export interface HistoryEntry {
  readonly at: number;
  readonly state: ConnectivityState;
  readonly status: Status;
}

/** Metadata as tests write it: header name → value(s). */
export type PlainMetadata = Readonly<Record<string, string | readonly string[]>>;

export type SimPickResult =
  | { readonly type: 'complete'; readonly address: string; readonly subchannel: SubchannelHandle }
  | { readonly type: 'queue' }
  | { readonly type: 'fail'; readonly status: Status }
  | { readonly type: 'drop'; readonly status: Status; readonly dropReason?: DropPick['dropReason'] };

/**
 * A deterministic channel for one policy tree: virtual time, scripted fake subchannels, and a recording
 * helper. Every operation runs the work it causes (state deliveries, zero-delay hops) before returning.
 */
export class Simulation {
  readonly options: {
    backoffMs: number;
    seed: number;
    trace: boolean;
    historyLimit: number;
    spreadTurnMs: number;
    connectionTurnMs: number;
  };
  readonly clock = new VirtualClock();
  /** Entries dropped from the front of `history` by `historyLimit`. */
  historyDropped = 0;
  /** The recorded entries; with a limit, a ring whose oldest entry is at `historyStart`. */
  private readonly recorded: HistoryEntry[] = [];
  private historyStart = 0;
  readonly traces: string[] = [];
  state: ConnectivityState = CONNECTING;
  status: Status = OK_STATUS;
  picker: Picker = queuePicker;
  reresolutionRequests = 0;
  /** Subchannel handles created by the policy tree, in order. */
  subchannelsCreated = 0;
  /** The ConfigError of the last rejected config, if any. */
  lastConfigError: ConfigError | undefined;
  private root: LoadBalancer | null = null;
  /**
   * Whether the root's exitIdle() would wake anything (Helper.updateWakeable: yes until the root says); as a
   * grpc-js channel does, exitIdle() skips the root while it is no.
   */
  rootWakeable = true;
  private rootConfig: ParsedLbConfig | null = null;
  private readonly fakes = new Map<string, FakeSubchannel>();
  private readonly createdWith = new Map<string, Attributes>();
  private readonly scripts = new Map<string, ConnectionScript>();
  private readonly orcaServers = new Map<string, FakeOrcaServer>();
  private readonly random: () => number;
  private readonly helper: Helper;
  /** Spread updates' turns (issue 25 §5): `spreading` while the channel keeps its picker for one. */
  readonly updateTurns: UpdateTurnQueue;
  /** Connection requests over a turn's budget wait for later turns (issue 25 §5), turns as spread updates' are. */
  readonly connectionPacer: ConnectionPacer;

  constructor(
    readonly registry: Registry,
    options: SimulationOptions = {},
  ) {
    this.options = {
      backoffMs: options.backoffMs ?? 1000,
      seed: options.seed ?? 1,
      trace: options.trace ?? false,
      historyLimit: options.historyLimit ?? Number.POSITIVE_INFINITY,
      spreadTurnMs: options.spreadTurnMs ?? 0,
      connectionTurnMs: options.connectionTurnMs ?? 0,
    };
    const limit = this.options.historyLimit;
    if (!(limit === Number.POSITIVE_INFINITY || (Number.isInteger(limit) && limit >= 1))) {
      throw new RangeError(`historyLimit must be a positive integer, got ${limit}`);
    }
    if (!(this.options.spreadTurnMs >= 0)) {
      throw new RangeError(`spreadTurnMs must be at least 0, got ${this.options.spreadTurnMs}`);
    }
    if (!(this.options.connectionTurnMs >= 0)) {
      throw new RangeError(`connectionTurnMs must be at least 0, got ${this.options.connectionTurnMs}`);
    }
    this.random = seededRandom(this.options.seed);
    const turns = new UpdateTurnQueue({
      nextTurn: (fn) => {
        this.clock.setTimer(this.options.spreadTurnMs, fn);
      },
      publish: (state, status, picker) => {
        this.state = state;
        this.status = status;
        this.picker = picker;
        this.record({ at: this.clock.now(), state, status });
      },
    });
    this.updateTurns = turns;
    this.connectionPacer = new ConnectionPacer({
      nextTurn: (fn) => {
        this.clock.setTimer(this.options.connectionTurnMs, fn);
      },
    });
    const host = {
      clock: this.clock,
      backoffMs: () => this.options.backoffMs,
      scriptFor: (key: string) => this.scripts.get(key) ?? CONNECT_AT_ONCE,
      onUnreferenced: () => {},
      orcaFor: (key: string) => this.orca(key),
      random: () => this.random(),
      trace: (message: string) => {
        if (this.options.trace) this.traces.push(`${this.clock.now()}ms ${message}`);
      },
      // From inside a running timer the clock's own loop runs the new work once that timer returns: running
      // it here would deliver a change inside the call that made it.
      flush: () => {
        if (!this.clock.running) this.flush();
      },
    };
    this.helper = {
      createSubchannel: (address: Address, attributes: Attributes) => {
        const key = new FakeSubchannel(address, host).key;
        this.createdWith.set(key, attributes);
        let fake = this.fakes.get(key);
        if (!fake || fake.released) {
          fake = new FakeSubchannel(address, host);
          const recorder = options.metricsRecorder;
          if (recorder !== undefined) {
            fake.connectionMetrics = new SubchannelMetrics(
              recorder,
              subchannelMetricLabels(attributes),
              fake.state,
            );
          }
          this.fakes.set(key, fake);
        }
        this.subchannelsCreated++;
        return fake.newHandle();
      },
      updateState: (state, status, picker) => turns.updateState(state, status, picker),
      requestReresolution: () => {
        this.reresolutionRequests++;
      },
      updateWakeable: (wakeable) => {
        this.rootWakeable = wakeable;
      },
      clock: this.clock,
      random: () => this.random(),
      trace: (message) => {
        if (this.options.trace) this.traces.push(`${this.clock.now()}ms ${message()}`);
      },
      metricsRecorder: options.metricsRecorder,
      updateTurns: options.spreadUpdates === false ? undefined : turns,
      connectionPacer: this.connectionPacer,
    };
  }

  get now(): number {
    return this.clock.now();
  }

  /**
   * Every state the root reported, oldest first (with `historyLimit`, the latest that many). Without a limit
   * this is the live array; with one, a copy in order.
   */
  get history(): readonly HistoryEntry[] {
    if (this.historyStart === 0) return this.recorded;
    const r = this.recorded;
    return [...r.slice(this.historyStart), ...r.slice(0, this.historyStart)];
  }

  private record(entry: HistoryEntry): void {
    const r = this.recorded;
    if (r.length < this.options.historyLimit) {
      r.push(entry);
      return;
    }
    // Full: overwrite the oldest entry.
    r[this.historyStart] = entry;
    this.historyStart = (this.historyStart + 1) % r.length;
    this.historyDropped++;
  }

  /** Builds the root policy from a LoadBalancingConfig list (or one entry). Throws a ConfigError if invalid. */
  createRoot(configJson: unknown): LoadBalancer {
    const parsed = this.registry.parseLbConfigList(configJson);
    this.destroyRoot();
    this.rootWakeable = true;
    this.rootConfig = parsed;
    this.root = this.registry.create(parsed, this.helper);
    return this.root;
  }

  /**
   * Delivers a resolver update and returns whether the policy accepted it. A config that does not parse is
   * rejected (false, `lastConfigError` set) and the running tree keeps serving.
   */
  update(
    endpoints: readonly EndpointInput[],
    configJson?: unknown,
    attributes: ChannelArgs = NO_CHANNEL_ARGS,
  ): boolean {
    if (!this.applyConfig(configJson)) return false;
    return this.deliver({
      endpoints: ok(endpoints.map(toEndpoint)),
      config: this.rootConfig!.config,
      attributes,
    });
  }

  /** Delivers a resolver error. */
  updateError(status: Status, attributes: ChannelArgs = NO_CHANNEL_ARGS): boolean {
    if (!this.root) throw new Error('call sim.createRoot(config) before delivering updates');
    return this.deliver({ endpoints: err(status), config: this.rootConfig!.config, attributes });
  }

  /** The attributes the policy last created a subchannel for an address with (undefined if it never did). */
  subchannelAttributes(addressKey: string): Attributes | undefined {
    return this.createdWith.get(addressKey);
  }

  /** The fake subchannel for an address; throws if the policy never created one. */
  subchannel(addressKey: string): FakeSubchannel {
    const fake = this.fakes.get(addressKey);
    if (!fake) throw new Error(`no subchannel was created for ${addressKey}`);
    return fake;
  }

  findSubchannel(addressKey: string): FakeSubchannel | undefined {
    return this.fakes.get(addressKey);
  }

  /** Every address a subchannel was ever created for, and its current fake. */
  get subchannels(): ReadonlyMap<string, FakeSubchannel> {
    return this.fakes;
  }

  /**
   * The ORCA service (A51 `OpenRcaService`) of the backend at an address: set what it reports, or make it
   * fail; it answers the out-of-band streams of every connection to that address, present or future.
   */
  orca(addressKey: string): FakeOrcaServer {
    let server = this.orcaServers.get(addressKey);
    if (server === undefined) {
      server = new FakeOrcaServer(this.clock, () => {
        if (!this.clock.running) this.flush();
      });
      this.orcaServers.set(addressKey, server);
    }
    return server;
  }

  /**
   * Scripts every future connection attempt on an address. An address never scripted connects: READY 0 ms
   * after each attempt starts, on a later turn of the virtual clock (policies see it CONNECTING first); script
   * `'hang'` to keep its attempts CONNECTING and drive them by hand with `subchannel(key).setState(…)`.
   */
  script(addressKey: string, outcome: ConnectionScript): void {
    this.scripts.set(addressKey, outcome);
  }

  /** Moves virtual time forward, running timers in order. */
  advance(ms: number): void {
    this.clock.advance(ms);
  }

  /** Runs the work due now (called by every operation; tests rarely need it). */
  flush(): void {
    this.clock.runDue();
  }

  pick(
    options: { hash?: bigint; metadata?: PlainMetadata; callAttributes?: ReadonlyMap<unknown, unknown> } = {},
  ): SimPickResult {
    const metadata = options.metadata ?? {};
    const result: PickResult = this.picker.pick({
      metadata: {
        get: (key) => {
          const v = metadata[key.toLowerCase()] ?? metadata[key];
          return v === undefined ? [] : typeof v === 'string' ? [v] : v;
        },
      },
      ...(options.hash !== undefined ? { hash: options.hash } : {}),
      ...(options.callAttributes ? { callAttributes: options.callAttributes } : {}),
    });
    this.flush();
    if (result.type === 'complete') {
      const subchannel = result.subchannel as SubchannelHandle;
      subchannel.picks++;
      return { type: 'complete', address: subchannel.key, subchannel };
    }
    return result;
  }

  /** The root policy's live picture (`LoadBalancer.describe`), or undefined without a root that offers one. */
  describe(): PolicyNode | undefined {
    return this.root?.describe?.();
  }

  /** Calls resetBackoff / exitIdle on the root, as a channel does. */
  resetBackoff(): void {
    this.root?.resetBackoff();
    this.flush();
  }

  exitIdle(): void {
    if (this.rootWakeable) this.root?.exitIdle();
    this.flush();
  }

  destroy(): void {
    this.destroyRoot();
    this.root = null;
    this.flush();
  }

  /** Destroys the root policy; a spread update's waiting steps and held report go with it. */
  private destroyRoot(): void {
    this.root?.destroy();
    this.updateTurns.clear();
    this.connectionPacer.clear();
  }

  private applyConfig(configJson: unknown): boolean {
    if (configJson === undefined) {
      if (!this.root) throw new Error('call sim.createRoot(config) or pass a config with the first update');
      return true;
    }
    let parsed: ParsedLbConfig;
    try {
      parsed = this.registry.parseLbConfigList(configJson);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      this.lastConfigError = e;
      return false;
    }
    if (!this.root || this.rootConfig?.factory.name !== parsed.factory.name) {
      this.destroyRoot();
      this.rootWakeable = true;
      this.root = this.registry.create(parsed, this.helper);
    }
    this.rootConfig = parsed;
    return true;
  }

  private deliver(update: LbUpdate): boolean {
    const accepted = this.root!.update(update);
    this.flush();
    return accepted;
  }
}
