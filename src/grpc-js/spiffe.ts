import { X509Certificate } from 'node:crypto';
import type { DetailedPeerCertificate } from 'node:tls';
import { parseSubjectAltNames } from './san-check.js';

// gRFC A87: SPIFFE trust bundle maps as the roots of xDS mTLS. A peer's certificate must carry exactly one URI
// SAN holding a SPIFFE ID (the SPIFFE-ID standard's syntax); its trust domain selects the bundle whose roots
// its chain must lead to. The bundle map file is the SPIFFE bundle format per trust domain, of which A87 reads
// `keys` (each key's `kty`, `use` and `x5c`) and `spiffe_sequence`; any bad entry rejects the whole map.

/** Trust domain → its roots; every root of every domain, in PEM, is what the TLS library is handed. */
export interface SpiffeBundleMap {
  readonly bundles: ReadonlyMap<string, readonly X509Certificate[]>;
  readonly allRootsPem: readonly string[];
}

export interface SpiffeId {
  readonly trustDomain: string;
  /** "" or "/seg/seg…". */
  readonly path: string;
}

const SPIFFE_SCHEME = 'spiffe://';
const MAX_SPIFFE_ID_LENGTH = 2048;
const MAX_TRUST_DOMAIN_LENGTH = 255;
const TRUST_DOMAIN_CHARS = /^[a-z0-9._-]+$/;
const PATH_SEGMENT_CHARS = /^[A-Za-z0-9._-]+$/;
/** The SPIFFE bundle format's key types (X.509-SVID roots are RSA or EC keys). */
const KEY_TYPES = ['RSA', 'EC'];
const X509_SVID_USE = 'x509-svid';

/** A SPIFFE ID, or why the text is not one. */
export function parseSpiffeId(uri: string): SpiffeId | { readonly error: string } {
  const bad = (error: string) => ({ error: `${JSON.stringify(uri)} is not a SPIFFE ID: ${error}` });
  if (uri.length > MAX_SPIFFE_ID_LENGTH) return bad(`longer than ${MAX_SPIFFE_ID_LENGTH} characters`);
  if (!uri.toLowerCase().startsWith(SPIFFE_SCHEME)) return bad('the scheme must be spiffe://');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the check is for non-ASCII characters
  if (/[^\x00-\x7f]/.test(uri)) return bad('it has non-ASCII characters');
  if (uri.includes('?') || uri.includes('#')) return bad('it has a query or a fragment');
  const rest = uri.slice(SPIFFE_SCHEME.length);
  const slash = rest.indexOf('/');
  const trustDomain = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? '' : rest.slice(slash);
  const domainProblem = trustDomainProblem(trustDomain);
  if (domainProblem !== undefined) return bad(domainProblem);
  if (path !== '') {
    for (const segment of path.slice(1).split('/')) {
      if (segment === '') return bad('its path has an empty segment (or ends with "/")');
      if (segment === '.' || segment === '..') return bad('its path has a "." or ".." segment');
      if (!PATH_SEGMENT_CHARS.test(segment)) {
        return bad(
          `path segment ${JSON.stringify(segment)} has characters other than letters, digits, ".", "-", "_"`,
        );
      }
    }
  }
  return { trustDomain, path };
}

function trustDomainProblem(trustDomain: string): string | undefined {
  if (trustDomain === '') return 'the trust domain is empty';
  if (trustDomain.length > MAX_TRUST_DOMAIN_LENGTH) {
    return `the trust domain is longer than ${MAX_TRUST_DOMAIN_LENGTH} characters`;
  }
  if (!TRUST_DOMAIN_CHARS.test(trustDomain)) {
    return `trust domain ${JSON.stringify(trustDomain)} has characters other than lowercase letters, digits, ".", "-", "_"`;
  }
  return undefined;
}

