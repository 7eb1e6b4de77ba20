// Waiting for a real channel to settle: RPCs are sent one after another until the most recent ones satisfy a
// condition, or a deadline passes. Tests wait for the condition, never for a fixed time.
import { type BackendClientType, whoami } from '../../src/cli/loopback-backends.js';

export interface RpcWindowOptions {
  /** How many of the latest answers the condition looks at; default 20. */
  readonly window?: number;
  readonly deadlineMs?: number;
  /** Request headers for every RPC. */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Sends Whoami RPCs (wait-for-ready) until `settled(latest)` holds for the last `window` backend names;
 * returns them. Throws after the deadline with the last names seen and the last error.
 */
export async function rpcsUntil(
  client: BackendClientType,
  settled: (latest: readonly string[]) => boolean,
  options: RpcWindowOptions = {},
): Promise<string[]> {
  const window = options.window ?? 20;
  const deadline = Date.now() + (options.deadlineMs ?? 20_000);
  const latest: string[] = [];
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const name = await whoami(client, {
        waitForReady: true,
        deadlineMs: Math.max(100, Math.min(5000, deadline - Date.now())),
        ...(options.headers ? { headers: options.headers } : {}),
      });
      latest.push(name);
      if (latest.length > window) latest.shift();
      if (latest.length === window && settled(latest)) return latest;
    } catch (e) {
      lastError = e;
    }
  }
  throw new Error(
    `RPCs did not settle: last answers ${JSON.stringify(latest)}; last error ${(lastError as Error | undefined)?.message ?? 'none'}`,
  );
}

/** A condition: every one of the latest answers is in `names`, and each of `names` answered. */
export const servedByExactly =
  (names: readonly string[]) =>
  (latest: readonly string[]): boolean =>
    latest.every((n) => names.includes(n)) && names.every((n) => latest.includes(n));
