// EDS: envoy.config.endpoint.v3.ClusterLoadAssignment, validated by cluster-load-assignment.ts (A27, A61
// additional_addresses, A76 hash keys, and policy.drop_overloads as parts per million by category); read by
// cluster-load-assignment-wire.ts's fast path when it can.

import { CLUSTER_LOAD_ASSIGNMENT_TYPE_URL } from '../../protos/type-urls.js';
import type { XdsResourceType } from '../client/resource-type.js';
import { decodeClusterLoadAssignment, parseClusterLoadAssignment } from './cluster-load-assignment.js';
import { readClusterLoadAssignment } from './cluster-load-assignment-wire.js';
import type { XdsEndpointResource } from './types.js';
import { decodeResource } from './validation.js';
import { decodeOptions } from './xds-options.js';

/** EDS (A27): a ClusterLoadAssignment missing from a response is not deleted (it is not required in SotW). */
export const endpointResourceType: XdsResourceType<XdsEndpointResource> = {
  typeUrl: CLUSTER_LOAD_ASSIGNMENT_TYPE_URL,
  allResourcesRequiredInSotW: false,
  decode: (bytes, context) => {
    const options = decodeOptions(context);
    const lean = readClusterLoadAssignment(bytes, options);
    if (lean !== undefined) return { ok: true, name: lean.clusterName, value: lean };
    return decodeResource(
      () => decodeClusterLoadAssignment(bytes),
      (cla) => cla.clusterName,
      (cla) => parseClusterLoadAssignment(cla, options),
    );
  },
};
