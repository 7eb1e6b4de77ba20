import {
  addressKey,
  CONNECTING,
  type ConnectivityState,
  childHelper,
  type Helper,
  type LbUpdate,
  type LoadBalancer,
  OK_STATUS,
  type PolicyFactory,
  type PolicyLookup,
  type PolicyNode,
  randomOf,
  type Status,
} from '../../core/index.js';
import { ChildPolicy } from '../shared/child-policy.js';
import { SingleChildPolicy } from '../shared/single-child-policy.js';
import { parseRandomSubsettingConfig, RANDOM_SUBSETTING, type RandomSubsettingConfig } from './config.js';
import { rendezvousSubset } from './rendezvous-subset.js';

/**
 * random_subsetting_experimental (A68): hands its child only `subset_size` of the endpoints, chosen by
 * rendezvous hashing with a seed drawn once per policy instance, so each client connects to a few servers,
 * clients spread evenly over the servers, and scaling the servers moves few connections. A filter on
 * updates only: the child's subchannels, reports and pickers pass straight through (A68 "Handling
 * Subchannel Connectivity State Notifications"); its reports are only noted on the way, for describe().
 */
export class RandomSubsetting extends SingleChildPolicy implements LoadBalancer<RandomSubsettingConfig> {
  protected readonly child: ChildPolicy;
  /** A68: "When the lb policy is initialized it also creates a random integer seed" (64 bits, two words). */
  private readonly seedHigh: number;
  private readonly seedLow: number;
  /** For the live view: the latest config's subset size, the chosen endpoints, how many there were. */
  private subsetSize = 0;
  private subset: readonly string[] = [];
  private offered = 0;
  /** The child's latest report, passed on unchanged. */
  private childState: ConnectivityState = CONNECTING;
  private childStatus: Status = OK_STATUS;

  constructor(
    private readonly helper: Helper,
    registry: PolicyLookup,
  ) {
    super();
    const random = randomOf(helper);
    this.seedHigh = Math.floor(random() * 0x1_0000_0000);
    this.seedLow = Math.floor(random() * 0x1_0000_0000);
    this.child = new ChildPolicy(
      childHelper(helper, {
        // One child: whether its exitIdle() would wake anything is ours to say too.
        updateWakeable: (wakeable) => helper.updateWakeable?.(wakeable),
        updateState: (state, status, picker) => {
          this.childState = state;
          this.childStatus = status;
          helper.updateState(state, status, picker);
        },
      }),
      registry,
    );
  }

  update(update: LbUpdate<RandomSubsettingConfig>): boolean {
    if (this.destroyed) return false;
    const config = update.config;
    let endpoints = update.endpoints;
    if (endpoints.ok) {
      const all = endpoints.value;
      const subset = rendezvousSubset(all, config.subsetSize, this.seedHigh, this.seedLow);
      if (subset !== all) endpoints = { ok: true, value: subset };
      this.subsetSize = config.subsetSize;
      this.subset = subset.map((e) => e.addresses.map(addressKey).join(', '));
      this.offered = all.length;
      this.helper.trace(
        () =>
          `${RANDOM_SUBSETTING}: ${subset.length} of ${all.length} endpoints (subset_size ${config.subsetSize})`,
      );
    }
    return this.child.update(config.childPolicy, endpoints, update.attributes, update.resolutionNote);
  }

  describe(): PolicyNode {
    const child = this.child.describe(this.childState, this.childStatus);
    return {
      policy: RANDOM_SUBSETTING,
      state: child.state,
      ...(child.status !== undefined && { status: child.status }),
      facts: { subset_size: this.subsetSize, endpoints: this.offered, subset: this.subset },
      children: [{ name: child.policy, node: child }],
    };
  }
}

export const randomSubsettingFactory: PolicyFactory<RandomSubsettingConfig> = {
  name: RANDOM_SUBSETTING,
  parseConfig: parseRandomSubsettingConfig,
  create: (helper, registry) => new RandomSubsetting(helper, registry),
};
