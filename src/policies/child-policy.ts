import {
  type ChannelArgs,
  type ConnectivityState,
  type Endpoint,
  ForwardingHelper,
  type Helper,
  type LoadBalancer,
  type ParsedLbConfig,
  type Picker,
  type PolicyFactory,
  type PolicyLookup,
  type Status,
  type StatusOr,
} from '../core/index.js';

/** The helper of one policy instance: passes its reports up only while that instance is the live one. */
class InstanceHelper extends ForwardingHelper {
  constructor(
    parent: Helper,
    private readonly owner: ChildPolicy,
  ) {
    super(parent);
  }
  updateState(state: ConnectivityState, status: Status, picker: Picker): void {
    if (this.owner.live === this) this.parent.updateState(state, status, picker);
  }
  override requestReresolution(): void {
    if (this.owner.live === this) this.parent.requestReresolution();
  }
}

/**
 * The policy instance behind one named child of a multi-child policy (priority, weighted_target). Names let a
 * config update reach the existing instance; a config naming a different policy replaces it, make before
 * break (the new instance is updated before the old one is destroyed, so pooled connections carry over).
 * Reports and re-resolution requests from a replaced or destroyed instance are dropped.
 */
export class ChildPolicy {
  private policy: LoadBalancer | null = null;
  private factory: PolicyFactory | null = null;
  /** @internal The live instance's helper; each instance's helper checks it before passing anything up. */
  live: Helper | null = null;

  constructor(
    private readonly helper: Helper,
    private readonly registry: PolicyLookup,
  ) {}

  /** Whether `parsed` would start a new instance (none yet, or a different policy). */
  replacedBy(parsed: ParsedLbConfig): boolean {
    return parsed.factory !== this.factory;
  }

  update(
    parsed: ParsedLbConfig,
    endpoints: StatusOr<readonly Endpoint[]>,
    attributes: ChannelArgs,
    resolutionNote: string | undefined,
  ): boolean {
    let previous: LoadBalancer | null = null;
    if (parsed.factory !== this.factory) {
      previous = this.policy;
      const helper = new InstanceHelper(this.helper, this);
      this.live = helper;
      this.factory = parsed.factory;
      this.policy = parsed.factory.create(helper, this.registry);
      this.helper.trace(() => `child policy ${parsed.factory.name} created`);
    }
    const accepted = this.policy!.update({ endpoints, config: parsed.config, attributes, resolutionNote });
    previous?.destroy();
    return accepted;
  }

  exitIdle(): void {
    this.policy?.exitIdle();
  }

  resetBackoff(): void {
    this.policy?.resetBackoff();
  }

  destroy(): void {
    this.live = null;
    this.factory = null;
    const policy = this.policy;
    this.policy = null;
    policy?.destroy();
  }
}
