// A28 "Response validation" / "Picking" as the config selector applies them (A31): does a route's match
// accept a call? Path (prefix, exact, RE2 safe_regex; case_sensitive), header matchers (exact / prefix /
// suffix / contains / RE2 / range / present, with invert) over the call's custom metadata, and
// runtime_fraction. The first route that matches wins (Envoy's rule), so the order is the caller's.

import type { CallMetadata } from '../../core/index.js';
import { requestHeaderValue } from '../../hash/index.js';
import type {
  XdsHeaderMatcher,
  XdsPathMatcher,
  XdsRouteMatch,
  XdsStringMatcher,
} from '../resources/types.js';

export function matchesPath(matcher: XdsPathMatcher, path: string): boolean {
  switch (matcher.kind) {
    case 'prefix':
      return matcher.caseSensitive
        ? path.startsWith(matcher.prefix)
        : path.toLowerCase().startsWith(matcher.prefix.toLowerCase());
    case 'path':
      return matcher.caseSensitive
        ? path === matcher.path
        : path.toLowerCase() === matcher.path.toLowerCase();
    case 'safe_regex':
      return matcher.regex.matches(path);
  }
}

export function matchesString(matcher: XdsStringMatcher, value: string): boolean {
  if (matcher.kind === 'safe_regex') return matcher.regex.matches(value);
  const v = matcher.ignoreCase ? value.toLowerCase() : value;
  const m = matcher.ignoreCase ? matcher.value.toLowerCase() : matcher.value;
  switch (matcher.kind) {
    case 'exact':
      return v === m;
    case 'prefix':
      return v.startsWith(m);
    case 'suffix':
      return v.endsWith(m);
    case 'contains':
      return v.includes(m);
  }
}

/**
 * A28: only custom metadata is matched; `-bin` headers count as absent, and so do `grpc-` headers other than
 * content-type, which (when the channel has not added it yet) reads as `application/grpc`. Values of a
 * repeated header are joined with ','.
 */
export function headerValueForMatching(metadata: CallMetadata, name: string): string | undefined {
  if (name.endsWith('-bin')) return undefined;
  if (name.startsWith('grpc-')) return undefined;
  return requestHeaderValue(metadata, name);
}

const INT64 = /^[+-]?\d+$/;

/**
 * One header matcher. As in gRPC C-core, `invert_match` flips the result of a present matcher always, and of
 * any other matcher only when the header is present (an absent header never matches a value test).
 */
export function matchesHeader(matcher: XdsHeaderMatcher, metadata: CallMetadata): boolean {
  const value = headerValueForMatching(metadata, matcher.name);
  const match = matcher.match;
  if (match.kind === 'present') return ((value !== undefined) === match.present) !== matcher.invert;
  if (value === undefined) return false;
  let result: boolean;
  if (match.kind === 'range') {
    if (!INT64.test(value)) {
      result = false;
    } else {
      const n = BigInt(value);
      result = n >= match.start && n < match.end;
    }
  } else {
    result = matchesString(match.matcher, value);
  }
  return result !== matcher.invert;
}

/**
 * The whole RouteMatch: path, then every header matcher, then runtime_fraction (one draw of `random` in
 * [0, 1) per call that reaches it, compared in parts per million).
 */
export function matchesRoute(
  match: XdsRouteMatch,
  path: string,
  metadata: CallMetadata,
  random: () => number,
): boolean {
  if (!matchesPath(match.path, path)) return false;
  for (const header of match.headers) if (!matchesHeader(header, metadata)) return false;
  const fraction = match.runtimeFractionPerMillion;
  if (fraction !== undefined && Math.floor(random() * 1_000_000) >= fraction) return false;
  return true;
}
