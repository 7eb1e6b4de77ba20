import type { ConfigSource } from '../../protos/gen/envoy/config/core/v3/config_source_pb.js';

/** A27 / A47: a ConfigSource gRPC accepts for RDS, EDS and LRS names the ADS stream (`ads`) or the same server (`self`). */
export function isAdsOrSelf(source: ConfigSource): boolean {
  const kind = source.configSourceSpecifier.case;
  return kind === 'ads' || kind === 'self';
}
