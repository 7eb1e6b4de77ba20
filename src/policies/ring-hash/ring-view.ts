import { type ConnectivityState, type Picker, queuePicker } from '../../core/index.js';
import type { Ring } from './ring.js';

// Endpoint states as the picker reads them.
export const STATE_IDLE = 0;
export const STATE_CONNECTING = 1;
export const STATE_READY = 2;
export const STATE_TRANSIENT_FAILURE = 3;

/**
 * What ring_hash's pickers read, kept current by the policy for one endpoint list (A42 "Picker": a policy may
 * synchronize endpoint state with its picker instead of building a new picker per state change). A child report
 * writes one endpoint's state and picker in place, so it allocates nothing and no snapshot; the pickers built
 * for the list all read the same view. An update makes a new view, and the old one is written no more, so
 * pickers from before an update keep picking over their own list.
 */
export class RingView {
  /** Per endpoint (ring endpoint index): its state as `STATE_*`. */
  readonly states: Uint8Array;
  /**
   * Per endpoint: its child's latest picker when READY or TRANSIENT_FAILURE; the queuing picker otherwise (the
   * walk queues there and never asks it).
   */
  readonly pickers: Picker[];
  /** Whether every endpoint with ring entries is in TRANSIENT_FAILURE. */
  allFailed = false;

  /**
   * @param ring     the ring of this endpoint list
   * @param header   A76 request hash header, or '' to take `PickArgs.hash`
   * @param counts   the policy's live count of endpoints per state: whether some endpoint is CONNECTING now
   *                 (A76 random-hash walk)
   * @param connect  asks the policy to connect an endpoint; it must not act before the pick returns
   * @param random   the policy's random source, for calls without the header
   */
  constructor(
    readonly ring: Ring,
    readonly header: string,
    readonly counts: Readonly<Record<ConnectivityState, number>>,
    readonly connect: (endpoint: number) => void,
    readonly random: () => number,
  ) {
    const n = ring.entriesPerEndpoint.length;
    this.states = new Uint8Array(n);
    // Pushed, not `new Array(n).fill(…)`: that array stays holey, and every read on the pick path would check
    // for a hole.
    const pickers: Picker[] = [];
    for (let e = 0; e < n; e++) pickers.push(queuePicker);
    this.pickers = pickers;
  }

  /** Records endpoint `e`'s state and its child's picker. */
  set(e: number, state: ConnectivityState, picker: Picker): void {
    switch (state) {
      case 'READY':
        this.states[e] = STATE_READY;
        this.pickers[e] = picker;
        return;
      case 'TRANSIENT_FAILURE':
        this.states[e] = STATE_TRANSIENT_FAILURE;
        this.pickers[e] = picker;
        return;
      case 'CONNECTING':
        this.states[e] = STATE_CONNECTING;
        this.pickers[e] = queuePicker;
        return;
      default:
        this.states[e] = STATE_IDLE;
        this.pickers[e] = queuePicker;
    }
  }
}
