import type { Status } from '../../core/status.js';
import type {
  DiscoveryRequest,
  DiscoveryResponse,
} from '../../protos/gen/envoy/service/discovery/v3/discovery_pb.js';
import type {
  LoadStatsRequest,
  LoadStatsResponse,
} from '../../protos/gen/envoy/service/load_stats/v3/lrs_pb.js';
import type { XdsServerConfig } from './bootstrap.js';

// The xDS client knows nothing of grpc-js: it talks to the control plane through this interface. The grpc-js
// layer implements it (src/grpc-js/xds-transport.ts); tests use an in-memory one.

/** What the transport tells the client about one ADS stream. No handler is called from inside openAdsStream. */
export interface AdsStreamHandlers {
  /**
   * The stream is on a connected transport (A57 "Handling Resources That Do Not Exist": the does-not-exist
   * timers start only from here). Called at most once.
   */
  onConnected(): void;
  onResponse(response: DiscoveryResponse): void;
  /** The stream ended, with the status it ended with. Called once; nothing is called after it. */
  onClose(status: Status): void;
}

/** One ADS (StreamAggregatedResources) call. */
export interface AdsStream {
  send(request: DiscoveryRequest): void;
  /** Cancels the call; no handler is called afterwards. */
  close(): void;
}

/** What the transport tells the LRS client about one LRS call. No handler is called from inside openLrsStream. */
export interface LrsStreamHandlers {
  onResponse(response: LoadStatsResponse): void;
  /** The call ended, with the status it ended with. Called once; nothing is called after it. */
  onClose(status: Status): void;
}

/** One LRS (LoadReportingService.StreamLoadStats) call. */
export interface LrsStream {
  send(request: LoadStatsRequest): void;
  /** Cancels the call; no handler is called afterwards. */
  close(): void;
}

/** A channel to one xDS server. */
export interface XdsTransport {
  openAdsStream(handlers: AdsStreamHandlers): AdsStream;
  /** A27 load reporting to the server; a transport without it cannot report load (the LRS client says so). */
  openLrsStream?(handlers: LrsStreamHandlers): LrsStream;
  /** Releases the channel; open streams are cancelled. */
  close(): void;
}

/** Makes the transport for a server of the bootstrap (its URI and channel credentials). */
export type XdsTransportFactory = (server: XdsServerConfig) => XdsTransport;
