import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { CertificateProviderInstance, FileWatcherConfig } from '../xds/client/certificate-providers.js';
import { parseSpiffeBundleMap, type SpiffeBundleMap } from './spiffe.js';

// gRFC A29 "`file_watcher` Certificate Provider" (and the reloading A65 asks for the xDS server's own creds):
// PEM files read when the first user arrives and every refresh_interval while anyone uses them, so a rotated
// certificate is picked up without a restart.

/** What a TLS handshake needs from a provider, or why it cannot have it (naming the file). */
export type CertificateMaterial =
  | {
      readonly ok: true;
      /** PEM roots; absent when the config names no ca_certificate_file, or a SPIFFE bundle map. */
      readonly ca?: Buffer;
      /** A87: the roots per SPIFFE trust domain, when the config names spiffe_trust_bundle_map_file. */
      readonly spiffeBundleMap?: SpiffeBundleMap;
      /** PEM identity chain and key; absent when the config names no certificate_file. */
      readonly certificate?: Buffer;
      readonly privateKey?: Buffer;
    }
  | { readonly ok: false; readonly error: string };

/** What a check of the files' contents needs: the time now, so that tests can pin it. */
export type Now = () => number;

/**
 * One file_watcher instance, shared by every connection that names it (A29: one instance per instance name).
 * `use()` starts the reads and returns the release; the timer is unref'd and stops with the last user.
 */
export class FileWatcherCertificateProvider {
  private users = 0;
  private timer: NodeJS.Timeout | null = null;
  private latest: Promise<CertificateMaterial> | null = null;
  /** A87: the last bundle map read well; a later read that fails keeps it. */
  private goodBundleMap: SpiffeBundleMap | undefined;

  /** `label` starts every error message: which provider (or which channel creds) the files belong to. */
  constructor(
    readonly label: string,
    readonly config: FileWatcherConfig,
    private readonly now: Now = Date.now,
  ) {}

  use(): () => void {
    if (this.users++ === 0) {
      this.refresh();
      this.timer = setInterval(() => this.refresh(), this.config.refreshIntervalMs);
      this.timer.unref();
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.users === 0) {
        if (this.timer !== null) clearInterval(this.timer);
        this.timer = null;
        this.latest = null;
      }
    };
  }

  /**
   * The material of the latest read (the first read when none finished yet), checked for expiry now: an
   * unreadable, unparsable or expired file gives an error naming it.
   */
  async material(): Promise<CertificateMaterial> {
    const read = await (this.latest ?? this.readFiles());
    if (!read.ok) return read;
    const expired = this.expiredFile(read);
    return expired === undefined ? read : { ok: false, error: expired };
  }

  private refresh(): void {
    const next = this.readFiles();
    // The previous read stays current until this one has finished.
    if (this.latest === null) this.latest = next;
    else void next.then(() => (this.latest = next));
  }

  private async readFiles(): Promise<CertificateMaterial> {
    const { certificateFile, privateKeyFile, caCertificateFile, spiffeTrustBundleMapFile } = this.config;
    try {
      // A87: with a bundle map, ca_certificate_file is not read.
      const [ca, spiffeBundleMap, certificate, privateKey] = await Promise.all([
        spiffeTrustBundleMapFile === undefined
          ? this.read('ca_certificate_file', caCertificateFile)
          : undefined,
        spiffeTrustBundleMapFile === undefined ? undefined : this.readBundleMap(spiffeTrustBundleMapFile),
        this.read('certificate_file', certificateFile),
        this.read('private_key_file', privateKeyFile),
      ]);
      return {
        ok: true,
        ...(ca !== undefined && { ca }),
        ...(spiffeBundleMap !== undefined && { spiffeBundleMap }),
        ...(certificate !== undefined && { certificate }),
        ...(privateKey !== undefined && { privateKey }),
      };
    } catch (e) {
      return { ok: false, error: (e as Error).message };
    }
  }

  private async read(field: string, file: string | undefined): Promise<Buffer | undefined> {
    if (file === undefined) return undefined;
    try {
      return await readFile(file);
    } catch (e) {
      throw new Error(`${this.describe(field, file)}: cannot read it: ${(e as Error).message}`);
    }
  }

  /**
   * A87: the map is checked when read; an unreadable or invalid file fails only while no good map was read (a
   * later failure keeps the previous map). An empty map is valid (it trusts no one).
   */
  private async readBundleMap(file: string): Promise<SpiffeBundleMap> {
    try {
      const text = (await this.read('spiffe_trust_bundle_map_file', file))!.toString('utf8');
      this.goodBundleMap = parseSpiffeBundleMap(text, this.describe('spiffe_trust_bundle_map_file', file));
      return this.goodBundleMap;
    } catch (e) {
      if (this.goodBundleMap !== undefined) return this.goodBundleMap;
      throw e;
    }
  }

  /** The identity's leaf certificate must be valid now; of the roots, at least one. */
  private expiredFile(m: CertificateMaterial & { ok: true }): string | undefined {
    const now = this.now();
    if (m.certificate !== undefined) {
      const leaf = pemCertificates(m.certificate)[0];
      const file = this.config.certificateFile!;
      if (leaf === undefined) return `${this.describe('certificate_file', file)}: no PEM certificate in it`;
      const problem = validityProblem(leaf, now);
      if (problem !== undefined) return `${this.describe('certificate_file', file)}: ${problem}`;
    }
    if (m.ca !== undefined) {
      const roots = pemCertificates(m.ca);
      const file = this.config.caCertificateFile!;
      if (roots.length === 0)
        return `${this.describe('ca_certificate_file', file)}: no PEM certificate in it`;
      const problems = roots.map((r) => validityProblem(r, now));
      if (problems.every((p) => p !== undefined)) {
        return `${this.describe('ca_certificate_file', file)}: ${problems[0]}`;
      }
    }
    return undefined;
  }

  private describe(field: string, file: string): string {
    return `${this.label} ${field} ${file}`;
  }
}

function validityProblem(pem: string, now: number): string | undefined {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pem);
  } catch (e) {
    return `not a valid certificate (${(e as Error).message})`;
  }
  if (Date.parse(cert.validTo) <= now) return `certificate expired at ${cert.validTo}`;
  if (Date.parse(cert.validFrom) > now) return `certificate not valid before ${cert.validFrom}`;
  return undefined;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function pemCertificates(pem: Buffer): string[] {
  return pem.toString('utf8').match(PEM_CERTIFICATE) ?? [];
}

/**
 * The bootstrap's certificate provider instances of one xDS client, made on first use and shared by every
 * channel of that client.
 */
export class CertificateProviderStore {
  private readonly made = new Map<string, FileWatcherCertificateProvider>();

  constructor(private readonly instances: ReadonlyMap<string, CertificateProviderInstance>) {}

  /** Undefined for a name the bootstrap lacks (the Cluster naming it was NACKed, so this is defensive). */
  get(instanceName: string): FileWatcherCertificateProvider | undefined {
    let provider = this.made.get(instanceName);
    if (provider === undefined) {
      const instance = this.instances.get(instanceName);
      if (instance === undefined) return undefined;
      provider = new FileWatcherCertificateProvider(
        `certificate provider "${instanceName}"`,
        instance.config,
      );
      this.made.set(instanceName, provider);
    }
    return provider;
  }

  /** Subchannel options are printed as JSON by grpc-js's subchannel trace: a short text, not the providers. */
  toJSON(): string {
    return `certificate providers ${[...this.instances.keys()].join(', ')}`;
  }
}
