// The public simulator entry. The engine (clock, fakes, recording helper) depends on core only; this entry
// also loads the policy layer so that `new Simulation()` comes with every lbtree policy registered.
import type { Registry } from '../core/index.js';
import { defaultRegistry } from '../policies/index.js';
import { Simulation as SimulationEngine, type SimulationOptions } from './simulation.js';

export { FakeOrcaServer } from './fake-orca-server.js';
export type { ConnectionScript } from './fake-subchannel.js';
export { FakeSubchannel, SubchannelHandle } from './fake-subchannel.js';
export type { EndpointInput, PlainEndpoint, PlainEndpointAttributes } from './plain-endpoints.js';
export { toEndpoint } from './plain-endpoints.js';
export { seededRandom } from './seeded-random.js';
export type { HistoryEntry, PlainMetadata, SimPickResult, SimulationOptions } from './simulation.js';
export { VirtualClock } from './virtual-clock.js';

/**
 * A simulation whose registry is a copy of the process-wide one (every lbtree policy and any added with
 * `registerPolicy`), or the registry given in `options.registry`.
 */
export class Simulation extends SimulationEngine {
  constructor(options: SimulationOptions & { registry?: Registry } = {}) {
    super(options.registry ?? defaultRegistry().clone(), options);
  }
}
