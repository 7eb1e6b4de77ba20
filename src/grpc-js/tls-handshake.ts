import type { Socket } from 'node:net';
import { type ConnectionOptions, type TLSSocket, connect as tlsConnect } from 'node:tls';
import { type ChannelOptions, experimental } from '@grpc/grpc-js';

/**
 * A TLS handshake over a connected socket for a grpc-js SecureConnector: h2 by ALPN, the server certificate
 * validated by the context's roots and by `checkServerIdentity` (Node's host name check when not given), and
 * first by `verifyPeer` when given (A87's SPIFFE checks, whose errors say more than the roots' verdict).
 * Rejects with an Error whose message starts with `context`.
 */
export function tlsHandshake(
  socket: Socket,
  options: Pick<ConnectionOptions, 'secureContext' | 'servername' | 'checkServerIdentity'>,
  context: string,
  verifyPeer?: (socket: TLSSocket) => Error | undefined,
): Promise<experimental.SecureConnectResult> {
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => reject(new Error(`${context}: ${error.message}`));
    const closed = () => fail(new Error('socket closed during the TLS handshake'));
    const connectOptions = {
      socket,
      ALPNProtocols: ['h2'],
      ...options,
      // The verdict is read below, after verifyPeer's.
      ...(verifyPeer !== undefined && { rejectUnauthorized: false }),
    };
    const tlsSocket = tlsConnect(connectOptions, () => {
      tlsSocket.removeListener('error', fail);
      tlsSocket.removeListener('close', closed);
      const problem = verifyPeer?.(tlsSocket);
      if (problem !== undefined) {
        tlsSocket.destroy();
        fail(problem);
        return;
      }
      if (!tlsSocket.authorized) {
        tlsSocket.destroy();
        fail(new Error(`server certificate rejected: ${String(tlsSocket.authorizationError)}`));
        return;
      }
      resolve({ socket: tlsSocket, secure: true });
    });
    tlsSocket.once('error', fail);
    tlsSocket.once('close', closed);
  });
}

/** SNI for a target host: none for an IP address (Node rejects it) or an empty host. */
export function serverNameFor(host: string | undefined): string | undefined {
  if (host === undefined || host === '') return undefined;
  // A bracketed or bare IPv6 literal, or an IPv4 one.
  return /^[\d.]+$/.test(host) || host.includes(':') ? undefined : host;
}

/** The host a channel's TLS checks, as grpc-js's own TLS credentials take it (ssl_target_name_override wins). */
export function targetHost(target: experimental.GrpcUri, options: ChannelOptions): string {
  const override = options['grpc.ssl_target_name_override'];
  if (typeof override === 'string') return override;
  const path = target.path.replace(/^\//, '');
  return experimental.splitHostPort(path)?.host ?? path;
}
