// lbtree/control-plane: an xDS control plane (ADS v3, state of the world) on grpc-js, the bootstrap its
// clients need, and builders for the resources it serves.

export {
  allResourcesRequiredInSotW,
  CLUSTER_LOAD_ASSIGNMENT_TYPE_URL,
  CLUSTER_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_CONFIGURATION_TYPE_URL,
  shortTypeName,
} from '../protos/type-urls.js';
export type { XdsBootstrapJson } from '../xds/client/bootstrap.js';
export { ADS_SERVICE, STREAM_AGGREGATED_RESOURCES_PATH } from './ads-service.js';
export type { AckRecord, ExchangeRecord, NackRecord, StreamEvent, TypeSubscription } from './ads-stream.js';
export { type BootstrapOptions, bootstrapFor } from './bootstrap.js';
export * from './builders.js';
export {
  type AnswerFilter,
  type ClientInfo,
  ControlPlane,
  type ControlPlaneEvent,
  type ControlPlaneOptions,
} from './control-plane.js';
export {
  type ClusterLoadTotals,
  DEFAULT_LOAD_REPORTING_INTERVAL_MS,
  type LoadReportingRequest,
  type LocalityLoadTotals,
  loadStatsResponse,
  localityName,
  type ReceivedClusterLoad,
  type ReceivedLoadReport,
  type ReceivedLocalityLoad,
  type ReceivedMetric,
  sumLoadReports,
} from './load-reports.js';
export { LRS_SERVICE, STREAM_LOAD_STATS_PATH } from './lrs-service.js';
export { loadResourceFile, parseResourceText, watchFileContent } from './resource-file.js';
export {
  type RawResource,
  type ResourceInput,
  type ResourceJson,
  ResourceSet,
  type ServedResource,
} from './resource-set.js';
