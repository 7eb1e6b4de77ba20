// A44 "Converting Envoy RetryPolicy to gRPC RetryPolicy": a RouteAction's or VirtualHost's retry_policy,
// validated (a NACK names the field) and converted to the terms of gRPC's retry policy (A6). Every other field
// of RetryPolicy (per_try_timeout, retry_host_predicate, retriable_status_codes, …) is ignored, as A44 says.

import { Code } from '../../core/index.js';
import type { RetryPolicy } from '../../protos/gen/envoy/config/route/v3/route_components_pb.js';
import type { XdsRetryPolicy } from './types.js';
import { durationMs, fail } from './validation.js';

/** A44: the retry_on conditions gRPC converts (the x-envoy-retry-grpc-on values); any other is ignored. */
const RETRY_ON_CODES: ReadonlyMap<string, Code> = new Map([
  ['cancelled', Code.CANCELLED],
  ['deadline-exceeded', Code.DEADLINE_EXCEEDED],
  ['internal', Code.INTERNAL],
  ['resource-exhausted', Code.RESOURCE_EXHAUSTED],
  ['unavailable', Code.UNAVAILABLE],
]);

/** A44, from Envoy's RetryPolicy documentation: num_retries when unset. */
const DEFAULT_NUM_RETRIES = 1;
/** A44, from Envoy's RetryBackOff documentation: base_interval when retry_back_off is unset. */
const DEFAULT_BASE_INTERVAL_MS = 25;
/** A44: max_interval defaults to this many times base_interval. */
const DEFAULT_MAX_INTERVAL_FACTOR = 10;
/** A44: intervals under 1 ms are treated as 1 ms. */
const MIN_INTERVAL_MS = 1;

/** The gRPC codes `retryOn` names, in the order first named (whitespace around a condition is trimmed). */
function retryableCodes(retryOn: string): Code[] {
  const codes: Code[] = [];
  for (const condition of retryOn.split(',')) {
    const code = RETRY_ON_CODES.get(condition.trim());
    if (code !== undefined && !codes.includes(code)) codes.push(code);
  }
  return codes;
}

/**
 * Validates and converts a retry_policy (`at` names the field). The result keeps an empty
 * `retryableStatusCodes` when retry_on names no supported condition: such a policy retries nothing, and on a
 * route it still replaces its virtual host's (A44: the route's policy, if given, is the one used).
 */
export function parseRetryPolicy(p: RetryPolicy, at: string): XdsRetryPolicy {
  const numRetries = p.numRetries ?? DEFAULT_NUM_RETRIES;
  if (numRetries < 1) fail(`${at}.num_retries`, `must be at least 1, got ${numRetries}`);
  let baseMs = DEFAULT_BASE_INTERVAL_MS;
  let maxMs = DEFAULT_MAX_INTERVAL_FACTOR * DEFAULT_BASE_INTERVAL_MS;
  const backOff = p.retryBackOff;
  if (backOff !== undefined) {
    const baseAt = `${at}.retry_back_off.base_interval`;
    if (backOff.baseInterval === undefined) fail(baseAt, 'field not present (it is required)');
    baseMs = durationMs(backOff.baseInterval, baseAt);
    if (baseMs <= 0) fail(baseAt, 'must be greater than 0');
    if (backOff.maxInterval === undefined) {
      maxMs = DEFAULT_MAX_INTERVAL_FACTOR * baseMs;
    } else {
      const maxAt = `${at}.retry_back_off.max_interval`;
      maxMs = durationMs(backOff.maxInterval, maxAt);
      if (maxMs <= 0) fail(maxAt, 'must be greater than 0');
      if (maxMs < baseMs) fail(maxAt, `${maxMs} ms is less than base_interval (${baseMs} ms)`);
    }
  }
  return {
    retryableStatusCodes: retryableCodes(p.retryOn),
    maxAttempts: numRetries + 1,
    initialBackoffMs: Math.max(baseMs, MIN_INTERVAL_MS),
    maxBackoffMs: Math.max(maxMs, MIN_INTERVAL_MS),
  };
}
