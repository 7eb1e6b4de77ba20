// The xDS client (gRFC A27, A57, A88): bootstrap, the ADS stream to a server over a transport interface
// (ads-stream.ts), the resource cache with its watchers (resource-cache.ts), the XdsClient wiring them
// (xds-client.ts), timers on the Clock, and the CSDS-like dump.
export {
  BACKOFF_INITIAL_MS,
  BACKOFF_JITTER,
  BACKOFF_MAX_MS,
  BACKOFF_MULTIPLIER,
  type BackoffOptions,
  ExponentialBackoff,
} from '../../core/index.js';
export {
  loadBootstrap,
  parseBootstrap,
  XDS_BOOTSTRAP_CONFIG_ENV,
  XDS_BOOTSTRAP_FILE_ENV,
  type XdsBootstrap,
  type XdsBootstrapJson,
  type XdsChannelCredentials,
  type XdsLocality as XdsBootstrapLocality,
  type XdsNodeConfig,
  type XdsServerConfig,
} from './bootstrap.js';
export type { XdsResourceStatus } from './cache-entry.js';
export { toCsdsClientConfig } from './csds.js';
export { formatXdsClientDump, type XdsClientDump, type XdsResourceDump } from './dump.js';
export { RESOURCE_DOES_NOT_EXIST_TIMEOUT_MS, RESOURCE_TRANSIENT_TIMEOUT_MS } from './resource-cache.js';
export type { XdsDecodeContext, XdsDecodeResult, XdsResourceType } from './resource-type.js';
export type { AdsStream, AdsStreamHandlers, XdsTransport, XdsTransportFactory } from './transport.js';
export type { CancelWatch, XdsResourceWatcher, XdsWatcher } from './watcher.js';
export { XDS_DATA_ERROR_HANDLING_ENV, XdsClient, type XdsClientOptions } from './xds-client.js';
