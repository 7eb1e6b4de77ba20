import { type BackendClientType, whoami } from '../../src/cli/loopback-backends.js';

type CallOptions = Parameters<typeof whoami>[1];

/**
 * The names of the backends that served `n` Whoami calls made by `loops` concurrent callers (wait-for-ready
 * unless `options` say otherwise); a failed call rejects the whole.
 */
export async function concurrentCalls(
  client: BackendClientType,
  n: number,
  loops = 4,
  options: CallOptions = { waitForReady: true },
): Promise<string[]> {
  const names: string[] = [];
  const run = async () => {
    while (names.length < n) names.push(await whoami(client, options));
  };
  await Promise.all(Array.from({ length: loops }, run));
  return names.slice(0, n);
}
