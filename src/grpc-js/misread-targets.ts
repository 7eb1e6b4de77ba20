import { type ChannelOptions, experimental, Metadata, status } from '@grpc/grpc-js';
import { canonicalTarget } from './channel-metrics.js';
import { CHANNEL_KEY_OPTION, CHANNEL_TARGET_OPTION, newChannelKey } from './channel-registry.js';
import { ENDPOINTS_SCHEME, EndpointsResolver } from './endpoints-resolver.js';
import { withRetryMetrics } from './service-config-retry-metrics.js';
import { XDS_SCHEME } from './xds-resolver.js';

// grpc-js does not export its constructor type; this is derived from registerResolver.
type ResolverClass = Parameters<typeof experimental.registerResolver>[1];

const DNS_SCHEME = 'dns';

/** The resolver the front passes DNS targets to: the `dns` scheme's when the front was put up. */
let dnsResolver: ResolverClass | undefined;

/** Reports one error at every resolution. */
class FailingResolver implements experimental.Resolver {
  private destroyed = false;

  constructor(
    private readonly details: string,
    private readonly listener: experimental.ResolverListener,
  ) {}

  updateResolution(): void {
    this.destroyed = false;
    process.nextTick(() => {
      if (this.destroyed) return;
      const error = { code: status.UNAVAILABLE, details: this.details, metadata: new Metadata() };
      this.listener(experimental.statusOrFromError(error), {}, null, '');
    });
  }

  destroy(): void {
    this.destroyed = true;
  }
}

/**
 * The resolver for a target of lbtree's that grpc-js misread as a DNS name, or null for any other.
 * grpc-js reads a target as a DNS name when its URI does not parse, or when no resolver is registered for
 * its scheme: `endpoints:` with nothing after it (grpc-js's URI needs a path), and `xds:///name` when
 * neither lbtree's `register({ xds: true })` nor @grpc/grpc-js-xds registered the `xds` scheme. Its DNS
 * resolver fails them with "Failed to parse DNS address dns:…". Only a name it cannot parse is taken.
 */
function misreadTargetResolver(
  target: experimental.GrpcUri,
  listener: experimental.ResolverListener,
  options: ChannelOptions,
): experimental.Resolver | null {
  const { path } = target;
  if (experimental.splitHostPort(path) !== null) return null;
  const endpointsPrefix = `${ENDPOINTS_SCHEME}:`;
  if (path.startsWith(endpointsPrefix)) {
    return new EndpointsResolver(
      { scheme: ENDPOINTS_SCHEME, path: path.slice(endpointsPrefix.length) },
      listener,
      options,
    );
  }
  if (path.startsWith(`${XDS_SCHEME}:`)) {
    return new FailingResolver(
      `no resolver is registered for ${XDS_SCHEME}: targets, so grpc-js read "${path}" as a DNS name: call ` +
        `register({ xds: true }) from lbtree/grpc-js (or @grpc/grpc-js-xds's register()) before creating the channel`,
      listener,
    );
  }
  return null;
}

/**
 * The DNS resolver's results with the channel's target added, for A66's `grpc.target` label, and the
 * channel's key (this resolver's: one per channel) for its registry entry.
 */
function withTarget(
  target: experimental.GrpcUri,
  listener: experimental.ResolverListener,
): experimental.ResolverListener {
  const added = { [CHANNEL_TARGET_OPTION]: canonicalTarget(target), [CHANNEL_KEY_OPTION]: newChannelKey() };
  return (endpoints, attributes, serviceConfig, resolutionNote) =>
    listener(endpoints, { ...attributes, ...added }, serviceConfig, resolutionNote);
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
    this.resolver =
      misreadTargetResolver(target, listener, options) ??
      new dnsResolver!(target, withTarget(target, withRetryMetrics(listener, target, options)), options);
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
