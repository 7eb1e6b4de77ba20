// RouteAction.hash_policy → the HashPolicy data that src/hash's RequestHasher evaluates per call (A42 "Hash
// Policy"). gRPC keeps policy types it cannot evaluate (cookie, connection_properties, query_parameter): they
// produce no hash, but their `terminal` still counts. A header policy without a name, or whose regex_rewrite
// does not compile, is a NACK.

import { ConfigError } from '../../core/index.js';
import type { HashPolicy } from '../../hash/index.js';
import { RegexRewrite } from '../../hash/index.js';
import type { RouteAction_HashPolicy } from '../../protos/gen/envoy/config/route/v3/route_components_pb.js';
import { compileRe2, fail } from './validation.js';

export function parseHashPolicies(policies: readonly RouteAction_HashPolicy[], at: string): HashPolicy[] {
  return policies.map((p, i) => parseHashPolicy(p, `${at}[${i}]`));
}

function parseHashPolicy(p: RouteAction_HashPolicy, at: string): HashPolicy {
  const terminal = p.terminal;
  const spec = p.policySpecifier;
  switch (spec.case) {
    case 'header': {
      const { headerName, regexRewrite } = spec.value;
      if (headerName === '') fail(`${at}.header.header_name`, 'must not be empty');
      if (regexRewrite === undefined) return { type: 'header', headerName, terminal };
      const patternField = `${at}.header.regex_rewrite.pattern`;
      if (regexRewrite.pattern === undefined) fail(patternField, 'field not present');
      const pattern = regexRewrite.pattern.regex;
      const { substitution } = regexRewrite;
      // Compiled once to validate (syntax and size); RequestHasher compiles its own copy from the data.
      const regex = compileRe2(pattern, `${patternField}.regex`);
      try {
        new RegexRewrite(
          pattern,
          substitution,
          `${patternField}.regex`,
          `${at}.header.regex_rewrite.substitution`,
          regex,
        );
      } catch (e) {
        if (e instanceof ConfigError) fail(e.path, e.problem);
        throw e;
      }
      return { type: 'header', headerName, regexRewrite: { pattern, substitution }, terminal };
    }
    case 'filterState':
      return { type: 'filter_state', key: spec.value.key, terminal };
    case 'cookie':
      return { type: 'cookie', terminal };
    case 'connectionProperties':
      return { type: 'connection_properties', terminal };
    case 'queryParameter':
      return { type: 'query_parameter', terminal };
    case undefined:
      return { type: 'unknown', terminal };
  }
}
