import { type experimental, getChannelzHandlers } from '@grpc/grpc-js';
import type { SecurityLevel } from '../core/index.js';

type Handler = (call: unknown, callback: (error: unknown, response?: unknown) => void) => void;

interface SubchannelReply {
  readonly subchannel?: { readonly socket_ref?: readonly { readonly socket_id?: string | number }[] };
}
interface SocketReply {
  readonly socket?: { readonly security?: unknown };
}

/**
 * A94's `grpc.security_level` of a grpc-js subchannel's open connection, read from what grpc-js reports of
 * the socket through channelz (its public handlers, which answer synchronously): a TLS socket (TLS or mTLS
 * credentials, XdsChannelCredentials with a cluster's TLS config) is "privacy_and_integrity", a plain one
 * "none". Undefined when it cannot be told: channelz off (`grpc.enable_channelz: 0`), or no connection.
 */
export function connectionSecurityLevel(
  subchannel: experimental.SubchannelInterface,
): SecurityLevel | undefined {
  try {
    const handlers = getChannelzHandlers() as unknown as Record<string, Handler>;
    let socketId: string | number | undefined;
    handlers.GetSubchannel!(
      { request: { subchannel_id: String(subchannel.getChannelzRef().id) } },
      (error, response) => {
        const sockets = error ? undefined : (response as SubchannelReply | undefined)?.subchannel?.socket_ref;
        // A READY subchannel has one connection; the newest is the one just made.
        socketId = sockets?.[sockets.length - 1]?.socket_id;
      },
    );
    if (socketId === undefined) return undefined;
    let level: SecurityLevel | undefined;
    handlers.GetSocket!({ request: { socket_id: String(socketId) } }, (error, response) => {
      const socket = error ? undefined : (response as SocketReply | undefined)?.socket;
      if (socket !== undefined) level = socket.security ? 'privacy_and_integrity' : 'none';
    });
    return level;
  } catch {
    return undefined;
  }
}
