// xDS resource types (A27 LDS / RDS / CDS / EDS): the XdsResourceType of each for the xDS client, the validated
// values they produce, and the pure helpers over them.
export { clusterResourceType, parseCluster } from './cluster.js';
export { endpointResourceType } from './endpoint.js';
export { ROUTER_FILTER_TYPE } from './http-filters.js';
export { listenerResourceType, parseListener } from './listener.js';
export { parseRouteConfiguration, routeConfigurationResourceType } from './route-configuration.js';
export { parseStringMatcher } from './route-match.js';
export { selectVirtualHost } from './select-virtual-host.js';
export * from './types.js';
