/**
 * What outlier detection knows of one endpoint (A61: keyed by its unordered address set, so every address
 * of the endpoint counts towards, and is ejected with, the same state).
 */
export class EndpointOutlierState {
  /** A50 "Call Counter": the active bucket takes finished calls; the inactive one holds the last interval. */
  private activeSuccesses = 0;
  private activeFailures = 0;
  lastSuccesses = 0;
  lastFailures = 0;
  /** When this endpoint was last ejected (clock ms), or null when it is not ejected. */
  ejectedAt: number | null = null;
  /** A50 "ejection time multiplier": grows with each ejection, shrinks each interval it stays in. */
  multiplier = 0;

  constructor(
    /** The endpoint's address keys, in the order of its latest update. */
    public addressKeys: readonly string[],
  ) {}

  get ejected(): boolean {
    return this.ejectedAt !== null;
  }

  get lastVolume(): number {
    return this.lastSuccesses + this.lastFailures;
  }

  recordCall(success: boolean): void {
    if (success) this.activeSuccesses++;
    else this.activeFailures++;
  }

  /** A50 timer step 2: the active bucket becomes the interval's result and a zeroed bucket takes new calls. */
  swapBuckets(): void {
    this.lastSuccesses = this.activeSuccesses;
    this.lastFailures = this.activeFailures;
    this.activeSuccesses = 0;
    this.activeFailures = 0;
  }

  resetCounters(): void {
    this.activeSuccesses = 0;
    this.activeFailures = 0;
    this.lastSuccesses = 0;
    this.lastFailures = 0;
  }
}
