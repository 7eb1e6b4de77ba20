// The per-endpoint attributes the xDS layers set (the cds tree builder) and read (xds_override_host, ring_hash's
// callers, the live view): a contract between them, so neither imports the other.

import { AttributeKey } from '../core/index.js';
import type { XdsHealthStatus, XdsLocalityName } from './resources/cluster-load-assignment.js';

/** The endpoint's locality as EDS gives it (LOCALITY holds its text key). */
export const XDS_LOCALITY_NAME = new AttributeKey<XdsLocalityName>('lbtree.xds.locality_name');
/** The EDS priority an endpoint was listed under (0 is the highest). */
export const XDS_PRIORITY = new AttributeKey<number>('lbtree.xds.priority');
/** The endpoint's EDS health status (UNKNOWN, HEALTHY, and DRAINING where xds_override_host is in the tree). */
export const XDS_HEALTH_STATUS = new AttributeKey<XdsHealthStatus>('lbtree.xds.health_status');
