// RouteMatch validation (A28 "Route Matching"): the path specifier, header matchers and runtime_fraction.
// Regexes are compiled here, once per resource, so a bad pattern is a NACK and a request never compiles one.

import type {
  HeaderMatcher,
  RouteMatch,
} from '../../protos/gen/envoy/config/route/v3/route_components_pb.js';
import type { RegexMatcher } from '../../protos/gen/envoy/type/matcher/v3/regex_pb.js';
import type { StringMatcher } from '../../protos/gen/envoy/type/matcher/v3/string_pb.js';
import type { XdsHeaderMatcher, XdsPathMatcher, XdsRouteMatch, XdsStringMatcher } from './types.js';
import { compileRe2, fail, perMillion } from './validation.js';

/**
 * A validated RouteMatch, or null when gRPC ignores the whole route (A28: a route with query_parameters never
 * matches). `grpc`, `tls_context` and `dynamic_metadata` are ignored; the rest of the route is still used.
 */
export function parseRouteMatch(m: RouteMatch, at: string): XdsRouteMatch | null {
  if (m.queryParameters.length > 0) return null;
  return {
    path: parsePathMatcher(m, at),
    headers: m.headers.map((h, i) => parseHeaderMatcher(h, `${at}.headers[${i}]`)),
    runtimeFractionPerMillion: parseRuntimeFraction(m, at),
  };
}

/** A28: only runtime_fraction.default_value is used (gRPC has no runtime); unset default_value means 0%. */
function parseRuntimeFraction(m: RouteMatch, at: string): number | undefined {
  const fraction = m.runtimeFraction;
  if (fraction === undefined) return undefined;
  if (fraction.defaultValue === undefined) return 0;
  return perMillion(fraction.defaultValue, `${at}.runtime_fraction.default_value`);
}

function parsePathMatcher(m: RouteMatch, at: string): XdsPathMatcher {
  const caseSensitive = m.caseSensitive ?? true;
  const spec = m.pathSpecifier;
  switch (spec.case) {
    case 'prefix':
      return { kind: 'prefix', prefix: spec.value, caseSensitive };
    case 'path':
      return { kind: 'path', path: spec.value, caseSensitive };
    case 'safeRegex':
      return { kind: 'safe_regex', regex: compileRegexMatcher(spec.value, `${at}.safe_regex`) };
    case undefined:
      return fail(`${at}.path_specifier`, 'field not present (expected prefix, path or safe_regex)');
    default:
      return fail(
        `${at}.${snake(spec.case)}`,
        'unsupported path specifier (gRPC supports prefix, path and safe_regex)',
      );
  }
}

/** A RegexMatcher's pattern compiled with RE2 (the deprecated google_re2 / max_program_size are ignored). */
function compileRegexMatcher(r: RegexMatcher, at: string) {
  return compileRe2(r.regex, `${at}.regex`);
}

function parseHeaderMatcher(h: HeaderMatcher, at: string): XdsHeaderMatcher {
  if (h.name === '') fail(`${at}.name`, 'must not be empty');
  const name = h.name.toLowerCase();
  const invert = h.invertMatch;
  const spec = h.headerMatchSpecifier;
  const literal = (kind: 'exact' | 'prefix' | 'suffix' | 'contains', value: string): XdsHeaderMatcher => ({
    name,
    invert,
    match: { kind: 'string', matcher: { kind, value, ignoreCase: false } },
  });
  switch (spec.case) {
    case 'exactMatch':
      return literal('exact', spec.value);
    case 'prefixMatch':
      return literal('prefix', spec.value);
    case 'suffixMatch':
      return literal('suffix', spec.value);
    case 'containsMatch':
      return literal('contains', spec.value);
    case 'safeRegexMatch':
      return {
        name,
        invert,
        match: {
          kind: 'string',
          matcher: { kind: 'safe_regex', regex: compileRegexMatcher(spec.value, `${at}.safe_regex_match`) },
        },
      };
    case 'stringMatch':
      return {
        name,
        invert,
        match: { kind: 'string', matcher: parseStringMatcher(spec.value, `${at}.string_match`) },
      };
    case 'rangeMatch': {
      const { start, end } = spec.value;
      if (end < start) fail(`${at}.range_match.end`, `${end} is less than start (${start})`);
      return { name, invert, match: { kind: 'range', start, end } };
    }
    case 'presentMatch':
      return { name, invert, match: { kind: 'present', present: spec.value } };
    case undefined:
      return fail(`${at}.header_match_specifier`, 'field not present');
  }
}

/** envoy.type.matcher.v3.StringMatcher: exact / prefix / suffix / contains (with ignore_case) or safe_regex. */
export function parseStringMatcher(s: StringMatcher, at: string): XdsStringMatcher {
  const ignoreCase = s.ignoreCase;
  const p = s.matchPattern;
  switch (p.case) {
    case 'exact':
    case 'prefix':
    case 'suffix':
    case 'contains':
      return { kind: p.case, value: p.value, ignoreCase };
    case 'safeRegex':
      return { kind: 'safe_regex', regex: compileRegexMatcher(p.value, `${at}.safe_regex`) };
    case 'custom':
      return fail(`${at}.custom`, 'custom string matchers are not supported');
    case undefined:
      return fail(`${at}.match_pattern`, 'field not present');
  }
}

/** A oneof case (`safeRegex`) in proto field-name form (`safe_regex`), for error paths. */
export function snake(camel: string): string {
  return camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
