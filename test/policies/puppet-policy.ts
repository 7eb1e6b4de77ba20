// A test-only policy whose state the test sets by hand, for checking parents (priority, weighted_target)
// rule by rule without going through subchannels. Registered beside every lbtree policy in a sim registry.
import {
  ConfigReader,
  type ConnectivityState,
  type Endpoint,
  FailPicker,
  type Helper,
  type LbUpdate,
  type LoadBalancer,
  OK_STATUS,
  type Picker,
  type PickResult,
  type PolicyFactory,
  Registry,
  type Status,
  unavailable,
} from '../../src/core/index.js';
import { registerAllPolicies } from '../../src/policies/index.js';
import { Simulation, type SimulationOptions } from '../../src/sim/index.js';

export interface PuppetConfig {
  readonly name: string;
  /** A state to report synchronously from inside every update. */
  readonly reportOnUpdate?: ConnectivityState;
}

/** One instance of the test policy. `picker` identifies it: parents pass a child's picker up unchanged. */
export class Puppet implements LoadBalancer<PuppetConfig> {
  state: ConnectivityState | null = null;
  /** The latest picker this puppet reported (null before its first report). */
  picker: Picker | null = null;
  readonly updates: LbUpdate<PuppetConfig>[] = [];
  /** For each update: how many states the channel had seen when it arrived. */
  readonly historyAtUpdate: number[] = [];
  exitIdleCalls = 0;
  resetBackoffCalls = 0;
  destroyed = false;

  constructor(
    readonly helper: Helper,
    private readonly world: PuppetWorld,
  ) {}

  get name(): string {
    return this.updates[0]?.config.name ?? '?';
  }

  /** The endpoints of the latest update, as address keys with their remaining paths. */
  get endpoints(): string[] {
    const last = this.updates.at(-1)?.endpoints;
    if (!last?.ok) return [];
    return last.value.map(describe);
  }

  update(update: LbUpdate<PuppetConfig>): boolean {
    this.historyAtUpdate.push(this.world.sim.history.length);
    this.updates.push(update);
    this.world.byName.set(update.config.name, this);
    if (update.config.reportOnUpdate) this.report(update.config.reportOnUpdate);
    return true;
  }

  /** Reports a state with a fresh picker; TRANSIENT_FAILURE carries `details` as its error. */
  report(state: ConnectivityState, details = `${this.name} failed`): void {
    const status: Status = state === 'TRANSIENT_FAILURE' ? unavailable(details) : OK_STATUS;
    this.state = state;
    this.picker = state === 'TRANSIENT_FAILURE' ? new FailPicker(status) : new PuppetPicker(state, this.name);
    this.helper.updateState(state, status, this.picker);
  }

  /** Says whether its exitIdle() would wake anything (Helper.updateWakeable); never said: taken as yes. */
  tellWakeable(wakeable: boolean): void {
    this.helper.updateWakeable?.(wakeable);
  }

  exitIdle(): void {
    this.exitIdleCalls++;
  }
  resetBackoff(): void {
    this.resetBackoffCalls++;
  }
  destroy(): void {
    this.destroyed = true;
  }
}

/**
 * READY picks are drops naming the puppet (so a test sees which child a parent picked); other states queue.
 */
class PuppetPicker implements Picker {
  private readonly result: PickResult;
  constructor(state: ConnectivityState, name: string) {
    this.result =
      state === 'READY' ? { type: 'drop', status: unavailable(`picked ${name}`) } : { type: 'queue' };
  }
  pick(): PickResult {
    return this.result;
  }
}

/** The puppet a READY pick went to, or the pick's type. */
export function pickedPuppet(sim: Simulation): string {
  const p = sim.pick();
  return p.type === 'drop' && p.status.details.startsWith('picked ') ? p.status.details.slice(7) : p.type;
}

function describe(e: Endpoint): string {
  const a = e.addresses[0] as { host: string; port: number };
  const path = [...e.attributes.keys()].find((k) => k.name === 'lbtree.hierarchical_path');
  const rest = path ? (e.attributes.get(path) as string[]) : undefined;
  return rest ? `${a.host}:${a.port} ${JSON.stringify(rest)}` : `${a.host}:${a.port}`;
}

export interface PuppetWorld {
  readonly sim: Simulation;
  /** The latest puppet created under each name. */
  readonly byName: Map<string, Puppet>;
  /** Every puppet ever created, in order. */
  readonly all: Puppet[];
  get(name: string): Puppet;
  /** The name of the puppet whose picker the channel is using, or the channel state if none. */
  current(): string;
}

export function puppetWorld(options: SimulationOptions = {}): PuppetWorld {
  const byName = new Map<string, Puppet>();
  const all: Puppet[] = [];
  const registry = registerAllPolicies(new Registry());
  const world: PuppetWorld = {
    sim: undefined as unknown as Simulation,
    byName,
    all,
    get(name) {
      const p = byName.get(name);
      if (!p) throw new Error(`no puppet named ${name} was created`);
      return p;
    },
    current() {
      for (const [name, p] of byName) if (!p.destroyed && p.picker === world.sim.picker) return name;
      return world.sim.state;
    },
  };
  const factory: PolicyFactory<PuppetConfig> = {
    name: 'puppet',
    parseConfig(json, path) {
      const reader = new ConfigReader(json, path);
      const name = reader.optionalString('name');
      if (name === undefined) throw new Error(`${path}: puppet needs a name`);
      const reportOnUpdate = reader.optionalString('reportOnUpdate') as ConnectivityState | undefined;
      return reportOnUpdate ? { name, reportOnUpdate } : { name };
    },
    create(helper) {
      const p = new Puppet(helper, world);
      all.push(p);
      return p;
    },
  };
  registry.register(factory);
  (world as { sim: Simulation }).sim = new Simulation({ ...options, registry });
  return world;
}

/** `[{ puppet: { name, ... } }]` */
export function puppet(name: string, extra: Partial<PuppetConfig> = {}): unknown[] {
  return [{ puppet: { name, ...extra } }];
}
