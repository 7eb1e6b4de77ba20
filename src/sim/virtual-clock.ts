import type { CancelTimer, Clock } from '../core/index.js';

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/**
 * Virtual time. Timers run only inside `advance` / `runDue`, in (time, creation order), synchronously, so a
 * scenario replays identically every time and a 15-minute timer costs nothing to wait for.
 */
export class VirtualClock implements Clock {
  private current = 0;
  private seq = 0;
  private depth = 0;
  private readonly heap: Timer[] = [];
  /**
   * How much later than asked a timer set now for `delayMs` runs (default: on time). A replayed recording sets
   * it to the lateness the recorded channel's timers had.
   */
  lateness: ((delayMs: number, now: number) => number) | null = null;

  now(): number {
    return this.current;
  }

  setTimer(delayMs: number, fn: () => void): CancelTimer {
    const late = this.lateness === null ? 0 : this.lateness(delayMs, this.current);
    const timer: Timer = {
      at: this.current + Math.max(0, delayMs) + late,
      seq: this.seq++,
      fn,
      cancelled: false,
    };
    this.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /** Whether a timer is running now (an `advance` or `runDue` is under way further up the stack). */
  get running(): boolean {
    return this.depth > 0;
  }

  /** Timers not yet run or cancelled. */
  get pendingTimers(): number {
    return this.heap.filter((t) => !t.cancelled).length;
  }

  /** Runs every timer due at the current time, including ones those timers add for the same instant. */
  runDue(): void {
    this.runUntil(this.current);
  }

  /** Moves time forward by `ms`, running each timer at its own instant. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`cannot advance by ${ms} ms`);
    this.runUntil(this.current + ms);
  }

  private runUntil(end: number): void {
    for (;;) {
      const top = this.heap[0];
      if (!top || top.at > end) break;
      this.pop();
      if (top.cancelled) continue;
      this.current = top.at;
      this.depth++;
      try {
        top.fn();
      } finally {
        this.depth--;
      }
    }
    this.current = end;
  }

  private less(a: Timer, b: Timer): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(t: Timer): void {
    const h = this.heap;
    h.push(t);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}
