import {
  ConfigReader,
  type PickArgs,
  type Picker,
  type PickResult,
  type PolicyFactory,
} from '../core/index.js';
import type { EndpointChild } from './shared/endpoint-list.js';
import { EagerPetiole } from './shared/petiole.js';
import { ArraySnapshot, type SnapshotArray } from './shared/snapshot-array.js';

export const ROUND_ROBIN = 'round_robin';

/** A child whose picker has no constant result: the round_robin picker asks it per pick. */
export class DelegatingEntry {
  readonly type = 'delegate';
  constructor(readonly picker: Picker) {}
}

/**
 * A READY child as the round_robin picker keeps it: its constant result (a READY pick_first's, returned as it
 * is: one array read per pick, no call and no extra cache miss), else its picker.
 */
export type RoundRobinEntry = PickResult | DelegatingEntry;

export function roundRobinEntry(picker: Picker): RoundRobinEntry {
  return picker.constantResult ?? new DelegatingEntry(picker);
}

/**
 * Rotates over the READY children, starting at a random one so clients spread their first calls. The picker
 * is itself a snapshot of the policy's READY set (made by its SnapshotArray): a report makes one object, not a
 * picker and a snapshot.
 */
export class RoundRobinPicker extends ArraySnapshot<RoundRobinEntry> implements Picker {
  private cursor: number;
  /** @internal Made through `SnapshotArray.snapshotWith`. */
  constructor(items: readonly RoundRobinEntry[], length: number, start: number) {
    super(items, length);
    this.cursor = start % length;
  }
  pick(args: PickArgs): PickResult {
    const i = this.cursor;
    if (++this.cursor === this.length) this.cursor = 0;
    const entry = this.at(i);
    return entry.type === 'delegate' ? entry.picker.pick(args) : entry;
  }
}

const roundRobinPicker = (
  items: readonly RoundRobinEntry[],
  length: number,
  start: number,
): RoundRobinPicker => new RoundRobinPicker(items, length, start);

/**
 * round_robin as an A61 petiole: one pick_first child per endpoint, calls rotated over the READY ones. The
 * connectivity management and state rules are the shared {@link EagerPetiole}'s.
 */
export class RoundRobin extends EagerPetiole<object, RoundRobinEntry> {
  protected get policyName(): string {
    return ROUND_ROBIN;
  }

  protected entryFor(child: EndpointChild, into: RoundRobinEntry[]): void {
    into[0] = roundRobinEntry(child.picker);
  }

  protected readyPickerOf(entries: SnapshotArray<RoundRobinEntry>): Picker {
    const start = Math.floor(this.helper.random() * entries.length);
    return entries.snapshotWith(roundRobinPicker, start);
  }

  /** Rotating over one child picks what its own picker picks, every time. */
  protected override onlyReadyPicker(child: EndpointChild): Picker {
    return child.picker;
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
