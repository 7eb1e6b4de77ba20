import { isIP } from 'node:net';

/** A TCP address (IPv4 or IPv6 literal, or a host name) or a unix socket path. */
export type Address = TcpAddress | UnixAddress;

export interface TcpAddress {
  readonly host: string;
  readonly port: number;
}

export interface UnixAddress {
  readonly path: string;
}

const CACHED_KEY: unique symbol = Symbol('lbtree.addressKey');
type KeyCache = { [CACHED_KEY]?: string };

/**
 * A TCP address whose {@link addressKey} cache slot is part of the object from the start: set later on a plain
 * `{ host, port }` object, the key needs a separate property array, one more object per address for the GC
 * to copy (a channel holds one address per endpoint, tens of thousands in an xDS locality).
 */
export function tcpAddress(host: string, port: number): TcpAddress {
  return { host, port, [CACHED_KEY]: undefined } as TcpAddress;
}

/** A unix socket address, with its key cache slot (see {@link tcpAddress}). */
export function unixAddress(path: string): UnixAddress {
  return { path, [CACHED_KEY]: undefined } as UnixAddress;
}

export type AddressFamily = 'ipv4' | 'ipv6' | 'unix' | 'other';

export function isUnixAddress(a: Address): a is UnixAddress {
  return (a as UnixAddress).path !== undefined;
}

/** The canonical text form: `1.2.3.4:80`, `[::1]:80`, `unix:/tmp/sock`. Used as a map key everywhere. */
export function addressKey(a: Address): string {
  const cached = (a as KeyCache)[CACHED_KEY];
  if (cached !== undefined) return cached;
  let key: string;
  if (isUnixAddress(a)) key = `unix:${a.path}`;
  else if (a.host.includes(':')) key = `[${a.host}${portSuffix(a.port, ']:')}`;
  else key = a.host + portSuffix(a.port, ':');
  // Address objects are immutable and often re-delivered (a resolver's unchanged list), so the key is built
  // once and kept on the object; reusing one key string also reuses its hash in every Map lookup.
  // (An address made by tcpAddress / unixAddress / parseAddress has the slot already: see tcpAddress.)
  if (Object.isExtensible(a)) (a as KeyCache)[CACHED_KEY] = key;
  return key;
}

/**
 * `:port` (or `]:port`), one string per port: a key is then the host string and this one joined (V8 makes a
 * key of 13 characters or more a pair of pointers to them), where `${host}:${port}` made two new strings per
 * address besides the pair (the host with its colon, and the port's digits): 56 bytes less per endpoint to
 * keep and to copy in every young-generation collection while a large list comes up.
 */
function portSuffix(port: number, separator: ':' | ']:'): string {
  if (port === lastPort && separator === lastSeparator) return lastSuffix;
  const cache = separator === ':' ? suffixes : bracketedSuffixes;
  let suffix = cache.get(port);
  if (suffix === undefined) {
    suffix = `${separator}${port}`;
    // Ports are few; a flood of distinct ones is bounded anyway (at most 65,536 per separator).
    cache.set(port, suffix);
  }
  lastPort = port;
  lastSeparator = separator;
  lastSuffix = suffix;
  return suffix;
}
const suffixes = new Map<number, string>();
const bracketedSuffixes = new Map<number, string>();
let lastPort = -1;
let lastSeparator = '';
let lastSuffix = '';

export function addressFamily(a: Address): AddressFamily {
  if (isUnixAddress(a)) return 'unix';
  switch (isIP(a.host)) {
    case 4:
      return 'ipv4';
    case 6:
      return 'ipv6';
    default:
      return 'other';
  }
}

/**
 * Parses the text form produced by {@link addressKey}. Throws a TypeError naming the input when it is not
 * `host:port`, `[v6]:port` or `unix:path`.
 */
export function parseAddress(text: string): Address {
  if (text.startsWith('unix:')) {
    const path = text.slice(5);
    if (path.length === 0) throw new TypeError(`invalid address "${text}": empty unix path`);
    return unixAddress(path);
  }
  let host: string;
  let portText: string;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0 || text[close + 1] !== ':')
      throw new TypeError(`invalid address "${text}": expected [host]:port`);
    host = text.slice(1, close);
    portText = text.slice(close + 2);
    if (isIP(host) !== 6) throw new TypeError(`invalid address "${text}": "${host}" is not an IPv6 literal`);
  } else {
    const colon = text.lastIndexOf(':');
    if (colon <= 0 || text.indexOf(':') !== colon) {
      throw new TypeError(`invalid address "${text}": expected host:port (IPv6 literals go in brackets)`);
    }
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
  }
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw new TypeError(`invalid address "${text}": bad port`);
  return tcpAddress(host, port);
}

/** Field-wise equality, without building keys (hot in same-list updates). */
export function sameAddress(a: Address, b: Address): boolean {
  if (a === b) return true;
  if (isUnixAddress(a) || isUnixAddress(b)) return isUnixAddress(a) && isUnixAddress(b) && a.path === b.path;
  return a.host === b.host && a.port === b.port;
}
