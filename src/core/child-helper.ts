import type { Address } from './address.js';
import type { Attributes } from './attributes.js';
import type { Clock } from './clock.js';
import type { ConnectionPacer } from './connection-pacer.js';
import type { ConnectivityState } from './connectivity-state.js';
import type { Helper, Trace } from './load-balancer.js';
import type { MetricsRecorder } from './metrics-recorder.js';
import type { Picker } from './picker.js';
import type { Status } from './status.js';
import type { Subchannel } from './subchannel.js';
import type { UpdateTurns } from './update-turns.js';

type Overrides = Partial<
  Pick<Helper, 'createSubchannel' | 'updateState' | 'requestReresolution' | 'trace' | 'updateWakeable'>
>;

const RANDOM: unique symbol = Symbol('lbtree.helper.random');
type WithRandom = Helper & { readonly [RANDOM]?: () => number };

/**
 * `helper.random` as a standalone function, for pickers that call it on every pick. Child helpers never
 * change randomness, so a whole chain of them shares one function bound to the first helper that is not a
 * child helper: a pick deep in the tree costs one bound call, not one per level. A helper whose `random` is
 * `Math.random` itself (grpc-js's adapter) gets `Math.random` back, unbound: it needs no receiver, and every
 * tree of every channel then calls the same function, so a picker's optimized code inlines it and is not
 * thrown away when one channel's tree is dropped (a bound copy per tree made that call site megamorphic).
 */
export function randomOf(helper: Helper): () => number {
  const own = (helper as WithRandom)[RANDOM];
  if (own !== undefined) return own;
  const random = helper.random;
  return random === Math.random ? random : random.bind(helper);
}

/** A helper for one child: the parent's helper with some methods intercepted. */
export function childHelper(parent: Helper, overrides: Overrides): Helper {
  const random = randomOf(parent);
  const helper: WithRandom = {
    createSubchannel:
      overrides.createSubchannel ?? ((address, attributes) => parent.createSubchannel(address, attributes)),
    updateState:
      overrides.updateState ?? ((state, status, picker) => parent.updateState(state, status, picker)),
    requestReresolution: overrides.requestReresolution ?? (() => parent.requestReresolution()),
    clock: parent.clock,
    random,
    trace: overrides.trace ?? parent.trace,
    get metricsRecorder() {
      return parent.metricsRecorder;
    },
    get updateTurns() {
      return parent.updateTurns;
    },
    get connectionPacer() {
      return parent.connectionPacer;
    },
    // Not forwarded unless asked: a parent of several children must combine what they say.
    updateWakeable: overrides.updateWakeable,
    [RANDOM]: random,
  };
  return helper;
}

/**
 * A child's helper as a class: the parent's helper, with `updateState` (and whatever else a subclass overrides)
 * intercepted. Methods on a prototype instead of a fresh object of closures each, and the parent's clock and
 * trace read through it rather than copied into every instance. The parent's helper and randomness are read
 * through `parent` and `parentRandom`: {@link ForwardingHelper} keeps them as fields, while a class made by
 * the ten thousand (weighted_target's per-target records) reaches them through an object it keeps anyway.
 */
export abstract class HelperForwarder implements Helper {
  /** The parent's helper, which everything but `updateState` goes to. */
  protected abstract readonly parent: Helper;
  /** `randomOf(parent)`. */
  protected abstract readonly parentRandom: () => number;

  get [RANDOM](): () => number {
    return this.parentRandom;
  }

  get clock(): Clock {
    return this.parent.clock;
  }

  get trace(): Trace {
    return this.parent.trace;
  }

  get metricsRecorder(): MetricsRecorder | undefined {
    return this.parent.metricsRecorder;
  }

  get updateTurns(): UpdateTurns | undefined {
    return this.parent.updateTurns;
  }

  get connectionPacer(): ConnectionPacer | undefined {
    return this.parent.connectionPacer;
  }

  random(): number {
    return this.parentRandom();
  }

  abstract updateState(state: ConnectivityState, status: Status, picker: Picker): void;

  createSubchannel(address: Address, attributes: Attributes): Subchannel {
    return this.parent.createSubchannel(address, attributes);
  }

  requestReresolution(): void {
    this.parent.requestReresolution();
  }
}

/** A {@link HelperForwarder} that keeps its parent's helper (and randomness) itself. */
export abstract class ForwardingHelper extends HelperForwarder {
  protected readonly parentRandom: () => number;

  /** `random`: `randomOf(parent)`, when the caller has it already (a parent making thousands of these). */
  constructor(
    protected readonly parent: Helper,
    random: () => number = randomOf(parent),
  ) {
    super();
    this.parentRandom = random;
  }
}
