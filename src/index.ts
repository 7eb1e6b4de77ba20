// lbtree's public face (docs/api.md describes it): the LB API, every policy (factory, config parser and
// config type, channel settings, the policy class) and the registry helpers; XXH64 as ring_hash uses it.
// Machinery shared between policies (petioles, endpoint lists, pickers, counters) stays internal: tests,
// benchmarks and the other layers import it from its own module. Importing this entry loads no regex
// engine: RE2 comes with the xDS route hash policies (`lbtree/xds`, the grpc-js adapter).
// Subpath entries: `lbtree/sim` (the deterministic simulator), `lbtree/grpc-js` (the @grpc/grpc-js
// adapter), `lbtree/xds` (xDS-configured policies).

// The LB API, by name: what a user needs to feed a policy, read its pickers and write a policy of their own.
// Core's machinery (backoff, helper forwarders, hierarchical splits, config-reading internals, the ORCA
// stream, counters for tests) stays internal, like the policies' shared machinery.
export {
  type Address,
  addressKey,
  isUnixAddress,
  parseAddress,
  type TcpAddress,
  tcpAddress,
  type UnixAddress,
  unixAddress,
} from './core/address.js';
export { AttributeKey, Attributes } from './core/attributes.js';
export type {
  BackendMetricReport,
  BackendMetricsListener,
  CallEndDetails,
  CallEndedHook,
} from './core/backend-metrics.js';
export { type ChannelArgs, NO_CHANNEL_ARGS } from './core/channel-args.js';
export { type CancelTimer, type Clock, realClock } from './core/clock.js';
export { ConfigError, childPath } from './core/config-error.js';
export { ConfigReader } from './core/config-reader.js';
// What a Helper's optional `connectionPacer` offers (issue 25 §5: connection requests spread over event-loop turns).
export type { ConnectionPacer, PacedConnection } from './core/connection-pacer.js';
export {
  CONNECTING,
  type ConnectivityState,
  IDLE,
  READY,
  SHUTDOWN,
  TRANSIENT_FAILURE,
} from './core/connectivity-state.js';
export { type Endpoint, endpoint, endpointKey } from './core/endpoint.js';
export {
  ENDPOINT_WEIGHT,
  HASH_KEY,
  HIERARCHICAL_PATH,
  LOCALITY,
  LOCALITY_WEIGHT,
} from './core/endpoint-attributes.js';
export {
  type InstrumentDescriptor,
  type InstrumentType,
  registeredInstruments,
} from './core/instrument-registry.js';
export type {
  Helper,
  LbUpdate,
  LoadBalancer,
  ParsedLbConfig,
  PolicyFactory,
  PolicyLookup,
  Trace,
} from './core/load-balancer.js';
export { METRIC_BACKEND_SERVICE, METRIC_LOCALITY } from './core/metric-labels.js';
export type { GaugeReporter, MetricLabels, MetricsRecorder } from './core/metrics-recorder.js';
export {
  type CallAttributes,
  type CallMetadata,
  type CompletePick,
  type DropPick,
  type FailPick,
  type PickArgs,
  type Picker,
  type PickResult,
  type QueuePick,
  queuePicker,
} from './core/picker.js';
export type { ChildNode, PolicyFact, PolicyNode, SubchannelNode } from './core/policy-node.js';
export { type RegisterOptions, Registry } from './core/registry.js';
export { Code, OK_STATUS, type Status, status, unavailable } from './core/status.js';
export { err, ok, type StatusOr } from './core/status-or.js';
export type {
  StateListener,
  Subchannel,
  SubchannelHealthWatcher,
  SubchannelStateWatcher,
  Unwatch,
} from './core/subchannel.js';
// Subchannel watches in object and function form (docs/api.md "Subchannel watches").
export {
  unwatchSubchannelHealth,
  unwatchSubchannelState,
  watchHealthWithListener,
  watchStateWithListener,
  watchSubchannelHealth,
  watchSubchannelState,
} from './core/subchannel-watch.js';
// What a Helper's optional `updateTurns` offers (issue 25 §5: big updates spread over event-loop turns).
export type { UpdateTurns } from './core/update-turns.js';
export {
  forEachWatcher,
  hasWatcher,
  isWatcherArray,
  type WatcherSet,
  withoutWatcher,
  withWatcher,
} from './core/watcher-set.js';
export { xxh64, xxh64Into } from './hash/xxh64.js';
// A79 metrics: a MeterProvider for every channel (the grpc-js adapter's `register({ metrics })` calls this),
// and a recorder to hand a Helper (the simulator, a user's own channel).
export {
  addGlobalMetrics,
  type MeterProviderShape,
  type MetricsOptions,
  metricsRecorderFor,
} from './metrics/index.js';
// Each policy: its gRFC name, factory, config parser and config type, the channel settings it reads (with
// defaults and limits) and its class, for direct use under a Helper (the simulator and benchmarks do);
// the registry helpers; `buildRing`, the ring ring_hash builds for a set of weighted endpoints.
export {
  ALL_POLICIES,
  buildRing,
  CONNECTION_ATTEMPT_DELAY_ARG,
  DEFAULT_CHOICE_COUNT,
  DEFAULT_CONNECTION_ATTEMPT_DELAY_MS,
  DEFAULT_MAX_RING_SIZE,
  DEFAULT_MIN_RING_SIZE,
  DEFAULT_PRIORITY_CHILD_RETENTION_MS,
  DEFAULT_PRIORITY_FAILOVER_TIMEOUT_MS,
  DEFAULT_RING_SIZE_CAP,
  defaultRegistry,
  LEAST_REQUEST,
  LeastRequest,
  type LeastRequestConfig,
  leastRequestFactory,
  MAX_CHOICE_COUNT,
  MAX_CONNECTION_ATTEMPT_DELAY_MS,
  MAX_RING_SIZE_LIMIT,
  MIN_CHOICE_COUNT,
  MIN_CONNECTION_ATTEMPT_DELAY_MS,
  OUTLIER_DETECTION,
  OUTLIER_DETECTION_DEFAULTS,
  OutlierDetection,
  type OutlierDetectionConfig,
  outlierDetectionFactory,
  PICK_FIRST,
  PickFirst,
  type PickFirstConfig,
  POLICY_ALIASES,
  PRIORITY,
  PRIORITY_CHILD_POLICY_CACHE_ARG,
  PRIORITY_CHILD_POLICY_CACHE_ENV,
  PRIORITY_CHILD_RETENTION_ARG,
  PRIORITY_FAILOVER_TIMEOUT_ARG,
  type PriorityChildConfig,
  type PriorityConfig,
  PriorityLb,
  parseLeastRequestConfig,
  parseOutlierDetectionConfig,
  parsePickFirstConfig,
  parsePriorityConfig,
  parseRingHashConfig,
  parseWeightedTargetConfig,
  parseWrrLocalityConfig,
  pickFirstFactory,
  priorityFactory,
  RING_HASH,
  RING_SIZE_CAP_ARG,
  type Ring,
  RingHash,
  type RingHashConfig,
  ROUND_ROBIN,
  RoundRobin,
  registerAllPolicies,
  registerPolicy,
  ringHashFactory,
  roundRobinFactory,
  WEIGHTED_TARGET,
  WEIGHTED_TARGET_CHILD_RETENTION_MS,
  type WeightedTargetChildConfig,
  type WeightedTargetConfig,
  WeightedTargetLb,
  WRR_LOCALITY,
  WrrLocality,
  type WrrLocalityConfig,
  weightedTargetFactory,
  wrrLocalityFactory,
} from './policies/index.js';
