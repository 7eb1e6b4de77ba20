import { experimental, Metadata, status } from '@grpc/grpc-js';
import { isUnixAddress, parseAddress } from '../core/index.js';

/**
 * The `endpoints:` target scheme: a fixed endpoint list in which one endpoint may have several addresses,
 * which grpc-js's own ipv4:/ipv6:/dns: resolvers cannot express (they give one address per endpoint).
 *
 *   endpoints:127.0.0.1:50051,[::1]:50051;127.0.0.1:50052
 *
 * `;` separates endpoints, `,` separates the addresses of one endpoint (`host:port`, `[v6]:port`,
 * `unix:/path`). Like grpc-js's ipv4: resolver, it reports its list once.
 */
export const ENDPOINTS_SCHEME = 'endpoints';

export function parseEndpointsTarget(path: string): experimental.Endpoint[] {
  const text = path.startsWith('/') && !path.startsWith('//') ? path.slice(1) : path;
  if (text.trim() === '') throw new TypeError('empty endpoint list');
  return text.split(';').map((endpoint) => ({
    addresses: endpoint.split(',').map((a) => {
      const address = parseAddress(a.trim());
      return isUnixAddress(address) ? { path: address.path } : { host: address.host, port: address.port };
    }),
  }));
}

export class EndpointsResolver implements experimental.Resolver {
  private reported = false;
  private readonly result: experimental.StatusOr<experimental.Endpoint[]>;

  constructor(
    target: experimental.GrpcUri,
    private readonly listener: experimental.ResolverListener,
  ) {
    try {
      this.result = experimental.statusOrFromValue(parseEndpointsTarget(target.path));
    } catch (e) {
      this.result = experimental.statusOrFromError({
        code: status.UNAVAILABLE,
        details: `invalid ${ENDPOINTS_SCHEME}: target "${target.path}": ${(e as Error).message}`,
        metadata: new Metadata(),
      });
    }
  }

  updateResolution(): void {
    if (this.reported) return;
    this.reported = true;
    process.nextTick(() => this.listener(this.result, {}, null, ''));
  }

  destroy(): void {
    this.reported = false;
  }

  static getDefaultAuthority(target: experimental.GrpcUri): string {
    return target.path.replace(/^\//, '').split(/[;,]/)[0] ?? 'localhost';
  }
}
