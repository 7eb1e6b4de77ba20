import { type ChannelOptions, experimental } from '@grpc/grpc-js';
import { ENDPOINTS_SCHEME, EndpointsResolver } from './endpoints-resolver.js';

// grpc-js does not export its constructor type; this is derived from registerResolver.
type ResolverClass = Parameters<typeof experimental.registerResolver>[1];

const DNS_SCHEME = 'dns';

/** The resolver the front passes DNS targets to: the `dns` scheme's when the front was put up. */
let dnsResolver: ResolverClass | undefined;

/**
 * The resolver for a target of lbtree's that grpc-js misread as a DNS name, or null for any other.
 * grpc-js reads a target as a DNS name when its URI does not parse: `endpoints:` with nothing after it
 * (grpc-js's URI needs a path), which its DNS resolver fails with "Failed to parse DNS address
 * dns:endpoints:". Only a name grpc-js's DNS resolver cannot parse is taken.
 */
function misreadTargetResolver(
  target: experimental.GrpcUri,
  listener: experimental.ResolverListener,
): experimental.Resolver | null {
  const { path } = target;
  if (experimental.splitHostPort(path) !== null) return null;
  const endpointsPrefix = `${ENDPOINTS_SCHEME}:`;
  if (path.startsWith(endpointsPrefix)) {
    return new EndpointsResolver(
      { scheme: ENDPOINTS_SCHEME, path: path.slice(endpointsPrefix.length) },
      listener,
    );
  }
  return null;
}

/**
 * Stands in front of the `dns` scheme's resolver: a target of lbtree's that grpc-js misread as a DNS name
 * fails with lbtree's error for it; every other target goes to the DNS resolver, unchanged.
 */
class DnsFront implements experimental.Resolver {
  private readonly resolver: experimental.Resolver;

  constructor(
    target: experimental.GrpcUri,
    listener: experimental.ResolverListener,
    options: ChannelOptions,
  ) {
    this.resolver = misreadTargetResolver(target, listener) ?? new dnsResolver!(target, listener, options);
  }

  updateResolution(): void {
    this.resolver.updateResolution();
  }

  destroy(): void {
    this.resolver.destroy();
  }

  static getDefaultAuthority(target: experimental.GrpcUri): string {
    return dnsResolver!.getDefaultAuthority(target);
  }
}

/** Puts the front up (once): register() calls it. */
export function frontDnsResolver(): void {
  if (dnsResolver !== undefined) return;
  // grpc-js exports its resolvers' classes only through instances: the class of one made and dropped.
  const probe = experimental.createResolver({ scheme: DNS_SCHEME, path: 'localhost' }, () => true, {});
  probe.destroy();
  dnsResolver = probe.constructor as ResolverClass;
  experimental.registerResolver(DNS_SCHEME, DnsFront);
}
