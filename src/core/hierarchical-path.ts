import { Attributes } from './attributes.js';
import type { Endpoint } from './endpoint.js';
import { HIERARCHICAL_PATH } from './endpoint-attributes.js';
import { workMeter } from './work-meter.js';

/**
 * A56 "Hierarchical Addresses": a multi-child policy sends each endpoint to the child named by the first
 * element of its path, with that element removed. Shared by every multi-child policy (priority,
 * weighted_target, ...), so each level of a tree peels exactly one name.
 */

/** What a child with no endpoints receives: the same frozen empty list every time. */
export const NO_ENDPOINTS: readonly Endpoint[] = Object.freeze([]);

/**
 * An endpoint list split by the first element of each endpoint's path. Endpoints without a path (or with an
 * empty one) are dropped at this level. A child's share is stripped of that element when asked for, and once:
 * priority asks only for the children it has created, so the endpoints of priorities it never uses cost one
 * Map lookup each. (A parent that hands every child its share at once, weighted_target, deals them with
 * {@link dealEndpoints} instead: no Map of its own per update.)
 */
export class HierarchicalSplit {
  private readonly stripped = new Map<string, readonly Endpoint[]>();

  private constructor(private readonly byChild: ReadonlyMap<string, Endpoint[]>) {}

  static of(endpoints: readonly Endpoint[]): HierarchicalSplit {
    const byChild = new Map<string, Endpoint[]>();
    let lastName: string | undefined;
    let lastList: Endpoint[] | undefined;
    workMeter.visits += endpoints.length;
    for (const e of endpoints) {
      const path = e.attributes.get(HIERARCHICAL_PATH);
      if (path === undefined || path.length === 0) continue;
      const name = path[0]!;
      // Endpoints of one child usually come together: skip the lookup while the name repeats.
      if (name !== lastName) {
        lastName = name;
        lastList = byChild.get(name);
        if (lastList === undefined) {
          // Made holding its first endpoint: an empty array's first push reserves 17 slots, and one endpoint
          // per child (a locality or target per endpoint) is a common shape.
          lastList = [e];
          byChild.set(name, lastList);
          continue;
        }
      }
      lastList!.push(e);
    }
    return new HierarchicalSplit(byChild);
  }

  /** The child names that at least one endpoint names, in first-seen order. */
  names(): IterableIterator<string> {
    return this.byChild.keys();
  }

  /** One child's endpoints with the first path element removed; a child no endpoint names gets []. */
  forChild(name: string): readonly Endpoint[] {
    const stripped = this.stripped;
    let list = stripped.get(name);
    if (list === undefined) {
      const original = this.byChild.get(name);
      list = original === undefined ? NO_ENDPOINTS : stripAll(original);
      stripped.set(name, list);
    }
    return list;
  }
}

/**
 * Which child an endpoint goes to, for a parent that names its children's endpoints otherwise than by path
 * (xds_wrr_locality: by locality): the child's name, or undefined to drop the endpoint. Such an endpoint goes
 * to its child as it is.
 */
export type ChildOf = (endpoint: Endpoint) => string | undefined;

/**
 * Hands each endpoint to `take` with the name of the child it goes to, for a parent that gives every child its
 * share at once (weighted_target), so the parent collects each share straight into its own child record: no
 * Map of names per update. By default an endpoint goes to the child its path names first, stripped of that
 * name (A56), and one without a path is dropped; with `childOf`, to the child that names, as it is. Endpoints
 * that share one Attributes object are routed once.
 */
export function dealEndpoints(
  endpoints: readonly Endpoint[],
  childOf: ChildOf | undefined,
  take: (name: string, endpoint: Endpoint) => void,
): void {
  const stripper = childOf === undefined ? new PathStripper() : null;
  let lastIn: Attributes | undefined;
  let name: string | undefined;
  workMeter.visits += endpoints.length;
  // Indexed, not for-of: the loop calls out per endpoint, and V8 then keeps an iterator result per step.
  for (let i = 0; i < endpoints.length; i++) {
    const e = endpoints[i]!;
    if (e.attributes !== lastIn) {
      lastIn = e.attributes;
      name = childOf === undefined ? e.attributes.get(HIERARCHICAL_PATH)?.[0] : childOf(e);
    }
    if (name !== undefined) take(name, stripper === null ? e : stripper.strip(e));
  }
}

/** Splits a list by first path element; see {@link HierarchicalSplit}. */
export function splitByHierarchicalPath(endpoints: readonly Endpoint[]): HierarchicalSplit {
  return HierarchicalSplit.of(endpoints);
}

function stripAll(endpoints: readonly Endpoint[]): Endpoint[] {
  const out: Endpoint[] = new Array(endpoints.length);
  const stripper = new PathStripper();
  workMeter.visits += endpoints.length;
  for (let i = 0; i < endpoints.length; i++) out[i] = stripper.strip(endpoints[i]!);
  return out;
}

/**
 * Strips the first path element off endpoint after endpoint. Endpoints that share one Attributes object (a
 * resolver building one per locality) share the result, and so do endpoints whose only attribute is the same
 * path (the common xDS shape): then the next level down sees one Attributes object per child, and the leaves
 * see the shared empty set.
 */
class PathStripper {
  private lastIn: Attributes | undefined;
  private lastOut: Attributes | undefined;
  private pathOnly: Map<string, Attributes> | undefined;

  strip(e: Endpoint): Endpoint {
    const attributes = e.attributes;
    if (attributes !== this.lastIn) {
      this.lastIn = attributes;
      const path = attributes.size === 1 ? attributes.get(HIERARCHICAL_PATH) : undefined;
      if (path !== undefined && path.length > 1) {
        const key = path.length === 2 ? path[1]! : path.slice(1).join(PATH_SEPARATOR);
        this.pathOnly ??= new Map();
        let out = this.pathOnly.get(key);
        if (out === undefined) {
          out = stripAttributes(attributes);
          this.pathOnly.set(key, out);
        }
        this.lastOut = out;
      } else {
        this.lastOut = stripAttributes(attributes);
      }
    }
    return { addresses: e.addresses, attributes: this.lastOut! };
  }
}

// Cannot occur in a child name that means anything: joins path tails into one Map key.
const PATH_SEPARATOR = '\u0000';

/** The endpoint as the child named by its first path element sees it: the path without that element. */
export function stripFirstPathElement(e: Endpoint): Endpoint {
  return { addresses: e.addresses, attributes: stripAttributes(e.attributes) };
}

function stripAttributes(attributes: Attributes): Attributes {
  const path = attributes.get(HIERARCHICAL_PATH);
  if (path === undefined) return attributes;
  // An exhausted path is removed rather than left as []: both mean "no path" to any policy below, and a
  // leaf endpoint's attributes then often collapse to the shared empty set, which children further down
  // recognise by identity as unchanged.
  if (path.length > 1) return attributes.with(HIERARCHICAL_PATH, path.slice(1));
  return attributes.size === 1 ? Attributes.EMPTY : attributes.without(HIERARCHICAL_PATH);
}
