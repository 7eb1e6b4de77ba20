import { checkServerIdentity, createSecureContext, type SecureContext } from 'node:tls';
import { CallCredentials, ChannelCredentials, type ChannelOptions, type experimental } from '@grpc/grpc-js';
import type { FileWatcherCertificateProvider } from './certificate-provider.js';
import { serverNameFor, targetHost, tlsHandshake } from './tls-handshake.js';

// gRFC A65: the xDS server's `tls` channel creds. As A65 asks, the file_watcher provider supplies the files, so
// a rotated certificate is used by the next connection to the xDS server; no CA file means the system roots,
// no certificate file means no client certificate. The server is checked as any TLS server: roots and host name.

export class FileWatcherChannelCredentials extends ChannelCredentials {
  constructor(private readonly provider: FileWatcherCertificateProvider) {
    super();
  }

  _isSecure(): boolean {
    return true;
  }

  _equals(other: ChannelCredentials): boolean {
    return (
      other === this || (other instanceof FileWatcherChannelCredentials && other.provider === this.provider)
    );
  }

  _createSecureConnector(
    channelTarget: experimental.GrpcUri,
    options: ChannelOptions,
    callCredentials?: CallCredentials,
  ): experimental.SecureConnector {
    return new FileWatcherConnector(
      this.provider,
      targetHost(channelTarget, options),
      callCredentials ?? CallCredentials.createEmpty(),
    );
  }
}

class FileWatcherConnector implements experimental.SecureConnector {
  private readonly release: () => void;

  constructor(
    private readonly provider: FileWatcherCertificateProvider,
    private readonly host: string,
    private readonly callCredentials: CallCredentials,
  ) {
    this.release = provider.use();
  }

  async connect(socket: import('node:net').Socket): Promise<experimental.SecureConnectResult> {
    const context = await this.secureContext();
    const servername = serverNameFor(this.host);
    return tlsHandshake(
      socket,
      {
        secureContext: context,
        ...(servername !== undefined && { servername }),
        checkServerIdentity: (_host, cert) => checkServerIdentity(this.host, cert),
      },
      `TLS to the xDS server ${this.host}`,
    );
  }

  async waitForReady(): Promise<void> {}

  getCallCredentials(): CallCredentials {
    return this.callCredentials;
  }

  destroy(): void {
    this.release();
  }

  private async secureContext(): Promise<SecureContext> {
    const m = await this.provider.material();
    if (!m.ok) throw new Error(m.error);
    try {
      return createSecureContext({
        ...(m.ca !== undefined && { ca: m.ca }),
        ...(m.certificate !== undefined && { cert: m.certificate, key: m.privateKey }),
      });
    } catch (e) {
      throw new Error(`${this.provider.label}: bad certificate or key: ${(e as Error).message}`);
    }
  }
}
