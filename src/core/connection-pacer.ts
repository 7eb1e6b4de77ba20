/**
 * A connection request a policy hands to the {@link ConnectionPacer}: made now, or in a later turn if it is still
 * wanted then (pick_first's attempt on one address).
 */
export interface PacedConnection {
  /** Asks for the connection if it is still wanted; returns whether a request was made. */
  connectPaced(): boolean;
}

/** What the owner of a channel's root helper gives the {@link ConnectionPacer}. */
export interface ConnectionPacerHost {
  /** Runs `fn` in a later event-loop turn (the grpc-js adapter: setImmediate; the simulator: a virtual timer). */
  nextTurn(fn: () => void): void;
}

/**
 * Connection requests made per event-loop turn, all policies of a channel together. A refused connection costs
 * grpc-js a socket, two state changes and their channelz trace (about 0.1 ms on a quiet machine): 100 of them
 * keep a turn near 10 ms.
 */
export const CONNECTIONS_PER_TURN = 100;

/**
 * Spreads a channel's connection requests over event-loop turns (issue 25 §5). Thousands of refused endpoints
 * whose backoffs end together all go IDLE in one turn, and pick_first asks each to connect again (A62 sticky
 * TRANSIENT_FAILURE, A61 "request a connection whenever a subchannel reports IDLE"): made at once, every attempt of
 * the wave, and its refusal in the next poll phase, froze the loop for hundreds of ms, and the attempts' backoffs
 * then ended together again. The first `perTurn` requests of a turn are made at once, as without the pacer (a
 * small channel never waits); the rest wait for later turns, in the order they were made, and one whose policy
 * no longer wants it (released meanwhile) is dropped without a request. A request a turn later is still pick_first
 * asking for a connection when its subchannel went IDLE; what a user sees is a refused fleet's reconnects spread
 * out over turns instead of in one burst.
 *
 * Policies never schedule turns themselves: the helper's owner does, as for {@link UpdateTurns}.
 */
export class ConnectionPacer {
  /** Requests made in the running turn. */
  private made = 0;
  private turnScheduled = false;
  /** Requests waiting for a later turn, in order, from `next` on. */
  private queue: (PacedConnection | undefined)[] = [];
  private next = 0;

  constructor(
    private readonly host: ConnectionPacerHost,
    private readonly perTurn = CONNECTIONS_PER_TURN,
  ) {}

  /** How many requests wait for a later turn. */
  get waiting(): number {
    return this.queue.length - this.next;
  }

  /** Makes the request now if the turn's budget allows and none waits before it; else queues it. */
  request(connection: PacedConnection): void {
    if (this.next === this.queue.length && this.made < this.perTurn) {
      if (connection.connectPaced()) {
        this.made++;
        // The next turn starts a new count.
        this.scheduleTurn();
      }
      return;
    }
    this.queue.push(connection);
    this.scheduleTurn();
  }

  /** Drops every waiting request: the tree they were for is gone. */
  clear(): void {
    this.queue = [];
    this.next = 0;
  }

  private scheduleTurn(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    this.host.nextTurn(() => this.runTurn());
  }

  /** A new turn: a fresh count, and the waiting requests it has room for. */
  private runTurn(): void {
    this.turnScheduled = false;
    this.made = 0;
    const queue = this.queue;
    while (this.next < queue.length && this.made < this.perTurn) {
      const connection = queue[this.next]!;
      // Not kept alive by the queue once handled.
      queue[this.next++] = undefined;
      if (connection.connectPaced()) this.made++;
      // Cleared from inside the request (its tree went): nothing of this queue is wanted any more.
      if (this.queue !== queue) break;
    }
    if (this.next === queue.length) {
      this.queue = [];
      this.next = 0;
    }
    // Requests remain, or this turn made some: the next turn starts a new count.
    if (this.next < this.queue.length || this.made > 0) this.scheduleTurn();
  }
}
