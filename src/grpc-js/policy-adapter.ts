import type { ChannelOptions, experimental } from '@grpc/grpc-js';
import {
  asConfigError,
  Code,
  type ConfigError,
  describeChild,
  FailPicker,
  type LoadBalancer,
  type ParsedLbConfig,
  type PolicyFactory,
  type PolicyLookup,
  type PolicyNode,
  parseNested,
  status,
  TRANSIENT_FAILURE,
} from '../core/index.js';
import { PRIORITY, WEIGHTED_TARGET } from '../policies/index.js';
import { type ChannelEntry, type ChannelRoot, channelEntryFor } from './channel-entry.js';
import { fromGrpcEndpoints } from './endpoint-conversion.js';
import { GrpcHelperAdapter, subchannelOptions } from './helper-adapter.js';
import { logInvalidConfigOnce } from './invalid-config-log.js';
import { lbtreeTracer } from './tracers.js';

/**
 * An lbtree config as grpc-js holds it. `createFromJson` THROWS for a policy's own invalid fields (grpc-js-xds
 * then NACKs the Cluster; grpc-js's service-config parser moves on to the next list entry). An error inside a
 * child of priority or weighted_target is carried here instead, and the policy rejects the update with it:
 * grpc-js-xds builds those parents at update time from resources it already ACKed (its cds policy builds the
 * priority tree around a Cluster's endpoint-picking policy) and turns a throw there into a failing channel,
 * where a rejected update keeps the previous good config serving.
 */
export interface LbtreeTypedConfig extends experimental.TypedLoadBalancingConfig {
  readonly json: unknown;
  readonly config: unknown;
  readonly error: ConfigError | null;
}

/** Policies whose children's config errors are carried to update time (see LbtreeTypedConfig). */
const CARRY_CHILD_ERRORS: ReadonlySet<string> = new Set([PRIORITY, WEIGHTED_TARGET]);

/** Stands in for a child whose config did not parse, so its parent can go on checking its own fields. */
const UNPARSED_CHILD: PolicyFactory = {
  name: 'unparsed child',
  parseConfig: () => undefined,
  create: () => {
    throw new Error('a config with an unparsed child is never run');
  },
};

/** The registry as a parent sees it while its children's errors are collected rather than thrown. */
class ChildErrorCollector implements PolicyLookup {
  firstError: ConfigError | null = null;
  constructor(private readonly registry: PolicyLookup) {}
  get(name: string): PolicyFactory | undefined {
    return this.registry.get(name);
  }
  parseLbConfigList(json: unknown, path = '$'): ParsedLbConfig {
    try {
      return this.registry.parseLbConfigList(json, path);
    } catch (e) {
      this.firstError ??= asConfigError(e, path, 'child');
      return { factory: UNPARSED_CHILD, config: undefined };
    }
  }
}

// grpc-js does not export its constructor types; these are derived from registerLoadBalancerType.
type RegisterArgs = Parameters<typeof experimental.registerLoadBalancerType>;

export interface GrpcPolicyClasses {
  readonly LoadBalancer: RegisterArgs[1];
  readonly Config: RegisterArgs[2];
}

