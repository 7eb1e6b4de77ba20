import { type ChannelOptions, experimental, Metadata, status } from '@grpc/grpc-js';
import { isUnixAddress, parseAddress } from '../core/index.js';
import { canonicalTarget } from './channel-metrics.js';
import { CHANNEL_KEY_OPTION, CHANNEL_TARGET_OPTION, newChannelKey } from './channel-registry.js';
import { withRetryMetrics } from './service-config-retry-metrics.js';

/**
 * The `endpoints:` target scheme: a fixed endpoint list in which one endpoint may have several addresses,
 * which grpc-js's own ipv4:/ipv6:/dns: resolvers cannot express (they give one address per endpoint).
 *
 *   endpoints:127.0.0.1:50051,[::1]:50051;127.0.0.1:50052
 *   endpoints:p0/zone-a=127.0.0.1:50051;p1/zone-b=127.0.0.1:50052
 *
 * `;` separates endpoints, `,` separates the addresses of one endpoint (`host:port`, `[v6]:port`,
 * `unix:/path`). An optional `a/b=` prefix gives the endpoint an A56 hierarchical path (`['a', 'b']`), so
 * priority and weighted_target trees can run without xDS. Like grpc-js's ipv4: resolver, it reports its
 * list once.
 */
export const ENDPOINTS_SCHEME = 'endpoints';

/** An endpoint as grpc-js sees it, carrying its path in the field @grpc/grpc-js-xds also uses. */
export interface PathEndpoint extends experimental.Endpoint {
  localityPath?: string[];
}

export function parseEndpointsTarget(path: string): PathEndpoint[] {
  const text = path.startsWith('/') && !path.startsWith('//') ? path.slice(1) : path;
  if (text.trim() === '') throw new TypeError('empty endpoint list');
  return text.split(';').map((entry) => {
    const eq = entry.indexOf('=');
    const addresses = (eq >= 0 ? entry.slice(eq + 1) : entry).split(',').map((a) => {
      const address = parseAddress(a.trim());
      return isUnixAddress(address) ? { path: address.path } : { host: address.host, port: address.port };
    });
    if (eq < 0) return { addresses };
    const localityPath = entry.slice(0, eq).trim().split('/');
    if (localityPath.some((p) => p === '')) throw new TypeError(`empty path element in "${entry}"`);
    return { addresses, localityPath };
  });
}

export class EndpointsResolver implements experimental.Resolver {
  private reported = false;
  private readonly result: experimental.StatusOr<experimental.Endpoint[]>;
  /** Tells the root policy the channel's target (the live view lists channels by it) and the channel's key. */
  private readonly attributes: Record<string, unknown>;
  private readonly listener: experimental.ResolverListener;

  constructor(
    target: experimental.GrpcUri,
    listener: experimental.ResolverListener,
    options: ChannelOptions = {},
  ) {
    // A96: the calls' retry metrics, when the channel records them.
    this.listener = withRetryMetrics(listener, target, options);
    this.attributes = {
      [CHANNEL_TARGET_OPTION]: canonicalTarget(target),
      [CHANNEL_KEY_OPTION]: newChannelKey(),
    };
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
    process.nextTick(() => this.listener(this.result, this.attributes, null, ''));
  }

  destroy(): void {
    this.reported = false;
  }

  static getDefaultAuthority(target: experimental.GrpcUri): string {
    const first = target.path.replace(/^\//, '').split(/[;,]/)[0] ?? 'localhost';
    return first.slice(first.indexOf('=') + 1);
  }
}
