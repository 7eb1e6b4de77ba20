import { matchesString } from '../xds/resolver/route-matcher.js';
import type { XdsStringMatcher } from '../xds/resources/types.js';

// gRFC A29 "Server Authorization aka Subject-Alt-Name Checks": the server's leaf certificate passes when one of
// its DNS, URI, email or IP address SANs matches one of match_subject_alt_names (an empty list passes all).

/** One SAN of a certificate, as Node's `subjectaltname` lists it. */
export interface SubjectAltName {
  readonly type: 'DNS' | 'URI' | 'email' | 'IP';
  readonly value: string;
}

const SAN_TYPES: Readonly<Record<string, SubjectAltName['type']>> = {
  DNS: 'DNS',
  URI: 'URI',
  email: 'email',
  'IP Address': 'IP',
};

/**
 * Node's `subjectaltname` text (`DNS:a.example, URI:spiffe://td/ns/x, IP Address:10.0.0.1`); a value holding a
 * comma or quote is written as a JSON string. Other SAN types (DirName, othername, …) are left out.
 */
export function parseSubjectAltNames(text: string | undefined): SubjectAltName[] {
  const sans: SubjectAltName[] = [];
  if (text === undefined || text === '') return sans;
  let i = 0;
  while (i < text.length) {
    const colon = text.indexOf(':', i);
    if (colon < 0) break;
    const typeName = text.slice(i, colon).trim();
    let value: string;
    let end: number;
    if (text[colon + 1] === '"') {
      end = closingQuote(text, colon + 2);
      try {
        value = JSON.parse(text.slice(colon + 1, end + 1)) as string;
      } catch {
        value = text.slice(colon + 2, end);
      }
      end = text.indexOf(',', end);
    } else {
      end = text.indexOf(',', colon);
      value = text.slice(colon + 1, end < 0 ? text.length : end);
    }
    const type = SAN_TYPES[typeName];
    if (type !== undefined) sans.push({ type, value: type === 'IP' ? canonicalIp(value) : value });
    if (end < 0) break;
    i = end + 1;
  }
  return sans;
}

function closingQuote(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return text.length - 1;
}

/** A29: an IP SAN is compared in its canonical text (RFC 5952 for IPv6: `2001:DB8:0::01` → `2001:db8::1`). */
export function canonicalIp(ip: string): string {
  if (!ip.includes(':')) return ip;
  try {
    return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return ip.toLowerCase();
  }
}

/**
 * Whether the SANs satisfy the matchers (A29). An empty SAN never matches; `exact` matches a wildcard DNS SAN
 * (`*.example.com`) for one label in its place, as Envoy does.
 */
export function sansMatch(sans: readonly SubjectAltName[], matchers: readonly XdsStringMatcher[]): boolean {
  if (matchers.length === 0) return true;
  for (const san of sans) {
    if (san.value === '') continue;
    for (const matcher of matchers) {
      if (matchesString(matcher, san.value)) return true;
      if (san.type === 'DNS' && matcher.kind === 'exact' && wildcardDnsMatch(san.value, matcher)) return true;
    }
  }
  return false;
}

function wildcardDnsMatch(san: string, matcher: { value: string; ignoreCase: boolean }): boolean {
  if (!san.startsWith('*.')) return false;
  const pattern = matcher.ignoreCase ? san.toLowerCase() : san;
  const name = matcher.ignoreCase ? matcher.value.toLowerCase() : matcher.value;
  const suffix = pattern.slice(1); // ".example.com"
  if (!name.endsWith(suffix)) return false;
  const label = name.slice(0, name.length - suffix.length);
  return label !== '' && !label.includes('.');
}
