// The client side of ./xds-retry.e2e.test.ts's scenarios, shared by lbtree's channels (in the test process) and
// @grpc/grpc-js-xds's (./xds-retry-child.ts, in a child process), so both libraries run exactly the same calls.
// It loads nothing: the caller hands it the function that makes one call.

/** One scenario's calls on a channel to `xds:///service`. */
export interface RetryStep {
  readonly service: string;
  /**
   * Before counting, calls are sent until one was answered and one failed, so that both the ok and the failing
   * backend are in the rotation: `header` sends them with `x-warmup` (a route that does not retry), `plain`
   * without. `none`: no warm-up (a cluster with a single endpoint).
   */
  readonly warmUp: 'header' | 'plain' | 'none';
  /** The calls counted, sent one after another. */
  readonly calls: number;
  /** grpc-js's `grpc.enable_retries` channel option for this channel (default: unset, retries on). */
  readonly enableRetries?: 0;
}

export interface StepOutcome {
  /** Calls of the warm-up that failed: each one attempt on the failing backend (the warm-up never retries). */
  warmUpFailures: number;
  served: number;
  /** `code: details` of each failed call. */
  readonly failures: string[];
}

/** Makes one wait-for-ready call with `headers`; resolves with the backend's name or rejects with its status. */
export type Call = (headers: Record<string, string>) => Promise<string>;

/** The statuses of failed calls as `code: details`. */
export function describeFailure(e: unknown): string {
  const err = e as { code?: number; details?: string; message?: string };
  return `${err.code}: ${err.details ?? err.message}`;
}

/** The warm-up: calls until one was answered and one failed; returns how many failed. */
async function warmUp(step: RetryStep, call: Call): Promise<number> {
  if (step.warmUp === 'none') return 0;
  const headers: Record<string, string> = step.warmUp === 'header' ? { 'x-warmup': '1' } : {};
  const deadline = Date.now() + 15_000;
  const answers: string[] = [];
  let failures = 0;
  while (Date.now() < deadline) {
    try {
      answers.push(await call(headers));
    } catch {
      failures++;
    }
    if (answers.length > 0 && failures > 0) return failures;
  }
  throw new Error(
    `${step.service}: the warm-up did not see both an answer and a failure; ${failures} failed, answers ${JSON.stringify(answers.slice(-20))}`,
  );
}

/** Runs one step: the warm-up, then (after `beforeCounting`) `step.calls` calls one after another. */
export async function runStep(
  step: RetryStep,
  call: Call,
  beforeCounting: () => void = () => {},
): Promise<StepOutcome> {
  const warmUpFailures = await warmUp(step, call);
  beforeCounting();
  const outcome: StepOutcome = { warmUpFailures, served: 0, failures: [] };
  for (let i = 0; i < step.calls; i++) {
    try {
      await call({});
      outcome.served++;
    } catch (e) {
      outcome.failures.push(describeFailure(e));
    }
  }
  return outcome;
}
