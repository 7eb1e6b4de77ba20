import type { Address } from './address.js';
import type { Attributes } from './attributes.js';
import type { ChannelArgs } from './channel-args.js';
import type { Clock } from './clock.js';
import type { ConnectionPacer } from './connection-pacer.js';
import type { ConnectivityState } from './connectivity-state.js';
import type { Endpoint } from './endpoint.js';
import type { MetricsRecorder } from './metrics-recorder.js';
import type { Picker } from './picker.js';
import type { PolicyNode } from './policy-node.js';
import type { Status } from './status.js';
import type { StatusOr } from './status-or.js';
import type { Subchannel } from './subchannel.js';
import type { UpdateTurns } from './update-turns.js';

/** What flows down the tree: the resolver's endpoints (or its error), the parsed config, channel settings. */
export interface LbUpdate<Config = unknown> {
  readonly endpoints: StatusOr<readonly Endpoint[]>;
  readonly config: Config;
  readonly attributes: ChannelArgs;
  /** Text from the resolver to include in failure statuses (e.g. why the list is empty). */
  readonly resolutionNote?: string;
}

/** Trace output; the message is built only when tracing is on. */
export type Trace = (message: () => string) => void;

/** What a parent gives a child. Parents wrap it per child, so children never see their siblings. */
export interface Helper {
  createSubchannel(address: Address, attributes: Attributes): Subchannel;
  updateState(state: ConnectivityState, status: Status, picker: Picker): void;
  requestReresolution(): void;
  readonly clock: Clock;
  /**
   * Uniform in [0, 1): the only randomness a policy uses (shuffles, random start indexes). A helper whose
   * randomness is `Math.random` should hand `Math.random` itself (a property, not a method calling it): pickers
   * then share one function across trees and channels (see `randomOf`).
   */
  random(): number;
  readonly trace: Trace;
  /** A79: where non-per-call metrics go; absent when the channel records none. Child helpers forward it. */
  readonly metricsRecorder?: MetricsRecorder | undefined;
  /** Issue 25 §5: spreads a big update over event-loop turns; absent, every update is applied in one turn. */
  readonly updateTurns?: UpdateTurns | undefined;
  /** Issue 25 §5: spreads connection requests over event-loop turns; absent, every request is made at once. */
  readonly connectionPacer?: ConnectionPacer | undefined;
  /**
   * The policy says whether its `exitIdle()` would now wake anything (something in its subtree is IDLE and
   * waits for it), each time that changes. A parent skips `exitIdle()` on a child that said no: grpc-js calls
   * it on the root before every call. Until a policy says, it is taken as yes, so one that never calls this
   * always gets `exitIdle()`. Absent: the parent does not listen (a policy calls it as `updateWakeable?.()`).
   */
  updateWakeable?(wakeable: boolean): void;
}

export interface LoadBalancer<Config = unknown> {
  /** Returns whether the update was accepted; a rejected update leaves the previous good state serving. */
  update(update: LbUpdate<Config>): boolean;
  exitIdle(): void;
  resetBackoff(): void;
  destroy(): void;
  /** The policy and its subtree as they are now, for the live view (lbtree/admin); built on demand. */
  describe?(): PolicyNode;
}

/** A registered policy: parses its JSON config (throwing a ConfigError with a path) and builds instances. */
export interface PolicyFactory<Config = unknown> {
  readonly name: string;
  parseConfig(json: unknown, path: string, registry: PolicyLookup): Config;
  create(helper: Helper, registry: PolicyLookup): LoadBalancer<Config>;
}

/** The part of the registry a policy needs to parse and build its children. */
export interface PolicyLookup {
  get(name: string): PolicyFactory | undefined;
  parseLbConfigList(json: unknown, path?: string): ParsedLbConfig;
}

/** One chosen entry of a LoadBalancingConfig list. */
export interface ParsedLbConfig<Config = unknown> {
  readonly factory: PolicyFactory<Config>;
  readonly config: Config;
}
