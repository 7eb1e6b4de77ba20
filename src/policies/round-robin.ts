import {
  ConfigReader,
  type PickArgs,
  type Picker,
  type PickResult,
  type PolicyFactory,
} from '../core/index.js';
import type { EndpointChild } from './endpoint-list.js';
import { EagerPetiole } from './petiole.js';

export const ROUND_ROBIN = 'round_robin';

/** Rotates over the READY children's pickers, starting at a random one so clients spread their first calls. */
export class RoundRobinPicker implements Picker {
  private next: number;
  /** Children's constant results (a READY pick_first's), returned without calling their pickers. */
  private readonly results: readonly (PickResult | undefined)[];
  constructor(
    private readonly pickers: readonly Picker[],
    start: number,
  ) {
    this.next = start % pickers.length;
    this.results = pickers.map((p) => p.constantResult);
  }
  pick(args: PickArgs): PickResult {
    const i = this.next;
    if (++this.next === this.pickers.length) this.next = 0;
    return this.results[i] ?? this.pickers[i]!.pick(args);
  }
}

/**
 * round_robin as an A61 petiole: one pick_first child per endpoint, calls rotated over the READY ones. The
 * connectivity management and state rules are the shared {@link EagerPetiole}'s.
 */
export class RoundRobin extends EagerPetiole<object> {
  protected readyPicker(ready: EndpointChild[]): Picker {
    const pickers: Picker[] = new Array(ready.length);
    for (let i = 0; i < ready.length; i++) pickers[i] = ready[i]!.picker;
    const start = Math.floor(this.helper.random() * pickers.length);
    return new RoundRobinPicker(pickers, start);
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
