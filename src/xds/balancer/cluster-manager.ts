// xds_cluster_manager_experimental (gRFC A31 "Implementation for xDS RouteAction Support", built on A28's
// routing policy): one child per cluster name, picks routed to the child of the cluster the config selector
// chose for the call.

import {
  type ChannelArgs,
  type ChildNode,
  CONNECTING,
  Code,
  ConfigReader,
  type ConnectivityState,
  childHelper,
  childPath,
  type Endpoint,
  expectObject,
  FailPicker,
  type Helper,
  IDLE,
  type LbUpdate,
  type LoadBalancer,
  OK_STATUS,
  type ParsedLbConfig,
  type PickArgs,
  type Picker,
  type PickResult,
  type PolicyFactory,
  type PolicyLookup,
  type PolicyNode,
  queuePicker,
  READY,
  type Status,
  type StatusOr,
  status,
  statusNode,
  TRANSIENT_FAILURE,
  unavailable,
} from '../../core/index.js';
import { ChildPolicy } from '../../policies/shared/child-policy.js';
import { SingleChildPolicy } from '../../policies/shared/single-child-policy.js';
import { WakeableTally } from '../../policies/shared/wakeable-tally.js';
import { selectedCluster } from '../call-attributes.js';
import { XDS_CLUSTER_MANAGER } from '../policy-names.js';

export { XDS_CLUSTER_MANAGER };

/** A31 `XDSClusterManagerConfig`: `{ children: { name: { childPolicy: [...] } } }`. */
export interface ClusterManagerConfig {
  readonly children: ReadonlyMap<string, ParsedLbConfig>;
}

export function parseClusterManagerConfig(
  json: unknown,
  path: string,
  registry: PolicyLookup,
): ClusterManagerConfig {
  const reader = new ConfigReader(json, path);
  const field = reader.required('children');
  const childrenJson = expectObject(field.value, field.path);
  const children = new Map<string, ParsedLbConfig>();
  for (const name of Object.keys(childrenJson)) {
    const child = new ConfigReader(childrenJson[name], childPath(field.path, name));
    const policy = child.required('childPolicy');
    children.set(name, registry.parseLbConfigList(policy.value, policy.path));
  }
  return { children };
}

const NO_CHILDREN = unavailable('xds_cluster_manager has no clusters');

/** One cluster's child: its policy and its latest report. */
class ClusterChild extends SingleChildPolicy {
  /** A28 "Picking": until the child reports, its calls queue. */
  state: ConnectivityState = CONNECTING;
  status: Status = OK_STATUS;
  picker: Picker = queuePicker;
  protected readonly child: ChildPolicy;

  constructor(
    readonly name: string,
    parent: Helper,
    registry: PolicyLookup,
    private readonly onReport: () => void,
    onWakeable: (wakeable: boolean) => void,
  ) {
    super();
    const helper = childHelper(parent, {
      updateWakeable: onWakeable,
      updateState: (state, s, picker) => {
        if (this.destroyed) return;
        this.state = state;
        this.status = s;
        this.picker = picker;
        this.onReport();
      },
      requestReresolution: () => {
        if (!this.destroyed) parent.requestReresolution();
      },
    });
    this.child = new ChildPolicy(helper, registry);
  }

  update(
    config: ParsedLbConfig,
    endpoints: StatusOr<readonly Endpoint[]>,
    attributes: ChannelArgs,
    note: string | undefined,
  ): boolean {
    if (this.child.replacedBy(config)) {
      this.state = CONNECTING;
      this.status = OK_STATUS;
      this.picker = queuePicker;
    }
    return this.child.update(config, endpoints, attributes, note);
  }

  describe(): PolicyNode {
    return this.child.describe(this.state, this.status);
  }
}

/**
 * Routes each pick to the picker of the cluster named in the call's attributes, whatever that child's state
 * (A28 "Picking": the pick is always delegated to the matched child). A cluster it does not know fails the
 * call with INTERNAL (A31: not possible when the resolver updates the policy before the config selector).
 */
export class ClusterManagerPicker implements Picker {
  private readonly unknown: PickResult;

  constructor(private readonly pickers: ReadonlyMap<string, Picker>) {
    this.unknown = Object.freeze({
      type: 'drop',
      status: status(
        Code.INTERNAL,
        `xds_cluster_manager: the call names no cluster among [${[...pickers.keys()].join(', ')}]`,
      ),
    });
  }

  pick(args: PickArgs): PickResult {
    const name = selectedCluster(args);
    const picker = name === undefined ? undefined : this.pickers.get(name);
    if (picker === undefined) return this.unknown;
    return picker.constantResult ?? picker.pick(args);
  }
}

