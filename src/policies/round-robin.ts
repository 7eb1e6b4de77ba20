import {
  CONNECTING,
  ConfigReader,
  type ConnectivityState,
  FailPicker,
  type Helper,
  IDLE,
  type LbUpdate,
  type LoadBalancer,
  OK_STATUS,
  type PickArgs,
  type Picker,
  type PickResult,
  type PolicyFactory,
  queuePicker,
  READY,
  type Status,
  TRANSIENT_FAILURE,
  unavailable,
} from '../core/index.js';
import { type EndpointChild, EndpointList } from './endpoint-list.js';

export const ROUND_ROBIN = 'round_robin';

/** Rotates over the READY children's pickers, starting at a random one so clients spread their first calls. */
export class RoundRobinPicker implements Picker {
  private next: number;
  constructor(
    private readonly pickers: readonly Picker[],
    start: number,
  ) {
    this.next = start % pickers.length;
  }
  pick(args: PickArgs): PickResult {
    const picker = this.pickers[this.next]!;
    if (++this.next === this.pickers.length) this.next = 0;
    return picker.pick(args);
  }
}

/** round_robin as an A61 petiole: one pick_first child per endpoint, calls rotated over the READY ones. */
export class RoundRobin implements LoadBalancer<object> {
  private readonly list: EndpointList;
  /** null until the first report; treated as CONNECTING, the state A61 says a new policy starts in. */
  private reported: ConnectivityState | null = null;
  /** The child whose failure the TRANSIENT_FAILURE picker shows (its real connection error). */
  private lastFailed: EndpointChild | null = null;

  constructor(private readonly helper: Helper) {
    this.list = new EndpointList(helper, {
      onChildState: (child, previous) => this.onChildState(child, previous),
    });
  }

  update(update: LbUpdate<object>): boolean {
    const note = update.resolutionNote ? ` (${update.resolutionNote})` : '';
    if (!update.endpoints.ok) {
      // With endpoints already in hand a resolver error changes nothing.
      if (this.list.size === 0) {
        this.fail(unavailable(`name resolution failed: ${update.endpoints.status.details}${note}`));
      }
      return false;
    }
    if (update.endpoints.value.length === 0) {
      this.list.destroyAll();
      this.fail(unavailable(`empty endpoint list${note}`));
      return false;
    }
    this.list.update(update.endpoints.value, update.attributes);
    for (const child of this.list.children.values()) {
      if (child.state === TRANSIENT_FAILURE) this.lastFailed = child;
      else if (child.state === IDLE) child.policy.exitIdle();
    }
    this.aggregate();
    return true;
  }

  exitIdle(): void {
    for (const child of this.list.children.values()) child.policy.exitIdle();
  }

  resetBackoff(): void {
    for (const child of this.list.children.values()) child.policy.resetBackoff();
  }

  destroy(): void {
    this.list.destroyAll();
  }

  private fail(status: Status): void {
    this.lastFailed = null;
    this.helper.requestReresolution();
    this.report(TRANSIENT_FAILURE, status, new FailPicker(status));
  }

  private onChildState(child: EndpointChild, previous: ConnectivityState): void {
    if (child.state === TRANSIENT_FAILURE) {
      this.lastFailed = child;
      // pick_first re-resolves itself when it fails to connect or loses its connection; a READY child turned
      // unhealthy (health watch) is the one case it does not see, so the petiole asks here.
      if (previous === READY) this.helper.requestReresolution();
    } else if (child.state === IDLE) {
      // Petioles keep every endpoint connected.
      child.policy.exitIdle();
    }
    // Only changes that can alter what we report need a new picker.
    if (child.state === READY || previous === READY || this.reported !== READY) this.aggregate();
  }

  /** A61 round_robin state: READY > CONNECTING (or IDLE) > TRANSIENT_FAILURE, with sticky TF. */
  private aggregate(): void {
    const counts = this.list.counts;
    if (counts[READY] > 0) {
      const pickers: Picker[] = [];
      for (const child of this.list.children.values()) if (child.state === READY) pickers.push(child.picker);
      const start = Math.floor(this.helper.random() * pickers.length);
      this.report(READY, OK_STATUS, new RoundRobinPicker(pickers, start));
      return;
    }
    const stillTrying = counts[CONNECTING] + counts[IDLE] > 0;
    if (stillTrying && this.reported !== TRANSIENT_FAILURE) {
      if (this.reported !== CONNECTING) this.report(CONNECTING, OK_STATUS, queuePicker);
      return;
    }
    // All children failed, or we were in TF already (sticky until a child is READY): fail with a child's
    // real error.
    const failed = this.lastFailed;
    if (failed && failed.state === TRANSIENT_FAILURE) {
      this.report(TRANSIENT_FAILURE, failed.status, failed.picker);
    } else if (this.reported !== TRANSIENT_FAILURE) {
      const status = unavailable('no endpoint is reachable');
      this.report(TRANSIENT_FAILURE, status, new FailPicker(status));
    }
  }

  private report(state: ConnectivityState, status: Status, picker: Picker): void {
    this.reported = state;
    this.helper.updateState(state, status, picker);
  }
}

export const roundRobinFactory: PolicyFactory<object> = {
  name: ROUND_ROBIN,
  parseConfig: (json, path) => {
    new ConfigReader(json, path); // round_robin has no fields; the config must still be an object
    return {};
  },
  create: (helper) => new RoundRobin(helper),
};
