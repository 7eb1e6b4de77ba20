import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { FileWatcherCertificateProvider } from '../../src/grpc-js/certificate-provider.js';
import { TestCertificates } from '../support/test-certificates.js';

// gRFC A29 "`file_watcher` Certificate Provider": the files, read when used and again every refresh_interval,
// and the errors that name the file a connection cannot use.

describe('A29 file_watcher certificate provider', () => {
  const certs = new TestCertificates();
  after(() => certs.remove());

  test('reads the CA and the identity files; a rewritten file is read again at the next refresh', async () => {
    const a = certs.leaf('a', ['URI:spiffe://td/a']);
    const b = certs.leaf('b', ['URI:spiffe://td/b']);
    const live = {
      certificateFile: join(certs.dir, 'live.pem'),
      privateKeyFile: join(certs.dir, 'live-key.pem'),
    };
    copyFileSync(a.certificateFile, live.certificateFile);
    copyFileSync(a.privateKeyFile, live.privateKeyFile);
    const provider = new FileWatcherCertificateProvider('certificate provider "default"', {
      ...live,
      caCertificateFile: certs.caFile,
      refreshIntervalMs: 20,
    });
    const release = provider.use();
    try {
      const first = await provider.material();
      assert.ok(first.ok);
      assert.deepEqual(first.ca, readFileSync(certs.caFile));
      assert.deepEqual(first.certificate, readFileSync(a.certificateFile));
      copyFileSync(b.certificateFile, live.certificateFile);
      copyFileSync(b.privateKeyFile, live.privateKeyFile);
      // Waits for the condition (the new file read), with a deadline. A refresh while the files are being rewritten can
      // read a half-written file (an error until the next refresh): keep waiting through it.
      const deadline = Date.now() + 5000;
      const isB = (m: Awaited<ReturnType<typeof provider.material>>) =>
        m.ok && m.certificate!.equals(readFileSync(b.certificateFile));
      let m = await provider.material();
      while (!isB(m) && Date.now() < deadline) {
        await new Promise((r) => setImmediate(r));
        m = await provider.material();
      }
      assert.ok(
        m.ok && m.certificate!.equals(readFileSync(b.certificateFile)),
        'the rewritten file was read',
      );
    } finally {
      release();
    }
  });

  test('an unreadable file: an error naming the instance, the field and the file', async () => {
    const missing = join(certs.dir, 'missing-ca.pem');
    const provider = new FileWatcherCertificateProvider('certificate provider "roots"', {
      caCertificateFile: missing,
      refreshIntervalMs: 1000,
    });
    const m = await provider.material();
    assert.equal(m.ok, false);
    assert.match(
      !m.ok ? m.error : '',
      new RegExp(
        `^certificate provider "roots" ca_certificate_file ${missing.replace(/[.]/g, '\\.')}: cannot read it: .*ENOENT`,
      ),
    );
  });

  test('an expired identity certificate, or not yet valid: the error names certificate_file (both sides of validTo)', async () => {
    const leaf = certs.leaf('short', ['URI:spiffe://td/short'], 1);
    const cert = new X509Certificate(readFileSync(leaf.certificateFile));
    const validTo = Date.parse(cert.validTo);
    const validFrom = Date.parse(cert.validFrom);
    const config = { ...leaf, caCertificateFile: certs.caFile, refreshIntervalMs: 1000 };
    const at = (now: number) =>
      new FileWatcherCertificateProvider('certificate provider "default"', config, () => now).material();
    assert.equal((await at(validTo - 1)).ok, true);
    const expired = await at(validTo);
    assert.equal(expired.ok, false);
    assert.match(
      !expired.ok ? expired.error : '',
      /certificate provider "default" certificate_file .*short\.pem: certificate expired at /,
    );
    const early = await at(validFrom - 1000);
    assert.match(!early.ok ? early.error : '', /certificate_file .*: certificate not valid before /);
  });

  test('a CA file whose every certificate has expired; one that holds no certificate', async () => {
    const caValidTo = Date.parse(new X509Certificate(readFileSync(certs.caFile)).validTo);
    const roots = new FileWatcherCertificateProvider(
      'certificate provider "roots"',
      { caCertificateFile: certs.caFile, refreshIntervalMs: 1000 },
      () => caValidTo,
    );
    const m = await roots.material();
    assert.match(!m.ok ? m.error : '', /ca_certificate_file .*ca\.pem: certificate expired at /);
    const garbage = join(certs.dir, 'garbage.pem');
    writeFileSync(garbage, 'not a certificate\n');
    const bad = await new FileWatcherCertificateProvider('certificate provider "roots"', {
      caCertificateFile: garbage,
      refreshIntervalMs: 1000,
    }).material();
    assert.match(!bad.ok ? bad.error : '', /ca_certificate_file .*garbage\.pem: no PEM certificate in it/);
    rmSync(garbage);
  });
});
