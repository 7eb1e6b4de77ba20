import type { CancelTimer } from './clock.js';
import type { ConnectivityState } from './connectivity-state.js';
import type { Picker } from './picker.js';
import type { Status } from './status.js';

/**
 * How a policy spreads a big update over event-loop turns (issue 25 §5: a 10,000-endpoint EDS push applied in
 * one turn stalled every call of the process). A policy takes what it may place now from the turn's budget and
 * hands the rest to `later`; while any such step waits, the channel keeps the picker it has, and it gets the
 * tree's latest one when the last step has run. So the channel never sees a picker of a half-applied update: it
 * sees the old one until the update is complete, then the one a one-turn update would have made.
 *
 * Policies never schedule turns themselves: the helper's owner does (the grpc-js adapter with setImmediate, the
 * simulator on its virtual clock), which keeps the simulator deterministic.
 */
export interface UpdateTurns {
  /**
   * How many of `want` endpoints an update may place in this turn: 0 when the turn's budget is spent, and in a
   * turn that runs no step (the one the update arrives in).
   */
  take(want: number): number;
  /** Runs `step` in a later turn (steps run in the order they were handed over); returns its cancellation. */
  later(step: () => void): CancelTimer;
  /**
   * Whether a list of `n` endpoints, fewer than {@link SPREAD_MIN_ENDPOINTS}, may be placed at once, in the
   * turn that is running: yes (and the turn's budget is charged `n`) while that turn has budget left; no once
   * the channel has placed its budget's worth in the turn, and the list then waits for a later turn like a big
   * one (100 localities of 100 endpoints are 10,000 endpoints placed in one turn otherwise).
   */
  placeNow(n: number): boolean;
}

/**
 * A petiole's list shorter than this is placed in the turn its update arrives in, exactly as before updates
 * were spread; a longer one in later turns, from their budget.
 */
export const SPREAD_MIN_ENDPOINTS = 500;

/**
 * Endpoints placed per turn by spread updates, all policies of a channel together; also what lists placed at
 * once may take of a turn before further lists wait for a later one ({@link UpdateTurns.placeNow}). A new
 * endpoint costs its pick_first and subchannel handle (about 15 µs on a quiet machine, 2–4× that under load), a
 * kept one a lookup.
 */
export const SPREAD_ENDPOINTS_PER_TURN = 1_000;

/** What the owner of a channel's root helper gives {@link UpdateTurnQueue}. */
export interface UpdateTurnHost {
  /** Runs `fn` in the next event-loop turn (the grpc-js adapter: setImmediate; the simulator: a virtual timer). */
  nextTurn(fn: () => void): void;
  /** Hands a picker to the channel. */
  publish(state: ConnectivityState, status: Status, picker: Picker): void;
}

interface Step {
  readonly run: () => void;
  cancelled: boolean;
}

/**
 * The {@link UpdateTurns} of one channel, at its root helper: the per-turn budget, the queue of waiting steps,
 * and the root's reports, held while a step waits.
 */
export class UpdateTurnQueue implements UpdateTurns {
  /** What is left of the running turn's budget. */
  private left = 0;
  private queue: Step[] = [];
  private next = 0;
  /** Steps queued and neither run nor cancelled: while any is, reports are held. */
  private waiting = 0;
  private scheduled = false;
  private held: { state: ConnectivityState; status: Status; picker: Picker } | null = null;
  /** Whether a turn of steps is running now. */
  private running = false;
  /** What is left for lists placed at once of the budget of a turn that runs no step (an update's own turn). */
  private leftNow: number;
  /** Whether the end of the turn that spent some of `leftNow` is scheduled (a fresh budget after it). */
  private refillScheduled = false;
  private readonly refill = (): void => {
    this.refillScheduled = false;
    this.leftNow = this.perTurn;
  };

  constructor(
    private readonly host: UpdateTurnHost,
    private readonly perTurn = SPREAD_ENDPOINTS_PER_TURN,
  ) {
    this.leftNow = perTurn;
  }

  /** Whether a step waits (reports are held meanwhile). */
  get spreading(): boolean {
    return this.waiting > 0;
  }

  take(want: number): number {
    // The turn an update arrives in has decoded and routed the whole list already: what it would place waits for
    // a turn of steps.
    if (!this.running) return 0;
    const granted = Math.min(want, this.left);
    this.left -= granted;
    return granted;
  }

  placeNow(n: number): boolean {
    if (this.running) {
      if (this.left <= 0) return false;
      this.left = Math.max(0, this.left - n);
      return true;
    }
    if (this.leftNow <= 0) return false;
    this.leftNow -= n;
    // The turn ends before the next one runs: the budget is full again then (scheduled only by a turn that
    // placed something, so a channel without updates schedules nothing).
    if (!this.refillScheduled) {
      this.refillScheduled = true;
      this.host.nextTurn(this.refill);
    }
    return true;
  }

  later(step: () => void): CancelTimer {
    const entry: Step = { run: step, cancelled: false };
    this.queue.push(entry);
    this.waiting++;
    this.schedule();
    return () => {
      if (entry.cancelled) return;
      entry.cancelled = true;
      // The held report goes out in a later turn if nothing else waits: never from inside the update that
      // cancelled (its own report comes next, and the one held may be of a half-applied update).
      if (--this.waiting === 0) this.schedule();
    };
  }

  /** Drops every waiting step and the held report: the tree they were for is gone. */
  clear(): void {
    for (let i = this.next; i < this.queue.length; i++) this.queue[i]!.cancelled = true;
    this.queue = [];
    this.next = 0;
    this.waiting = 0;
    this.held = null;
  }

  /** The root's report: handed on, or held while a step waits (the latest one wins). */
  updateState(state: ConnectivityState, status: Status, picker: Picker): void {
    if (this.waiting > 0) {
      this.held = { state, status, picker };
      return;
    }
    this.held = null;
    this.host.publish(state, status, picker);
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.host.nextTurn(() => this.runTurn());
  }

  /** One turn: a fresh budget, the waiting steps in order while it lasts. */
  private runTurn(): void {
    this.scheduled = false;
    this.running = true;
    this.left = this.perTurn;
    try {
      while (this.next < this.queue.length && this.left > 0) {
        const entry = this.queue[this.next++]!;
        if (entry.cancelled) continue;
        entry.cancelled = true;
        this.waiting--;
        entry.run();
      }
    } finally {
      this.running = false;
    }
    if (this.next === this.queue.length) {
      this.queue = [];
      this.next = 0;
    }
    if (this.waiting > 0) {
      this.schedule();
      return;
    }
    const held = this.held;
    if (held !== null) {
      this.held = null;
      this.host.publish(held.state, held.status, held.picker);
    }
  }
}