/** Builds the grpc-js LoadBalancer and config classes that run `factory` under the name `grpcName`. */
export function grpcPolicyClasses(
  grpcName: string,
  factory: PolicyFactory,
  registry: PolicyLookup,
): GrpcPolicyClasses {
  const trace = lbtreeTracer(grpcName);
  const carriesChildErrors = CARRY_CHILD_ERRORS.has(factory.name);

  class Config implements LbtreeTypedConfig {
    readonly config: unknown;
    readonly error: ConfigError | null;
    /** With no argument (grpc-js's default-policy path) the config is the policy's defaults. */
    constructor(readonly json: unknown = {}) {
      const path = `$.${grpcName}`;
      const lookup = carriesChildErrors ? new ChildErrorCollector(registry) : registry;
      try {
        this.config = parseNested(path, () => factory.parseConfig(json ?? {}, path, lookup));
      } catch (e) {
        // grpc-js prefixes the policy name: "ring_hash: $.ring_hash.min_ring_size: …".
        const error = asConfigError(e, path, grpcName);
        trace(() => `invalid config: ${error.message}`);
        logInvalidConfigOnce(
          grpcName,
          json,
          `invalid ${grpcName} config, not used: ${error.message} (grpc-js goes on to the next ` +
            'loadBalancingConfig entry, or to pick_first when none is left; @grpc/grpc-js-xds NACKs the Cluster)',
        );
        throw new Error(error.message);
      }
      this.error = lookup instanceof ChildErrorCollector ? lookup.firstError : null;
      if (this.error) {
        const message = this.error.message;
        trace(() => `invalid child config, carried to the update: ${message}`);
        logInvalidConfigOnce(
          grpcName,
          json,
          `invalid ${grpcName} config, its updates are rejected: ${message} (the previous config keeps ` +
            'serving; without one, RPCs fail with this error)',
        );
      }
    }
    static createFromJson(json: unknown): Config {
      return new Config(json);
    }
    getLoadBalancerName(): string {
      return grpcName;
    }
    toJsonObject(): object {
      return { [grpcName]: this.json };
    }
  }

  class LbtreeLoadBalancer implements experimental.LoadBalancer, ChannelRoot {
    private readonly helper: GrpcHelperAdapter;
    private policy: LoadBalancer | null = null;
    /**
     * The channel's registry entry (lbtree/admin), shared with the roots grpc-js runs before and after this
     * one: found at the first update, whose options carry the channel's key.
     */
    private channel: ChannelEntry | undefined = undefined;
    private readonly grpcHelper: experimental.ChannelControlHelper;
    private attached = false;
    readonly policyName = grpcName;

    constructor(grpcHelper: experimental.ChannelControlHelper) {
      this.helper = new GrpcHelperAdapter(grpcHelper, grpcName);
      this.grpcHelper = grpcHelper;
      this.helper.publishes = (state) => this.channel?.publishes(this, state) ?? true;
    }

    updateAddressList(
      endpointList: experimental.StatusOr<experimental.Endpoint[]>,
      lbConfig: experimental.TypedLoadBalancingConfig,
      channelOptions: ChannelOptions,
      resolutionNote: string,
    ): boolean {
      // Nothing throws into the channel: a bug surfaces as TRANSIENT_FAILURE with its message.
      try {
        if (!(lbConfig instanceof Config)) {
          return this.reject(`expected a ${grpcName} config, got ${lbConfig.getLoadBalancerName()}`);
        }
        const endpoints = fromGrpcEndpoints(endpointList);
        // Listed from its first update, good or not: a channel failing from the start is one to look at.
        this.channel ??= channelEntryFor(this.grpcHelper, channelOptions);
        const channel = this.channel;
        channel.noteOptions(channelOptions);
        if (!this.attached) {
          this.attached = true;
          channel.attach(this);
        }
        const recording = channel.record(channelOptions);
        this.helper.recording = recording;
        recording?.update(
          endpoints,
          lbConfig.toJsonObject(),
          channelOptions as Record<string, unknown>,
          resolutionNote,
        );
        if (lbConfig.error) return this.reject(lbConfig.error.message);
        if (!endpointList.ok && !this.policy) {
          // As grpc-js's own policies do: a resolver error with no list to keep serving fails RPCs now.
          const e = endpointList.error;
          this.fail(e.code as number as Code, e.details);
          return true;
        }
        this.helper.channelOptions = subchannelOptions(channelOptions);
        if (!this.policy) {
          this.helper.metricsRecorder = channel.metricsRecorderFor(channelOptions);
          // A new root is taken as having something to wake until it says otherwise.
          this.helper.wakeable = true;
          this.policy = factory.create(this.helper, registry);
        }
        return this.policy.update({
          endpoints,
          config: lbConfig.config,
          attributes: channelOptions as Record<string, unknown>,
          ...(resolutionNote ? { resolutionNote } : {}),
        });
      } catch (e) {
        this.fail(Code.INTERNAL, `lbtree ${grpcName} failed: ${(e as Error).stack ?? e}`);
        return false;
      }
    }

    /**
     * A bad config: the previous good one keeps serving (update rejected). With none, the channel goes
     * TRANSIENT_FAILURE with the error, and the update counts as handled: grpc-js would otherwise leave
     * calls waiting for name resolution instead of showing them the error.
     */
    private reject(message: string): boolean {
      if (this.policy) {
        this.helper.trace(() => `rejected config update: ${message}`);
        return false;
      }
      this.fail(Code.UNAVAILABLE, `invalid ${grpcName} LB config: ${message}`);
      return true;
    }

    private fail(code: Code, details: string): void {
      const s = status(code, details);
      this.helper.updateState(TRANSIENT_FAILURE, s, new FailPicker(s));
    }

    describe(): PolicyNode | undefined {
      if (this.policy === null) return undefined;
      return describeChild(this.policy, factory.name, this.helper.lastState, this.helper.lastStatus);
    }

    exitIdle(): void {
      // grpc-js calls this before every call; the tree says when nothing in it would wake.
      if (this.helper.wakeable) this.policy?.exitIdle();
    }
    resetBackoff(): void {
      this.policy?.resetBackoff();
    }
    destroy(): void {
      this.policy?.destroy();
      this.policy = null;
      // A spread update's report held for the channel goes nowhere now.
      this.helper.updateTurns.clear();
      this.helper.connectionPacer.clear();
      this.helper.recording = null;
      this.attached = false;
      this.channel?.detach(this);
    }
    getTypeName(): string {
      return grpcName;
    }
  }

  return { LoadBalancer: LbtreeLoadBalancer, Config };
}
