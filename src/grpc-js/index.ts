// The @grpc/grpc-js adapter (`lbtree/grpc-js`): the only module that imports @grpc/grpc-js. The xDS client on
// grpc-js is a separate entry (`lbtree/grpc-js/xds`, ./xds.ts): what `register()` needs loads no xDS decoder.

// The flight recorder (README "Record and replay"; the file format: docs/recording-format.md).
export {
  FlightRecorder,
  type FlightRecorderOptions,
  RECORDING_VERSION,
  type Recording,
  RecordingError,
  readRecording,
} from '../recorder/index.js';
export { BACKEND_METRICS_TRAILER, backendMetricsTrailer, readBackendMetrics } from './backend-metrics.js';
export { METRICS_CHANNEL_OPTION, metricsChannelOption } from './channel-metrics.js';
export {
  ChannelRegistry,
  type ChannelRegistryListener,
  liveChannels,
  type RegisteredChannel,
} from './channel-registry.js';
export { ENDPOINTS_SCHEME, EndpointsResolver, parseEndpointsTarget } from './endpoints-resolver.js';
export {
  DEFAULT_MIN_REPORT_INTERVAL_MS,
  OrcaService,
  type OrcaServiceOptions,
} from './orca-service.js';
export { STREAM_CORE_METRICS } from './orca-stream.js';
export { HASH_PICK_INFO_KEY } from './picker-adapter.js';
export {
  type ChannelRecordingEntry,
  FLIGHT_RECORDER_OPTION,
  type RecordEveryChannelOption,
  recordedChannels,
} from './recorded-channels.js';
export { LBTREE_PREFIX, type RegisterOptions, register } from './register.js';
export { SessionCookieJar } from './session-cookies.js';
export { XdsChannelCredentials } from './xds-channel-credentials.js';
