// The request and response halves of A55's StatefulSessionFilter, with A60's cluster in the cookie and A61's
// address list, independent of any transport: which cookie config applies to a route (A39 override order),
// whether the call's path is in the cookie's path (RFC 6265 5.1.4), reading the session cookie from the
// request metadata, and the `set-cookie` value for the response. The grpc-js adapter carries the per-call
// state to the pick (xds_override_host reads it) and back to the response headers.

import { isIP } from 'node:net';
import { addressKey, type CallMetadata, parseAddress } from '../../core/index.js';
import type { OverrideHostCallState } from '../call-attributes.js';
import type {
  XdsFilterOverrides,
  XdsHttpFilter,
  XdsSessionCookie,
  XdsStatefulSession,
} from '../resources/types.js';

/**
 * The cookie the listener's stateful_session filter uses for a call, after A39's filter config overrides: the
 * weighted cluster's, else the route's, else the virtual host's typed_per_filter_config entry for the filter's
 * name replaces the listener's config. With several stateful_session filters the first one with a cookie wins.
 */
export function sessionCookieFor(
  filters: readonly XdsHttpFilter[],
  scopes: readonly XdsFilterOverrides[],
): XdsSessionCookie | undefined {
  for (const filter of filters) {
    if (filter.statefulSession === undefined) continue;
    let config: XdsStatefulSession | undefined = filter.statefulSession;
    for (const overrides of scopes) {
      const override = overrides.get(filter.name)?.statefulSession;
      if (override === undefined) continue;
      config = override.disabled ? undefined : override.config;
      break;
    }
    if (config?.cookie !== undefined) return config.cookie;
  }
  return undefined;
}

/** RFC 6265 section 5.1.4 path-match, as A55 asks; an empty cookie path matches every path. */
export function cookiePathMatches(cookiePath: string, requestPath: string): boolean {
  if (cookiePath === '') return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return (
    requestPath.length === cookiePath.length ||
    cookiePath.endsWith('/') ||
    requestPath.charAt(cookiePath.length) === '/'
  );
}

/** The first value of cookie `name` in the request's `cookie` headers (`a=1; b=2`), if any. */
export function findCookie(metadata: CallMetadata, name: string): string | undefined {
  for (const header of metadata.get('cookie')) {
    if (typeof header !== 'string') continue;
    for (const pair of header.split(';')) {
      const eq = pair.indexOf('=');
      if (eq < 0) continue;
      if (pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
    }
  }
  return undefined;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A decoded session cookie: A61's address list (as written, and parsed) and A60's cluster. */
export interface SessionCookieValue {
  readonly addressList: string;
  /** The valid `IP:port` addresses of the list as address keys; invalid ones are left out (A55). */
  readonly addresses: readonly string[];
  readonly cluster: string;
}

/** `base64("addr1,addr2;cluster")` → its parts; undefined when the value is not base64. */
export function decodeSessionCookie(value: string): SessionCookieValue | undefined {
  const unquoted =
    value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  if (!BASE64.test(unquoted)) return undefined;
  const text = Buffer.from(unquoted, 'base64').toString('utf8');
  const semicolon = text.indexOf(';');
  const addressList = semicolon < 0 ? text : text.slice(0, semicolon);
  const cluster = semicolon < 0 ? '' : text.slice(semicolon + 1);
  const addresses: string[] = [];
  for (const part of addressList.split(',')) {
    const key = ipAddressKey(part.trim());
    if (key !== undefined) addresses.push(key);
  }
  return { addressList, addresses, cluster };
}

function ipAddressKey(text: string): string | undefined {
  if (text === '') return undefined;
  try {
    const address = parseAddress(text);
    return 'host' in address && isIP(address.host) !== 0 ? addressKey(address) : undefined;
  } catch {
    return undefined;
  }
}

/** A61 / A60: the cookie value for an endpoint's address list and a cluster: `base64("list;cluster")`. */
export function encodeSessionCookie(addressList: string, cluster: string): string {
  return Buffer.from(`${addressList};${cluster}`, 'utf8').toString('base64');
}

/**
 * One call's stateful session: what the request's cookie said, the cluster the call goes to, and the address
 * list xds_override_host reports for the endpoint it used. It is the A61 call attribute the policy reads.
 */
export class StatefulSessionCall implements OverrideHostCallState {
  readonly cookieAddresses: readonly string[];
  private actual: string | undefined;

  constructor(
    readonly cookie: XdsSessionCookie,
    /** The decoded request cookie, if there was a valid one. */
    readonly received: SessionCookieValue | undefined,
    /** The cluster the call was routed to (A60: the cookie's, when the route has it). */
    readonly cluster: string,
  ) {
    this.cookieAddresses = received?.addresses ?? [];
  }

  setActualAddressList(list: string): void {
    this.actual = list;
  }

  /** The address list the policy reported, once the call was picked. */
  get actualAddressList(): string | undefined {
    return this.actual;
  }

  /**
   * The `set-cookie` header value for the response, or undefined when the request's cookie already names the
   * endpoint and cluster used (or no endpoint was reported). `Name=value; HttpOnly[; Path=p][; Max-Age=s]`.
   */
  setCookieHeader(): string | undefined {
    const actual = this.actual;
    if (actual === undefined) return undefined;
    const received = this.received;
    if (received !== undefined && received.addressList === actual && received.cluster === this.cluster) {
      return undefined;
    }
    let header = `${this.cookie.name}=${encodeSessionCookie(actual, this.cluster)}; HttpOnly`;
    if (this.cookie.path !== '') header += `; Path=${this.cookie.path}`;
    const seconds = Math.floor(this.cookie.ttlMs / 1000);
    if (seconds > 0) header += `; Max-Age=${seconds}`;
    return header;
  }
}
