import { AttributeKey } from './attributes.js';

// The label names of A66 / A78 / A89 / A91 / A94, and the attributes that carry their values down the tree.

/** A66: the channel's canonical target URI; the channel's recorder adds it to every recording. */
export const TARGET_LABEL = 'grpc.target';
/** A78: `{region="…", zone="…", sub_zone="…"}`, or "" without locality information. */
export const LOCALITY_LABEL = 'grpc.lb.locality';
/** A89: the backend service (the xDS cluster name). */
export const BACKEND_SERVICE_LABEL = 'grpc.lb.backend_service';

/**
 * A94: the per-endpoint attribute holding the endpoint's `grpc.lb.locality` value, set by the xDS tree (the
 * endpoints of a cluster span several localities). weighted_round_robin reads it too: under
 * xds_wrr_locality all its endpoints share one locality.
 */
export const METRIC_LOCALITY = new AttributeKey<string>('lbtree.metrics.locality');
/** A94: the per-endpoint copy of the backend service, for the subchannel's metrics. */
export const METRIC_BACKEND_SERVICE = new AttributeKey<string>('lbtree.metrics.backend_service');
/**
 * A89: the resolver attribute (an update's `attributes` key) naming the backend service, set by cds for the
 * tree below it; weighted_round_robin and outlier_detection read it.
 */
export const BACKEND_SERVICE_ARG: unique symbol = Symbol('lbtree.metrics.backend_service');

/** A78's locality label value. */
export function localityLabelValue(region: string, zone: string, subZone: string): string {
  return `{region="${region}", zone="${zone}", sub_zone="${subZone}"}`;
}
