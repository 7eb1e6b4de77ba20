import { createServer, type Server } from 'node:http';
import { isIP } from 'node:net';
import { type AdminHandlerOptions, createAdminHandler } from './admin-handler.js';

export interface AdminServerOptions extends Omit<AdminHandlerOptions, 'allowedHosts' | 'basePath'> {
  /** The port to listen on; 0 picks a free one (the result's `port` says which). */
  readonly port: number;
  /** Default 127.0.0.1. Anything but a loopback address is refused unless `allowRemote` is true. */
  readonly host?: string;
  /**
   * Listen beyond loopback, and serve requests whatever their Host header names. The view shows every
   * channel's backends and xDS resources: put it behind your own access control.
   */
  readonly allowRemote?: boolean;
}

export interface AdminServer {
  /** The live view's address, e.g. http://127.0.0.1:8081/. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Whether `host` is a loopback name or address (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/**
 * Starts the live view (lbtree/admin) on its own node:http server. Rejects with an error naming the problem:
 * a host that is not loopback without `allowRemote`, a bad port, or the listen error (a port in use).
 */
export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  const host = options.host ?? '127.0.0.1';
  const allowRemote = options.allowRemote === true;
  if (!allowRemote && !isLoopback(host)) {
    throw new Error(
      `lbtree admin: refusing to listen on host ${JSON.stringify(host)}: the live view shows your channels' ` +
        'backends and xDS resources, so it listens on loopback only unless you pass allowRemote: true',
    );
  }
  if (!(Number.isInteger(options.port) && options.port >= 0 && options.port <= 65535)) {
    throw new RangeError(`lbtree admin: port must be an integer in [0, 65535], got ${options.port}`);
  }
  const handler = createAdminHandler({
    ...options,
    ...(!allowRemote && { allowedHosts: isLoopback }),
  });
  const server: Server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) =>
      reject(new Error(`lbtree admin: cannot listen on ${host}:${options.port}: ${e.message}`)),
    );
    server.listen(options.port, host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}/`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Live pages hold their event streams open.
        server.closeAllConnections();
      }),
  };
}
