import type { Helper } from './load-balancer.js';

type Overrides = Partial<Pick<Helper, 'createSubchannel' | 'updateState' | 'requestReresolution' | 'trace'>>;

/** A helper for one child: the parent's helper with some methods intercepted. */
export function childHelper(parent: Helper, overrides: Overrides): Helper {
  return {
    createSubchannel:
      overrides.createSubchannel ?? ((address, attributes) => parent.createSubchannel(address, attributes)),
    updateState:
      overrides.updateState ?? ((state, status, picker) => parent.updateState(state, status, picker)),
    requestReresolution: overrides.requestReresolution ?? (() => parent.requestReresolution()),
    clock: parent.clock,
    random: () => parent.random(),
    trace: overrides.trace ?? parent.trace,
  };
}
