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
 * empty one) are dropped at this level. A child's share is stripped of that element only when asked for, and
 * once: priority asks only for the children it has created, so the endpoints of priorities it never uses
 * cost one Map lookup each.
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
    let list = this.stripped.get(name);
    if (list === undefined) {
      const original = this.byChild.get(name);
      list = original === undefined ? NO_ENDPOINTS : stripAll(original);
      this.stripped.set(name, list);
    }
    return list;
  }
}

/** Splits a list by first path element; see {@link HierarchicalSplit}. */
export function splitByHierarchicalPath(endpoints: readonly Endpoint[]): HierarchicalSplit {
  return HierarchicalSplit.of(endpoints);
}

function stripAll(endpoints: readonly Endpoint[]): Endpoint[] {
  const out: Endpoint[] = new Array(endpoints.length);
  // Endpoints that share one Attributes object (a resolver building one per locality) share the result, and
  // so do endpoints whose only attribute is the same path (the common xDS shape): then the next level down
  // sees one Attributes object per child, and the leaves see the shared empty set.
  let lastIn: Attributes | undefined;
  let lastOut: Attributes | undefined;
  let pathOnly: Map<string, Attributes> | undefined;
  workMeter.visits += endpoints.length;
  for (let i = 0; i < endpoints.length; i++) {
    const e = endpoints[i]!;
    const attributes = e.attributes;
    if (attributes !== lastIn) {
      lastIn = attributes;
      const path = attributes.size === 1 ? attributes.get(HIERARCHICAL_PATH) : undefined;
      if (path !== undefined && path.length > 1) {
        const key = path.length === 2 ? path[1]! : path.slice(1).join(PATH_SEPARATOR);
        pathOnly ??= new Map();
        lastOut = pathOnly.get(key);
        if (lastOut === undefined) {
          lastOut = stripAttributes(attributes);
          pathOnly.set(key, lastOut);
        }
      } else {
        lastOut = stripAttributes(attributes);
      }
    }
    out[i] = { addresses: e.addresses, attributes: lastOut! };
  }
  return out;
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
