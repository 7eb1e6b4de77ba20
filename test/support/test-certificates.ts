// Certificates made by the test with Debian's openssl into a temporary folder (never committed): a CA and leaf
// certificates it signs, each with the subject alternative names asked for.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface LeafFiles {
  readonly certificateFile: string;
  readonly privateKeyFile: string;
}

export class TestCertificates {
  readonly dir = mkdtempSync(join(tmpdir(), 'lbtree-certs-'));
  readonly caFile: string;
  private readonly caKey: string;
  private serial = 1;

  constructor(caName = 'lbtree test CA') {
    this.caKey = join(this.dir, 'ca-key.pem');
    this.caFile = join(this.dir, 'ca.pem');
    openssl([
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      this.caKey,
      '-out',
      this.caFile,
      '-days',
      '2',
      '-subj',
      `/CN=${caName}`,
    ]);
  }

  /** A leaf certificate signed by this CA, valid for `days` from now, with `sans` (e.g. "URI:spiffe://…", "DNS:x"). */
  leaf(name: string, sans: readonly string[], days = 2): LeafFiles {
    const key = join(this.dir, `${name}-key.pem`);
    const csr = join(this.dir, `${name}.csr`);
    const cert = join(this.dir, `${name}.pem`);
    const ext = join(this.dir, `${name}.ext`);
    writeFileSync(ext, `subjectAltName=${sans.join(',')}\n`);
    openssl([
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      csr,
      '-subj',
      `/CN=${name}`,
    ]);
    openssl([
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      this.caFile,
      '-CAkey',
      this.caKey,
      '-set_serial',
      String(this.serial++),
      '-days',
      String(days),
      '-extfile',
      ext,
      '-out',
      cert,
    ]);
    return { certificateFile: cert, privateKeyFile: key };
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}
