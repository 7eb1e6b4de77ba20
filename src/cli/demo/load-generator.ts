import { type ServiceError, status } from '@grpc/grpc-js';
import { count } from '../count.js';
import { type BackendClientType, whoami } from '../loopback-backends.js';

/**
 * Steady RPC load on one client: `concurrency` loops of wait-for-ready Whoami calls, paced to about
 * `ratePerSecond` in total, counting where each RPC landed and every failure.
 */
export class LoadGenerator {
  readonly served = new Map<string, number>();
  /** With a `keyHeader`: RPCs per `key backend` pair (where each user's requests went). */
  readonly routes = new Map<string, number>();
  failures = 0;
  /** The last failure's status, as a sentence: `CANCELLED (code 1): Call cancelled`. */
  lastFailure = '';
  private running = false;
  private issued = 0;
  private workers: Promise<void>[] = [];

  constructor(
    private readonly client: BackendClientType,
    private readonly ratePerSecond = 200,
    private readonly concurrency = 4,
    /** Headers for the n-th request (e.g. a user id that ring_hash hashes). */
    private readonly headersFor?: (n: number) => Record<string, string>,
    /** The header of `headersFor` whose value `routes` records. */
    private readonly keyHeader?: string,
  ) {}

  get total(): number {
    let n = 0;
    for (const v of this.served.values()) n += v;
    return n;
  }

  start(): void {
    this.running = true;
    const pauseMs = (1000 * this.concurrency) / this.ratePerSecond;
    for (let i = 0; i < this.concurrency; i++) {
      this.workers.push(
        (async () => {
          while (this.running) {
            const started = Date.now();
            try {
              const headers = this.headersFor?.(this.issued++);
              const name = await whoami(this.client, {
                waitForReady: true,
                deadlineMs: 10_000,
                ...(headers ? { headers } : {}),
              });
              this.served.set(name, (this.served.get(name) ?? 0) + 1);
              const key = this.keyHeader && headers?.[this.keyHeader];
              if (key) this.routes.set(`${key} ${name}`, (this.routes.get(`${key} ${name}`) ?? 0) + 1);
            } catch (e) {
              this.failures++;
              const error = e as ServiceError;
              this.lastFailure = `${status[error.code] ?? 'UNKNOWN'} (code ${error.code}): ${error.details}`;
            }
            const wait = pauseMs - (Date.now() - started);
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          }
        })(),
      );
    }
  }

  /** Stops issuing RPCs and waits for those in flight. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
    this.workers = [];
  }

  /** `2 RPCs in flight on <where> failed` plus the last status, or '' when none failed. */
  describeFailures(where: string): string {
    if (this.failures === 0) return '';
    return `${count(this.failures, 'RPC')} in flight on ${where} failed; the last error was ${this.lastFailure}`;
  }

  snapshot(): Map<string, number> {
    return new Map(this.served);
  }
}
