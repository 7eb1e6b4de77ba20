// The xDS route's `hash_policy` list (envoy.config.route.v3.RouteAction.HashPolicy) in proto3 JSON form,
// read into the hash policies src/hash evaluates. xDS knowledge lives here; src/hash knows hash policies only
// as data.
import { ConfigError, ConfigReader, childPath, expectArray } from '../core/index.js';
import type { HashPolicy } from '../hash/hash-policy.js';
import { RegexRewrite } from '../hash/regex-rewrite.js';

/**
 * Parses an xDS `RouteAction.hash_policy` list in proto3 JSON form (either field spelling). Unsupported
 * policy types are kept, as producing nothing (A42: unlike Envoy, gRPC does not reject them). Throws a
 * ConfigError with the JSON path of the first problem: a missing header name, an invalid RE2 pattern, an
 * invalid substitution.
 */
export function parseHashPolicies(json: unknown, path = '$'): HashPolicy[] {
  return expectArray(json, path).map((entry, i) => parseHashPolicy(entry, childPath(path, i)));
}

function parseHashPolicy(json: unknown, path: string): HashPolicy {
  const reader = new ConfigReader(json, path);
  const terminal = reader.optionalBoolean('terminal') ?? false;
  const header = reader.optionalObject('header');
  if (header) {
    const name = header.required('headerName');
    if (typeof name.value !== 'string' || name.value.length === 0) {
      throw new ConfigError(name.path, 'expected a non-empty header name');
    }
    const rewrite = header.optionalObject('regexRewrite');
    if (!rewrite) return { type: 'header', headerName: name.value, terminal };
    const pattern = new ConfigReader(rewrite.required('pattern').value, childPath(rewrite.path, 'pattern'));
    const regex = pattern.optionalString('regex');
    if (regex === undefined)
      throw new ConfigError(childPath(pattern.path, 'regex'), 'required field is missing');
    const substitution = rewrite.optionalString('substitution') ?? '';
    // Compiled once here only to report a bad pattern at its path; RequestHasher compiles its own copy.
    new RegexRewrite(
      regex,
      substitution,
      childPath(pattern.path, 'regex'),
      rewrite.field('substitution')?.path ?? childPath(rewrite.path, 'substitution'),
    );
    return {
      type: 'header',
      headerName: name.value,
      regexRewrite: { pattern: regex, substitution },
      terminal,
    };
  }
  const filterState = reader.optionalObject('filterState');
  if (filterState) {
    const key = filterState.optionalString('key');
    if (key === undefined)
      throw new ConfigError(childPath(filterState.path, 'key'), 'required field is missing');
    return { type: 'filter_state', key, terminal };
  }
  if (reader.field('cookie')) return { type: 'cookie', terminal };
  if (reader.field('connectionProperties')) return { type: 'connection_properties', terminal };
  if (reader.field('queryParameter')) return { type: 'query_parameter', terminal };
  return { type: 'unknown', terminal };
}
