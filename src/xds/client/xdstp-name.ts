// xDS resource names (gRFC A47 "Resource Cache", xRFC TP1): an old-style name is one opaque string; a new-style
// name is `xdstp://authority/type/id?params`, whose authority picks the servers, whose type must be the
// resource's, and whose context parameters are sorted (duplicates: the last one wins) so that two spellings of
// one resource share one cache entry and one subscription.

import { typeNameOf } from '../../protos/type-urls.js';

export const XDSTP_SCHEME = 'xdstp:';

/** A name parsed for the cache: the authority it belongs to and its canonical spelling. */
export type ParsedResourceName =
  | {
      readonly ok: true;
      /** undefined for an old-style name (the bootstrap's top-level servers); '' for `xdstp:///…`. */
      readonly authority: string | undefined;
      /** The name as requested and as keyed in the cache: new-style names normalised. */
      readonly canonical: string;
    }
  | { readonly ok: false; readonly error: string };

/**
 * Parses `name` as a resource of `typeUrl`. With federation off (A47 "Temporary environment variable
 * protection"), every name is old-style.
 */
export function parseResourceName(name: string, typeUrl: string, federation = true): ParsedResourceName {
  if (!federation || !name.startsWith(XDSTP_SCHEME))
    return { ok: true, authority: undefined, canonical: name };
  if (!name.startsWith(`${XDSTP_SCHEME}//`)) {
    return { ok: false, error: `xdstp name "${name}": expected "xdstp://authority/type/id"` };
  }
  const rest = name.slice(`${XDSTP_SCHEME}//`.length);
  if (rest.includes('#')) {
    return { ok: false, error: `xdstp name "${name}": directives ("#…") are not supported` };
  }
  const slash = rest.indexOf('/');
  if (slash < 0) return { ok: false, error: `xdstp name "${name}": no resource type after the authority` };
  const authority = rest.slice(0, slash);
  const queryAt = rest.indexOf('?', slash);
  const path = queryAt < 0 ? rest.slice(slash + 1) : rest.slice(slash + 1, queryAt);
  const typeEnd = path.indexOf('/');
  if (typeEnd <= 0 || typeEnd === path.length - 1) {
    return { ok: false, error: `xdstp name "${name}": expected "xdstp://${authority}/type/id"` };
  }
  const type = path.slice(0, typeEnd);
  const expected = typeNameOf(typeUrl);
  if (type !== expected) {
    return {
      ok: false,
      error: `xdstp name "${name}": resource type "${type}" where "${expected}" was expected`,
    };
  }
  const params = new Map<string, string>();
  if (queryAt >= 0) {
    for (const pair of rest.slice(queryAt + 1).split('&')) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      // A47: duplicate keys are undefined behaviour; the last value seen wins.
      if (eq < 0) params.set(pair, '');
      else params.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  }
  const keys = [...params.keys()].sort();
  const query = keys.length > 0 ? `?${keys.map((k) => `${k}=${params.get(k)}`).join('&')}` : '';
  return { ok: true, authority, canonical: `${XDSTP_SCHEME}//${authority}/${path}${query}` };
}

// RFC 3986 §3.3: a path segment's characters (pchar) besides unreserved ones, plus the separator "/".
const PATH_SAFE = new Set("-._~!$&'()*+,;=:@/");
// RFC 3986 §3.2: an authority's characters besides unreserved ones.
const AUTHORITY_SAFE = new Set("-._~!$&'()*+,;=:@[]");

function percentEncode(text: string, safe: ReadonlySet<string>): string {
  let out = '';
  for (const ch of text) {
    if (/^[A-Za-z0-9]$/.test(ch) || safe.has(ch)) {
      out += ch;
      continue;
    }
    for (const byte of new TextEncoder().encode(ch))
      out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** A47: the target's name as it goes into an xdstp: template (only RFC 3986 path characters left as they are). */
export function percentEncodePath(text: string): string {
  return percentEncode(text, PATH_SAFE);
}

/** A47: a target authority as it goes into the default per-authority template. */
export function percentEncodeAuthority(text: string): string {
  return percentEncode(text, AUTHORITY_SAFE);
}
