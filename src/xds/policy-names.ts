// The gRFC names of the xDS policies: the resolver writes them into the service config it builds (A31, A74)
// and the balancer registers its policies under them, so neither imports the other for a name.

/** A31 / A74: the root of an xds: channel's tree, one child per cluster the routes can pick. */
export const XDS_CLUSTER_MANAGER = 'xds_cluster_manager_experimental';
/** A74: one cluster, its tree built from the XdsConfig. */
export const CDS = 'cds_experimental';
/** A37 / A74: drops, circuit breaking and call counting for one cluster. */
export const XDS_CLUSTER_IMPL = 'xds_cluster_impl_experimental';
/** A55 / A60: stateful session affinity. */
export const XDS_OVERRIDE_HOST = 'xds_override_host_experimental';
