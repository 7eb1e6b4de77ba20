import type { CallMetadata } from '../core/index.js';

// A28 (which A42 points to for header matching): the channel adds content-type after routing, so it is
// assumed to be this.
const ASSUMED_CONTENT_TYPE = 'application/grpc';

/**
 * A request header as hash policies (A42) and ring_hash's request hash header (A76) read it: every value
 * joined with ",", or undefined when the call does not carry it.
 */
export function requestHeaderValue(metadata: CallMetadata, name: string): string | undefined {
  const values = metadata.get(name);
  let joined: string | undefined;
  for (const v of values) {
    if (typeof v !== 'string') continue;
    joined = joined === undefined ? v : `${joined},${v}`;
  }
  if (joined === undefined && name === 'content-type') return ASSUMED_CONTENT_TYPE;
  return joined;
}
