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
 * Map lookup each. A parent that asks for every child's share (weighted_target) splits with `stripNow`: each
 * endpoint is stripped as it is sorted, into the one list its child gets (no second list or Map per child).
 */
export class HierarchicalSplit {
  private readonly stripped: Map<string, readonly Endpoint[]> | null;

  private constructor(
    private readonly byChild: ReadonlyMap<string, Endpoint[]>,
    strippedAlready: boolean,
  ) {
    this.stripped = strippedAlready ? null : new Map();
  }

  static of(endpoints: readonly Endpoint[], stripNow = false): HierarchicalSplit {
    const byChild = new Map<string, Endpoint[]>();
    const stripper = stripNow ? new PathStripper() : null;
    let lastName: string | undefined;
    let lastList: Endpoint[] | undefined;
    workMeter.visits += endpoints.length;
    for (const original of endpoints) {
      const path = original.attributes.get(HIERARCHICAL_PATH);
      if (path === undefined || path.length === 0) continue;
      const e = stripper === null ? original : stripper.strip(original);
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
    return new HierarchicalSplit(byChild, stripNow);
  }

  /** The child names that at least one endpoint names, in first-seen order. */
  names(): IterableIterator<string> {
    return this.byChild.keys();
  }

  /** One child's endpoints with the first path element removed; a child no endpoint names gets []. */
  forChild(name: string): readonly Endpoint[] {
    const stripped = this.stripped;
    if (stripped === null) return this.byChild.get(name) ?? NO_ENDPOINTS;
    let list = stripped.get(name);
    if (list === undefined) {
      const original = this.byChild.get(name);
      list = original === undefined ? NO_ENDPOINTS : stripAll(original);
      stripped.set(name, list);
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