/**
 * One child per cluster name; children are updated in place when their name stays and destroyed when it
 * goes (the resolver removes a cluster only once no call can still select it, A31). The reported state is
 * the aggregate of the children's (A28): READY if any is, else CONNECTING, else IDLE, else TRANSIENT_FAILURE.
 */
export class ClusterManagerLb implements LoadBalancer<ClusterManagerConfig> {
  private readonly children = new Map<string, ClusterChild>();
  private updating = false;
  private destroyed = false;
  /** What this policy last reported (the live view). */
  private state: ConnectivityState = CONNECTING;
  private status: Status = OK_STATUS;
  /** How many clusters' exitIdle() would wake something: none, and exitIdle() has nothing to do. */
  private readonly wakeable: WakeableTally;
  private readonly onChildWakeable = (wakeable: boolean): void => {
    this.wakeable.change(wakeable);
    if (!this.updating && !this.destroyed) this.wakeable.tell();
  };

  constructor(
    private readonly helper: Helper,
    private readonly registry: PolicyLookup,
  ) {
    this.wakeable = new WakeableTally(helper);
  }

  update(update: LbUpdate<ClusterManagerConfig>): boolean {
    if (this.destroyed) return false;
    const wanted = update.config.children;
    this.updating = true;
    try {
      for (const [name, child] of this.children) {
        if (!wanted.has(name)) {
          this.helper.trace(() => `xds_cluster_manager: removing cluster child ${name}`);
          this.children.delete(name);
          child.destroy();
        }
      }
      for (const [name, config] of wanted) {
        let child = this.children.get(name);
        if (child === undefined) {
          child = new ClusterChild(
            name,
            this.helper,
            this.registry,
            () => this.onChildReport(),
            this.onChildWakeable,
          );
          this.children.set(name, child);
        }
        child.update(config, update.endpoints, update.attributes, update.resolutionNote);
      }
    } finally {
      this.updating = false;
    }
    // A31: a picker that knows every new cluster is in place before update returns.
    this.aggregate();
    this.wakeable.tell();
    // An empty map is a valid config (every call then fails): the channel must still take its config selector.
    return true;
  }

  exitIdle(): void {
    // grpc-js calls this before every call: nothing to walk unless a cluster has something to wake.
    if (!this.wakeable.any) return;
    for (const child of this.children.values()) child.exitIdle();
  }

  resetBackoff(): void {
    for (const child of this.children.values()) child.resetBackoff();
  }

  destroy(): void {
    this.destroyed = true;
    for (const child of this.children.values()) child.destroy();
    this.children.clear();
  }

  private onChildReport(): void {
    if (!this.updating && !this.destroyed) this.aggregate();
  }

  /** The live view (A28): one child per cluster the routes name. */
  describe(): PolicyNode {
    const children: ChildNode[] = [];
    for (const [name, child] of this.children) children.push({ name, node: child.describe() });
    return statusNode({ policy: XDS_CLUSTER_MANAGER, state: this.state, children }, this.status);
  }

  private report(state: ConnectivityState, s: Status, picker: Picker): void {
    this.state = state;
    this.status = s;
    this.helper.updateState(state, s, picker);
  }

  private aggregate(): void {
    let ready = 0;
    let connecting = 0;
    let idle = 0;
    let failure: Status | null = null;
    const pickers = new Map<string, Picker>();
    for (const [name, child] of this.children) {
      pickers.set(name, child.picker);
      if (child.state === READY) ready++;
      else if (child.state === CONNECTING) connecting++;
      else if (child.state === IDLE) idle++;
      else failure ??= child.status;
    }
    const picker = new ClusterManagerPicker(pickers);
    if (this.children.size === 0) {
      this.report(TRANSIENT_FAILURE, NO_CHILDREN, new FailPicker(NO_CHILDREN));
    } else if (ready > 0) {
      this.report(READY, OK_STATUS, picker);
    } else if (connecting > 0) {
      this.report(CONNECTING, OK_STATUS, picker);
    } else if (idle > 0) {
      // Picks still go to the chosen child (whose own IdlePicker wakes it); exitIdle wakes them all.
      this.report(IDLE, OK_STATUS, picker);
    } else {
      this.report(TRANSIENT_FAILURE, failure ?? NO_CHILDREN, picker);
    }
  }
}

export const clusterManagerFactory: PolicyFactory<ClusterManagerConfig> = {
  name: XDS_CLUSTER_MANAGER,
  parseConfig: (json, path, registry) => parseClusterManagerConfig(json, path, registry),
  create: (helper, registry) => new ClusterManagerLb(helper, registry),
};
