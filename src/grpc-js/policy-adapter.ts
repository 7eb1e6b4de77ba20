import type { ChannelOptions, experimental } from '@grpc/grpc-js';
import {
  Code,
  ConfigError,
  FailPicker,
  type LoadBalancer,
  type PolicyFactory,
  type Registry,
  status,
  TRANSIENT_FAILURE,
} from '../core/index.js';
import { fromGrpcEndpoints } from './endpoint-conversion.js';
import { GrpcHelperAdapter } from './helper-adapter.js';

/**
 * An lbtree config as grpc-js holds it. Parsing never throws: grpc-js would silently skip a config that
 * throws and report only "All load balancer options in service config are not compatible", so the
 * ConfigError is carried to the policy instead, which rejects the update with the error's JSON path.
 */
export interface LbtreeTypedConfig extends experimental.TypedLoadBalancingConfig {
  readonly json: unknown;
  readonly config: unknown;
  readonly error: ConfigError | null;
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
  registry: Registry,
): GrpcPolicyClasses {
  class Config implements LbtreeTypedConfig {
    readonly config: unknown;
    readonly error: ConfigError | null;
    /** With no argument (grpc-js's default-policy path) the config is the policy's defaults. */
    constructor(readonly json: unknown = {}) {
      let config: unknown = null;
      let error: ConfigError | null = null;
      try {
        config = factory.parseConfig(json ?? {}, `$.${grpcName}`, registry);
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        error = e;
      }
      this.config = config;
      this.error = error;
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

  class LbtreeLoadBalancer implements experimental.LoadBalancer {
    private readonly helper: GrpcHelperAdapter;
    private policy: LoadBalancer | null = null;

    constructor(grpcHelper: experimental.ChannelControlHelper) {
      this.helper = new GrpcHelperAdapter(grpcHelper, grpcName);
    }

    updateAddressList(
      endpointList: experimental.StatusOr<experimental.Endpoint[]>,
      lbConfig: experimental.TypedLoadBalancingConfig,
      channelOptions: ChannelOptions,
      resolutionNote: string,
    ): boolean {
      // Nothing throws into the channel: a bug surfaces as TRANSIENT_FAILURE with its message.
      try {
        const typed = lbConfig as LbtreeTypedConfig;
        if (typed.error) return this.reject(typed.error.message);
        this.helper.channelOptions = channelOptions;
        this.policy ??= factory.create(this.helper, registry);
        return this.policy.update({
          endpoints: fromGrpcEndpoints(endpointList),
          config: typed.config,
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

    exitIdle(): void {
      this.policy?.exitIdle();
    }
    resetBackoff(): void {
      this.policy?.resetBackoff();
    }
    destroy(): void {
      this.policy?.destroy();
      this.policy = null;
    }
    getTypeName(): string {
      return grpcName;
    }
  }

  return { LoadBalancer: LbtreeLoadBalancer, Config };
}
