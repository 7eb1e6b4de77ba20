import type { ConnectivityState } from './connectivity-state.js';
import { OK_STATUS, type Status } from './status.js';

/** A fact a policy states about itself: what the live view prints beside the policy's name. */
export type PolicyFact = string | number | boolean | readonly string[] | readonly number[];

/** One subchannel a leaf holds, as the live view shows it. */
export interface SubchannelNode {
  readonly address: string;
  readonly state: ConnectivityState;
  /** Complete picks that returned this subchannel since it was made, where the channel counts them. */
  readonly picks?: number;
}

/** A child of a policy, under the name its parent knows it by (priority name, target, endpoint key, …). */
export interface ChildNode {
  readonly name: string;
  /** Facts the parent holds about this child (its weight, whether it is ejected, …). */
  readonly facts?: Readonly<Record<string, PolicyFact>>;
  readonly node: PolicyNode;
}

/**
 * A policy as it describes itself now ({@link Describable}): built on demand, never on the pick path. Plain
 * data, so it serialises to JSON as it is.
 */
export interface PolicyNode {
  readonly policy: string;
  readonly state: ConnectivityState;
  /** Why the state is what it is, when the policy reported a status other than OK. */
  readonly status?: Status;
  /** What is specific to the policy: the priority in use, the ring size, … */
  readonly facts?: Readonly<Record<string, PolicyFact>>;
  readonly children?: readonly ChildNode[];
  /** A leaf's subchannels (pick_first's attempts or its chosen connection). */
  readonly subchannels?: readonly SubchannelNode[];
}

/** A policy that can describe itself (optional on {@link LoadBalancer}, as `describe`). */
export interface Describable {
  describe(): PolicyNode;
}

/** `policy`'s own description, or a node naming only its policy and the state its parent last saw. */
export function describeChild(
  policy: object | null,
  fallbackName: string,
  state: ConnectivityState,
  status: Status = OK_STATUS,
): PolicyNode {
  const own = policy as Partial<Describable> | null;
  if (own !== null && typeof own.describe === 'function') return own.describe();
  return statusNode({ policy: fallbackName, state }, status);
}

/** `node` with `status` attached when it is not OK. */
export function statusNode<T extends PolicyNode>(node: T, status: Status): T {
  return status.code === 0 ? node : { ...node, status: { code: status.code, details: status.details } };
}
