// The xDS client (gRFC A27, A57, A88, A47, A71): bootstrap, the ADS stream to a server over a transport
// interface (ads-stream.ts), the authorities with their caches and servers (authority.ts, resource-cache.ts),
// the XdsClient wiring them (xds-client.ts), xdstp: names, timers on the Clock, and the CSDS-like dump.
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
  XDS_FEDERATION_ENV,
  type XdsAuthorityConfig,
  type XdsBootstrap,
  type XdsBootstrapJson,
  type XdsChannelCredentials,
  type XdsLocality as XdsBootstrapLocality,
  type XdsNodeConfig,
  type XdsServerConfig,
  xdsServerKey,
} from './bootstrap.js';
export type { XdsResourceStatus } from './cache-entry.js';
export { toCsdsClientConfig } from './csds.js';
export {
  formatXdsClientDump,
  type XdsAuthorityDump,
  type XdsClientDump,
  type XdsResourceDump,
  type XdsServerDump,
} from './dump.js';
export { clientListenerResourceName, UnknownXdsAuthorityError } from './listener-name.js';
export {
  XDS_CLIENT_CONNECTED,
  XDS_CLIENT_RESOURCE_UPDATES_INVALID,
  XDS_CLIENT_RESOURCE_UPDATES_VALID,
  XDS_CLIENT_RESOURCES,
  XDS_CLIENT_SERVER_FAILURE,
} from './metrics.js';
export { RESOURCE_DOES_NOT_EXIST_TIMEOUT_MS, RESOURCE_TRANSIENT_TIMEOUT_MS } from './resource-cache.js';
export type { XdsDecodeContext, XdsDecodeResult, XdsResourceType } from './resource-type.js';
export type { AdsStream, AdsStreamHandlers, XdsTransport, XdsTransportFactory } from './transport.js';
export type { CancelWatch, XdsResourceWatcher, XdsWatcher } from './watcher.js';
export {
  XDS_DATA_ERROR_HANDLING_ENV,
  XDS_FALLBACK_ENV,
  XdsClient,
  type XdsClientOptions,
} from './xds-client.js';
export { type ParsedResourceName, parseResourceName } from './xdstp-name.js';
