import type { PolicyNode } from '../core/index.js';

/**
 * The recent share of picks of each subchannel of one channel: the picks counters (integers the adapter adds
 * to per pick) read at two moments, at least `windowMs` apart. A share is the subchannel's picks in the latest
 * window over all the channel's picks in it; the first window runs from the channel's start.
 */
export class PickShares {
  private previous = new Map<string, number>();
  private shares = new Map<string, number>();
  private sampledAt = Number.NEGATIVE_INFINITY;
  private windowStart: number;
  private windowEnd: number;
  private windowPicks = 0;

  constructor(
    private readonly windowMs: number,
    startedAt: number,
  ) {
    this.windowStart = startedAt;
    this.windowEnd = startedAt;
  }

  /** Reads the counters of `tree` if the last reading is `windowMs` old, then returns the latest window. */
  sample(tree: PolicyNode | undefined, now: number): PickWindow {
    if (tree !== undefined && now - this.sampledAt >= this.windowMs) {
      const counts = new Map<string, number>();
      collectPicks(tree, '', counts);
      let total = 0;
      const deltas = new Map<string, number>();
      for (const [key, picks] of counts) {
        // A new subchannel (or a new handle at the same place) starts from 0.
        const before = this.previous.get(key) ?? 0;
        const delta = picks >= before ? picks - before : picks;
        deltas.set(key, delta);
        total += delta;
      }
      this.shares = new Map();
      if (total > 0) for (const [key, delta] of deltas) this.shares.set(key, delta / total);
      this.previous = counts;
      if (this.sampledAt !== Number.NEGATIVE_INFINITY) this.windowStart = this.sampledAt;
      this.sampledAt = now;
      this.windowEnd = now;
      this.windowPicks = total;
    }
    return { from: this.windowStart, to: this.windowEnd, picks: this.windowPicks, shares: this.shares };
  }
}

/** Picks in one window, and each subchannel's share of them by its {@link subchannelKey}. */
export interface PickWindow {
  readonly from: number;
  readonly to: number;
  readonly picks: number;
  readonly shares: ReadonlyMap<string, number>;
}

/** Where a subchannel sits in the tree: the child names down to it, and its address. */
export function subchannelKey(path: string, address: string): string {
  return `${path}|${address}`;
}

/** The path of `child` below a node at `path`. */
export function childPath(path: string, child: string): string {
  return `${path}/${child}`;
}

function collectPicks(node: PolicyNode, path: string, into: Map<string, number>): void {
  for (const s of node.subchannels ?? []) {
    if (s.picks !== undefined) into.set(subchannelKey(path, s.address), s.picks);
  }
  for (const c of node.children ?? []) collectPicks(c.node, childPath(path, c.name), into);
}
