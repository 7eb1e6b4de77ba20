import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { FileWatcherCertificateProvider } from '../../src/grpc-js/certificate-provider.js';
import { parseSpiffeBundleMap, parseSpiffeId } from '../../src/grpc-js/spiffe.js';
import { parseCertificateProviders } from '../../src/xds/client/certificate-providers.js';
import { TestCertificates } from '../support/test-certificates.js';

// gRFC A87: SPIFFE IDs (the SPIFFE-ID standard's syntax), the bundle map file, its reading by the file_watcher
// provider and the GRPC_EXPERIMENTAL_XDS_MTLS_SPIFFE guard of the bootstrap field.

describe('A87 SPIFFE IDs', () => {
  test('a trust domain with or without a path is an ID; the scheme is case-insensitive', () => {
    assert.deepEqual(parseSpiffeId('spiffe://td.example/ns/default/sa/echo'), {
      trustDomain: 'td.example',
      path: '/ns/default/sa/echo',
    });
    assert.deepEqual(parseSpiffeId('spiffe://td-1_x.example'), { trustDomain: 'td-1_x.example', path: '' });
    assert.deepEqual(parseSpiffeId('SPIFFE://td/a.b-c_D'), { trustDomain: 'td', path: '/a.b-c_D' });
  });

  for (const [uri, problem] of [
    ['https://td/ns', /the scheme must be spiffe:\/\//],
    ['spiffe:///ns', /the trust domain is empty/],
    ['spiffe://TD/ns', /trust domain "TD" has characters other than lowercase letters/],
    ['spiffe://td/ns/', /empty segment/],
    ['spiffe://td//ns', /empty segment/],
    ['spiffe://td/ns/../x', /"\." or "\.\." segment/],
    ['spiffe://td/n s', /path segment "n s" has characters other than/],
    ['spiffe://td/ns?x=1', /a query or a fragment/],
    ['spiffe://td/ns#x', /a query or a fragment/],
    ['spiffe://td/é', /non-ASCII/],
    [`spiffe://${'a'.repeat(256)}`, /longer than 255 characters/],
    [`spiffe://td/${'a'.repeat(2037)}`, /longer than 2048 characters/],
  ] as const) {
    test(`not an ID: ${uri.slice(0, 40)}`, () => {
      const r = parseSpiffeId(uri);
      assert.ok('error' in r, `${uri} was accepted`);
      assert.match(r.error, problem);
    });
  }

  test('the length limits, both sides: a trust domain of 255 characters and an ID of 2048 are IDs', () => {
    assert.ok(!('error' in parseSpiffeId(`spiffe://${'a'.repeat(255)}`)));
    assert.ok(!('error' in parseSpiffeId(`spiffe://td/${'a'.repeat(2036)}`)));
  });
});

describe('A87 SPIFFE bundle map', () => {
  const certs = new TestCertificates('bundle test CA');
  after(() => certs.remove());
  const x5c = () =>
    readFileSync(certs.caFile, 'utf8')
      .replace(/-----(BEGIN|END) CERTIFICATE-----/g, '')
      .replace(/\s+/g, '');
  const key = (fields: Record<string, unknown> = {}) => ({
    kty: 'EC',
    use: 'x509-svid',
    x5c: [x5c()],
    ...fields,
  });
  const map = (domains: Record<string, unknown>) => JSON.stringify({ trust_domains: domains });

  test('each trust domain’s roots; spiffe_sequence and an absent `use` are accepted; an empty map is valid', () => {
    const parsed = parseSpiffeBundleMap(
      map({ 'td.example': { spiffe_sequence: 7, keys: [key(), key({ use: undefined, kty: 'RSA' })] } }),
      'f',
    );
    assert.deepEqual([...parsed.bundles.keys()], ['td.example']);
    assert.equal(parsed.bundles.get('td.example')!.length, 2);
    assert.equal(parsed.allRootsPem.length, 2);
    assert.equal(parseSpiffeBundleMap(map({}), 'f').bundles.size, 0);
  });

  for (const [what, text, problem] of [
    ['not JSON', '{', /map\.json: \$: not JSON/],
    ['no trust_domains', '{}', /map\.json: \$\.trust_domains: missing/],
    ['a bad trust domain', map({ 'TD!': { keys: [] } }), /\$\.trust_domains\["TD!"\]: not a trust domain/],
    [
      'keys not a list',
      map({ td: { keys: {} } }),
      /\$\.trust_domains\["td"\]\.keys: expected a list of keys/,
    ],
    [
      'a jwt-svid key',
      map({ td: { keys: [key({ use: 'jwt-svid' })] } }),
      /keys\[0\]\.use: expected "x509-svid", got "jwt-svid"/,
    ],
    [
      'an unknown kty',
      map({ td: { keys: [key({ kty: 'OKP' })] } }),
      /keys\[0\]\.kty: expected one of RSA, EC, got "OKP"/,
    ],
    [
      'two x5c certificates',
      map({ td: { keys: [key({ x5c: [x5c(), x5c()] })] } }),
      /keys\[0\]\.x5c: expected a list of exactly one/,
    ],
    [
      'x5c not a certificate',
      map({ td: { keys: [key({ x5c: ['AAAA'] })] } }),
      /keys\[0\]\.x5c\[0\]: not a certificate/,
    ],
    [
      'a fractional spiffe_sequence',
      map({ td: { spiffe_sequence: 1.5, keys: [] } }),
      /spiffe_sequence: expected an integer/,
    ],
  ] as const) {
    test(`the whole map is rejected, naming the path: ${what}`, () => {
      assert.throws(() => parseSpiffeBundleMap(text, 'map.json'), problem);
    });
  }

  test('the provider: the map replaces ca_certificate_file; a failed later read keeps the previous map, a failed first read is an error', async () => {
    const file = join(certs.dir, 'bundles.json');
    writeFileSync(file, map({ 'td.example': { keys: [key()] } }));
    const provider = new FileWatcherCertificateProvider('certificate provider "default"', {
      caCertificateFile: certs.caFile,
      spiffeTrustBundleMapFile: file,
      refreshIntervalMs: 1000,
    });
    const first = await provider.material();
    assert.ok(first.ok);
    assert.equal(first.ca, undefined, 'ca_certificate_file is not read');
    assert.deepEqual([...first.spiffeBundleMap!.bundles.keys()], ['td.example']);
    writeFileSync(file, '{ "trust_domains": ');
    const later = await provider.material();
    assert.ok(later.ok, 'a broken rewrite keeps the map in use');
    assert.equal(later.spiffeBundleMap, first.spiffeBundleMap);

    const fresh = new FileWatcherCertificateProvider('certificate provider "other"', {
      spiffeTrustBundleMapFile: file,
      refreshIntervalMs: 1000,
    });
    const m = await fresh.material();
    assert.equal(m.ok, false);
    assert.match(
      !m.ok ? m.error : '',
      /^certificate provider "other" spiffe_trust_bundle_map_file .*bundles\.json: \$: not JSON/,
    );
  });
});

describe('A87 "Temporary environment variable protection"', () => {
  const config = (fields: Record<string, unknown>) => ({
    default: { plugin_name: 'file_watcher', config: { refresh_interval: '1s', ...fields } },
  });

  test('spiffe_trust_bundle_map_file is read only when GRPC_EXPERIMENTAL_XDS_MTLS_SPIFFE allows it', () => {
    const both = config({ ca_certificate_file: '/ca.pem', spiffe_trust_bundle_map_file: '/map.json' });
    const on = parseCertificateProviders(both, 'certificate_providers', true).get('default')!.config;
    assert.equal(on.spiffeTrustBundleMapFile, '/map.json');
    const off = parseCertificateProviders(both, 'certificate_providers', false).get('default')!.config;
    assert.equal(off.spiffeTrustBundleMapFile, undefined);
    assert.equal(off.caCertificateFile, '/ca.pem');
    // With it on, the map alone is enough; with it off, such an instance has no file.
    const mapOnly = config({ spiffe_trust_bundle_map_file: '/map.json' });
    assert.equal(
      parseCertificateProviders(mapOnly, 'certificate_providers', true).get('default')!.config
        .spiffeTrustBundleMapFile,
      '/map.json',
    );
    assert.throws(
      () => parseCertificateProviders(mapOnly, 'certificate_providers', false),
      /certificate_providers\.default\.config: at least one of certificate_file and ca_certificate_file is required/,
    );
  });

  test('the default is off: unset, or anything but "true"', () => {
    const saved = process.env.GRPC_EXPERIMENTAL_XDS_MTLS_SPIFFE;
    const mapAndCa = config({ ca_certificate_file: '/ca.pem', spiffe_trust_bundle_map_file: '/map.json' });
    const read = () =>
      parseCertificateProviders(mapAndCa, 'certificate_providers').get('default')!.config
        .spiffeTrustBundleMapFile;
    try {
      delete process.env.GRPC_EXPERIMENTAL_XDS_MTLS_SPIFFE;
      assert.equal(read(), undefined);
      process.env.GRPC_EXPERIMENTAL_XDS_MTLS_SPIFFE = '1';
      assert.equal(read(), undefined);
      process.env.GRPC_EXPERIMENTAL_XDS_MTLS_SPIFFE = 'true';
      assert.equal(read(), '/map.json');
    } finally {
      if (saved === undefined) delete process.env.GRPC_EXPERIMENTAL_XDS_MTLS_SPIFFE;
      else process.env.GRPC_EXPERIMENTAL_XDS_MTLS_SPIFFE = saved;
    }
  });
});
