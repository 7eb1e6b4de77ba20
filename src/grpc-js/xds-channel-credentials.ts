import type { Socket } from 'node:net';
import { createSecureContext, type PeerCertificate, type SecureContext } from 'node:tls';
import { CallCredentials, ChannelCredentials, type ChannelOptions, type experimental } from '@grpc/grpc-js';
import type { XdsCertificateProviderRef, XdsUpstreamTls } from '../xds/resources/tls-context.js';
import { ClusterTransportSecurity } from '../xds/transport-security.js';
import type { CertificateMaterial, CertificateProviderStore } from './certificate-provider.js';
import { parseSubjectAltNames, sansMatch } from './san-check.js';
import { type SpiffeBundleMap, spiffeVerificationError } from './spiffe.js';
import { serverNameFor, targetHost, tlsHandshake } from './tls-handshake.js';
import { XDS_CERTIFICATE_PROVIDERS_OPTION, XDS_TRANSPORT_SECURITY_OPTION } from './xds-security-options.js';

// gRFC A29 "Programming API": credentials that let the control plane choose the transport security of each
// cluster's connections. A connection to a cluster with an UpstreamTlsContext uses TLS with the certificates of
// the bootstrap's provider instances it names (or the system roots, A82) and checks the server certificate's
// SANs; anything else (no xDS, or a cluster without TLS) uses the fallback credentials. A failure is never a
// reason to fall back: the connection attempt fails with a message naming the cluster and the cause.

type SecureConnector = experimental.SecureConnector;
type SecureConnectResult = experimental.SecureConnectResult;

/** `new XdsChannelCredentials(credentials.createInsecure())`, as A29's XdsChannelCredentials. */
export class XdsChannelCredentials extends ChannelCredentials {
  constructor(readonly fallbackCredentials: ChannelCredentials) {
    super();
  }

  _isSecure(): boolean {
    return true;
  }

  _equals(other: ChannelCredentials): boolean {
    return (
      other === this ||
      (other instanceof XdsChannelCredentials && this.fallbackCredentials._equals(other.fallbackCredentials))
    );
  }

  _createSecureConnector(
    channelTarget: experimental.GrpcUri,
    options: ChannelOptions,
    callCredentials?: CallCredentials,
  ): SecureConnector {
    const fallback = this.fallbackCredentials._createSecureConnector(channelTarget, options, callCredentials);
    const security: unknown = options[XDS_TRANSPORT_SECURITY_OPTION];
    if (!(security instanceof ClusterTransportSecurity)) return fallback;
    const store = options[XDS_CERTIFICATE_PROVIDERS_OPTION] as CertificateProviderStore | undefined;
    return new XdsSecureConnector(
      security,
      store,
      fallback,
      callCredentials ?? CallCredentials.createEmpty(),
      // SNI: the target's host as grpc-js sends it (A29 ignores the context's `sni`).
      serverNameFor(targetHost(channelTarget, options)),
    );
  }
}

/**
 * One subchannel's connector. The cluster's config is read at each attempt, so an update of the cluster
 * applies to the next connection; provider instances stay in use (their files re-read) while it lives.
 */
class XdsSecureConnector implements SecureConnector {
  private readonly releases = new Map<string, () => void>();

  constructor(
    private readonly security: ClusterTransportSecurity,
    private readonly store: CertificateProviderStore | undefined,
    private readonly fallback: SecureConnector,
    private readonly callCredentials: CallCredentials,
    private readonly servername: string | undefined,
  ) {}

  async connect(socket: Socket): Promise<SecureConnectResult> {
    const tls = this.security.upstreamTls;
    if (tls === undefined) return this.fallback.connect(socket);
    const { context, spiffeBundleMap } = await this.secureContext(tls);
    return tlsHandshake(
      socket,
      {
        secureContext: context,
        ...(this.servername !== undefined && { servername: this.servername }),
        // A29: the SAN check replaces the host name check of Web PKI.
        checkServerIdentity: (_host: string, cert: PeerCertificate) => sanCheck(tls, cert),
      },
      `xDS TLS to cluster ${this.security.cluster}`,
      // A87: the roots are every trust domain's; the peer's own domain must be the one its chain leads to.
      spiffeBundleMap &&
        ((tlsSocket) => spiffeVerificationError(tlsSocket.getPeerCertificate(true), spiffeBundleMap)),
    );
  }

