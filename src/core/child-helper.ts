import type { Helper } from './load-balancer.js';

type Overrides = Partial<Pick<Helper, 'createSubchannel' | 'updateState' | 'requestReresolution' | 'trace'>>;

const RANDOM: unique symbol = Symbol('lbtree.helper.random');
type WithRandom = Helper & { readonly [RANDOM]?: () => number };

/**
 * `helper.random` as a standalone function, for pickers that call it on every pick. Child helpers never
 * change randomness, so a whole chain of them shares one function bound to the first helper that is not a
 * child helper: a pick deep in the tree costs one bound call, not one per level.
 */
export function randomOf(helper: Helper): () => number {
  return (helper as WithRandom)[RANDOM] ?? helper.random.bind(helper);
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
    [RANDOM]: random,
  };
  return helper;
}
