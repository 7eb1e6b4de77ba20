import { type BackendClientType, whoami } from '../../src/cli/loopback-backends.js';

/** The names of the backends that served `n` Whoami calls made by `loops` concurrent callers (wait-for-ready). */
export async function concurrentCalls(client: BackendClientType, n: number, loops = 4): Promise<string[]> {
  const names: string[] = [];
  const run = async () => {
    while (names.length < n) names.push(await whoami(client, { waitForReady: true }));
  };
  await Promise.all(Array.from({ length: loops }, run));
  return names.slice(0, n);
}
