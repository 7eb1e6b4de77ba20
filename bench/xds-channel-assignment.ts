// The big assignment of the xds-channel benchmark, shared by the control plane side (bench/xds-channel.ts) and
// the grpc-js floor channel (bench/xds-channel-floor.ts), so both connect the same addresses in the same order.

export const LOCALITIES = 10;

/** Endpoint i of the big assignment on a closed loopback port (never 127.0.0.1, where the backends are). */
export const refusedAddress = (i: number): string => `127.${1 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}:1`;

/**
 * N addresses in LOCALITIES (or `count`) localities: the backends first in the first one, the marker last in the last one.
 * `shift` moves the window of refused addresses (shift 1: the first one gone, a new one at the end), so that
 * successive pushes differ as a changing fleet does.
 */
export function bigLocalities(
  n: number,
  backends: readonly string[],
  marker: string,
  shift = 0,
  count = LOCALITIES,
): string[][] {
  const localities: string[][] = Array.from({ length: count }, () => []);
  localities[0]!.push(...backends);
  const refused = n - backends.length - 1;
  for (let i = 0; i < refused; i++)
    localities[Math.floor((i * count) / refused)]!.push(refusedAddress(i + shift));
  localities[count - 1]!.push(marker);
  return localities;
}
