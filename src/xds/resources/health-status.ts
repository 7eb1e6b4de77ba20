// EDS health status as gRPC keeps it (A27: UNKNOWN and HEALTHY endpoints are used; A55: DRAINING ones stay for
// sessions that name them), and A55's default override_host_status. No runtime imports: xds_override_host
// reads it without loading the decoders.

export type XdsHealthStatus = 'UNKNOWN' | 'HEALTHY' | 'DRAINING';

/** A55 override_host_status: "Default is [UNKNOWN, HEALTHY]". */
export const DEFAULT_OVERRIDE_HOST_STATUS: readonly XdsHealthStatus[] = Object.freeze(['UNKNOWN', 'HEALTHY']);
