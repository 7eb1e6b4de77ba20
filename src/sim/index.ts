// The public simulator entry. The engine (clock, fakes, recording helper) depends on core only; this entry
// also loads the policy layer and the xDS policies so that `new Simulation()` comes with every lbtree policy
// registered, and a cluster tree from `clusterToTree` (xds_cluster_impl, xds_override_host) runs as it is.
import type { Registry } from '../core/index.js';
import { defaultRegistry } from '../policies/index.js';
import { registerXdsPolicies } from '../xds/balancer/index.js';
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
 * `registerPolicy`) with the xDS policies, or the registry given in `options.registry`.
 */
export class Simulation extends SimulationEngine {
  constructor(options: SimulationOptions & { registry?: Registry } = {}) {
    super(options.registry ?? registerXdsPolicies(defaultRegistry().clone()), options);
  }
}