/** Parses a SPIFFE trust bundle map file's text; throws an Error naming the file and the JSON path of a problem. */
export function parseSpiffeBundleMap(text: string, file: string): SpiffeBundleMap {
  const fail = (path: string, problem: string): never => {
    throw new Error(`${file}: ${path}: ${problem}`);
  };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return fail('$', `not JSON (${(e as Error).message})`);
  }
  const domains = objectAt(json, '$', fail).trust_domains;
  const bundles = new Map<string, X509Certificate[]>();
  const allRootsPem: string[] = [];
  if (domains === undefined) return fail('$.trust_domains', 'missing');
  for (const [domain, bundle] of Object.entries(objectAt(domains, '$.trust_domains', fail))) {
    const at = `$.trust_domains[${JSON.stringify(domain)}]`;
    const problem = trustDomainProblem(domain);
    if (problem !== undefined) fail(at, `not a trust domain: ${problem}`);
    const o = objectAt(bundle, at, fail);
    if (o.spiffe_sequence !== undefined && !Number.isInteger(o.spiffe_sequence)) {
      fail(`${at}.spiffe_sequence`, 'expected an integer');
    }
    if (!Array.isArray(o.keys)) fail(`${at}.keys`, 'expected a list of keys');
    const roots = (o.keys as unknown[]).map((key, i) => {
      const keyAt = `${at}.keys[${i}]`;
      const k = objectAt(key, keyAt, fail);
      if (k.use !== undefined && k.use !== X509_SVID_USE) {
        fail(`${keyAt}.use`, `expected "${X509_SVID_USE}", got ${JSON.stringify(k.use)}`);
      }
      if (typeof k.kty !== 'string' || !KEY_TYPES.includes(k.kty)) {
        fail(`${keyAt}.kty`, `expected one of ${KEY_TYPES.join(', ')}, got ${JSON.stringify(k.kty)}`);
      }
      const x5c = k.x5c;
      if (!Array.isArray(x5c) || x5c.length !== 1 || typeof x5c[0] !== 'string') {
        return fail(`${keyAt}.x5c`, 'expected a list of exactly one base64 DER certificate');
      }
      try {
        const root = new X509Certificate(Buffer.from(x5c[0] as string, 'base64'));
        allRootsPem.push(root.toString());
        return root;
      } catch (e) {
        return fail(`${keyAt}.x5c[0]`, `not a certificate (${(e as Error).message})`);
      }
    });
    bundles.set(domain, roots);
  }
  return { bundles, allRootsPem };
}

function objectAt(
  value: unknown,
  path: string,
  fail: (path: string, problem: string) => never,
): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, 'expected an object');
  return value as Record<string, unknown>;
}

/**
 * A87's SPIFFE verification of a peer certificate chain (as Node hands it to checkServerIdentity, with
 * issuers): the leaf's one URI SAN is a SPIFFE ID whose trust domain is in the map, and the chain leads to a
 * root of that domain's bundle. Undefined when it passes, else the error that fails the handshake. Signatures
 * and validity along the chain are the TLS library's to check (against every domain's roots).
 */
export function spiffeVerificationError(
  peer: DetailedPeerCertificate,
  map: SpiffeBundleMap,
): Error | undefined {
  const uris = parseSubjectAltNames(peer.subjectaltname)
    .filter((san) => san.type === 'URI')
    .map((san) => san.value);
  if (uris.length !== 1) {
    return new Error(
      `SPIFFE verification: the peer certificate has ${uris.length} URI SANs, where a SPIFFE certificate has exactly one`,
    );
  }
  const id = parseSpiffeId(uris[0]!);
  if ('error' in id) return new Error(`SPIFFE verification: ${id.error}`);
  const roots = map.bundles.get(id.trustDomain);
  if (roots === undefined) {
    const known = [...map.bundles.keys()].join(', ');
    return new Error(
      `SPIFFE verification: trust domain "${id.trustDomain}" is not in the SPIFFE bundle map (it has: ${known === '' ? 'none' : known})`,
    );
  }
  if (!leadsToRoot(peer, roots)) {
    return new Error(
      `SPIFFE verification: the peer's certificate chain does not lead to a root of trust domain "${id.trustDomain}"'s bundle`,
    );
  }
  return undefined;
}

/** Whether a certificate of the chain is one of `roots`, or is issued and signed by one. */
function leadsToRoot(peer: DetailedPeerCertificate, roots: readonly X509Certificate[]): boolean {
  const seen = new Set<string>();
  for (let c: DetailedPeerCertificate | undefined = peer; c !== undefined; c = c.issuerCertificate) {
    if (seen.has(c.fingerprint256)) break;
    seen.add(c.fingerprint256);
    const cert = new X509Certificate(c.raw);
    for (const root of roots) {
      if (root.fingerprint256 === cert.fingerprint256) return true;
      if (cert.checkIssued(root) && cert.verify(root.publicKey)) return true;
    }
  }
  return false;
}