  async waitForReady(): Promise<void> {
    // Certificates are loaded per attempt in connect(), where a failure can name its file.
    if (this.security.upstreamTls === undefined) await this.fallback.waitForReady();
  }

  getCallCredentials(): CallCredentials {
    return this.security.upstreamTls === undefined
      ? this.fallback.getCallCredentials()
      : this.callCredentials;
  }

  destroy(): void {
    for (const release of this.releases.values()) release();
    this.releases.clear();
    this.fallback.destroy();
  }

  private async secureContext(
    tls: XdsUpstreamTls,
  ): Promise<{ context: SecureContext; spiffeBundleMap: SpiffeBundleMap | undefined }> {
    const roots = tls.caCertificates;
    const ca = roots.kind === 'provider' ? await this.material(roots.provider) : undefined;
    const identity = tls.identityCertificate && (await this.material(tls.identityCertificate));
    if (ca !== undefined && ca.ca === undefined && ca.spiffeBundleMap === undefined) {
      throw new Error(
        this.problem(roots.kind === 'provider' ? roots.provider : undefined, 'names no ca_certificate_file'),
      );
    }
    if (identity !== undefined && identity.certificate === undefined) {
      throw new Error(this.problem(tls.identityCertificate, 'names no certificate_file'));
    }
    const spiffeBundleMap = ca?.spiffeBundleMap;
    try {
      // A82: with system_root_certs, `ca` is left out and Node's default roots validate the server. A87: a
      // bundle map's roots are all handed over (an empty list trusts no one).
      const context = createSecureContext({
        ...(ca?.ca !== undefined && { ca: ca.ca }),
        ...(spiffeBundleMap !== undefined && { ca: [...spiffeBundleMap.allRootsPem] }),
        ...(identity?.certificate !== undefined && { cert: identity.certificate, key: identity.privateKey }),
      });
      return { context, spiffeBundleMap };
    } catch (e) {
      throw new Error(
        `xDS TLS to cluster ${this.security.cluster}: bad certificate or key: ${(e as Error).message}`,
      );
    }
  }

  /** The provider's current material, or an error naming the cluster and the file. */
  private async material(ref: XdsCertificateProviderRef): Promise<CertificateMaterial & { ok: true }> {
    const provider = this.store?.get(ref.instanceName);
    if (provider === undefined) {
      throw new Error(this.problem(ref, 'is not in the bootstrap of this channel'));
    }
    if (!this.releases.has(ref.instanceName)) this.releases.set(ref.instanceName, provider.use());
    const m = await provider.material();
    if (!m.ok) throw new Error(`xDS TLS to cluster ${this.security.cluster}: ${m.error}`);
    return m;
  }

  private problem(ref: XdsCertificateProviderRef | undefined, what: string): string {
    return `xDS TLS to cluster ${this.security.cluster}: certificate provider "${ref?.instanceName}" ${what}`;
  }
}

/** A29 "Server Authorization": undefined when the certificate passes, else the error that fails the handshake. */
function sanCheck(tls: XdsUpstreamTls, cert: PeerCertificate): Error | undefined {
  const matchers = tls.matchSubjectAltNames;
  if (matchers.length === 0) return undefined;
  const sans = parseSubjectAltNames(cert.subjectaltname);
  if (sansMatch(sans, matchers)) return undefined;
  const seen = sans.length === 0 ? 'none' : sans.map((s) => `${s.type}:${s.value}`).join(', ');
  return new Error(
    `certificate check failure: no subject alternative name of the server certificate (${seen}) matches match_subject_alt_names`,
  );
}
