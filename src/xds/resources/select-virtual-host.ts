// A28 "most specifically matches": which VirtualHost of a RouteConfiguration serves a channel's authority. The
// rules are Envoy's (route_components.proto, VirtualHost.domains), which gRPC follows: a domain is an exact
// name, `*` plus a suffix, a prefix plus `*`, or `*` alone; matching ignores case. An exact match beats any
// suffix match, which beats any prefix match, which beats `*`; among suffix (or prefix) matches the longest
// pattern wins; on a tie the earlier virtual host wins. A pattern with `*` anywhere else matches nothing.

/** Match kinds from the most to the least specific. */
const EXACT = 0;
const SUFFIX = 1;
const PREFIX = 2;
const UNIVERSAL = 3;
const NONE = 4;

/** How `pattern` matches `host` (both lower-cased): the kind, or NONE. */
function matchKind(pattern: string, host: string): number {
  if (pattern === '*') return UNIVERSAL;
  const star = pattern.indexOf('*');
  if (star < 0) return pattern === host ? EXACT : NONE;
  if (star !== pattern.lastIndexOf('*')) return NONE;
  // A lone wildcard must stand for at least one character (Envoy), so `*.a.com` does not match `.a.com`.
  if (star === 0) return host.length > pattern.length - 1 && host.endsWith(pattern.slice(1)) ? SUFFIX : NONE;
  if (star === pattern.length - 1) {
    return host.length > pattern.length - 1 && host.startsWith(pattern.slice(0, -1)) ? PREFIX : NONE;
  }
  return NONE;
}

/**
 * The virtual host whose `domains` most specifically match `authority` (the xds: target's name), or undefined
 * when none matches (the resolver then fails the channel's RPCs, A28).
 */
export function selectVirtualHost<V extends { readonly domains: readonly string[] }>(
  virtualHosts: readonly V[],
  authority: string,
): V | undefined {
  const host = authority.toLowerCase();
  let best: V | undefined;
  let bestKind = NONE;
  let bestLength = -1;
  for (const vh of virtualHosts) {
    for (const domain of vh.domains) {
      const pattern = domain.toLowerCase();
      const kind = matchKind(pattern, host);
      if (kind === NONE) continue;
      if (kind < bestKind || (kind === bestKind && pattern.length > bestLength)) {
        best = vh;
        bestKind = kind;
        bestLength = pattern.length;
        if (kind === EXACT) return best;
      }
    }
  }
  return best;
}
