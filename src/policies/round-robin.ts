import {
  ConfigReader,
  type PickArgs,
  type Picker,
  type PickResult,
  type PolicyFactory,
} from '../core/index.js';
import type { EndpointChild } from './endpoint-list.js';
import { EagerPetiole } from './petiole.js';
import type { ArraySnapshot } from './snapshot-array.js';

export const ROUND_ROBIN = 'round_robin';

/**
 * Rotates over the READY children's pickers, starting at a random one so clients spread their first calls.
 * The pickers are a snapshot of the policy's READY set, shared with the pickers built before and after it.
 */
export class RoundRobinPicker implements Picker {
  private next: number;
  private readonly n: number;
  constructor(
    private readonly pickers: ArraySnapshot<Picker>,
    start: number,
  ) {
    this.n = pickers.length;
    this.next = start % this.n;
  }
  pick(args: PickArgs): PickResult {
    const i = this.next;
    if (++this.next === this.n) this.next = 0;
    // A READY pick_first's result is constant: returned without calling its picker.
    const picker = this.pickers.at(i);
    return picker.constantResult ?? picker.pick(args);
  }
}

/**
 * round_robin as an A61 petiole: one pick_first child per endpoint, calls rotated over the READY ones. The
 * connectivity management and state rules are the shared {@link EagerPetiole}'s.
 */
export class RoundRobin extends EagerPetiole<object> {
  protected entryFor(child: EndpointChild): Picker {
    return child.picker;
  }

  protected readyPicker(ready: ArraySnapshot<Picker>): Picker {
    return new RoundRobinPicker(ready, Math.floor(this.helper.random() * ready.length));
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
