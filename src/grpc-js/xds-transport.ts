import { fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  type ChannelCredentials,
  type ChannelOptions,
  Client,
  type ClientDuplexStream,
  connectivityState,
  credentials,
} from '@grpc/grpc-js';
import type { Trace } from '../core/index.js';
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
} from '../protos/gen/envoy/service/discovery/v3/discovery_pb.js';
import type { XdsChannelCredentials, XdsServerConfig } from '../xds/client/bootstrap.js';
import type {
  AdsStream,
  AdsStreamHandlers,
  LrsStream,
  LrsStreamHandlers,
  XdsTransport,
  XdsTransportFactory,
} from '../xds/client/transport.js';
import { FileWatcherCertificateProvider } from './certificate-provider.js';
import { FileWatcherChannelCredentials } from './file-watcher-credentials.js';
import { GrpcBidiStream } from './grpc-bidi-stream.js';
import { openGrpcLrsStream } from './grpc-lrs-stream.js';
import { namedTrace, TracerSelection } from './tracers.js';

export const ADS_METHOD = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';

const XDS_TRACER = 'xds_client';

/**
 * The xDS client's trace on grpc-js's logger: on with GRPC_TRACE=xds_client, lbtree or all (read once, like
 * grpc-js), so that a disabled trace builds no message. Set GRPC_VERBOSITY=DEBUG to see the lines.
 */
export function xdsClientTrace(env: NodeJS.ProcessEnv = process.env): Trace {
  return namedTrace(XDS_TRACER, new TracerSelection(env));
}

/**
 * grpc-js channel credentials for the bootstrap's `channel_creds` (A27; A65's `tls`: the files are read when
 * the channel connects and again every refresh_interval, and a connection they cannot serve fails naming them).
 */
export function grpcChannelCredentials(config: XdsChannelCredentials, server = ''): ChannelCredentials {
  if (config.type === 'insecure') return credentials.createInsecure();
  const { type: _, ...files } = config;
  return new FileWatcherChannelCredentials(
    new FileWatcherCertificateProvider(`xDS server ${server || '(no URI)'} channel_creds "tls"`, files),
  );
}

/** The ADS transport on a grpc-js channel: one channel per xDS server, one bidi call per stream. */
export class GrpcXdsTransport implements XdsTransport {
  private readonly client: Client;

  constructor(server: XdsServerConfig, channelOptions: ChannelOptions = {}) {
    this.client = new Client(
      server.serverUri,
      grpcChannelCredentials(server.channelCredentials, server.serverUri),
      channelOptions,
    );
  }

  openAdsStream(handlers: AdsStreamHandlers): AdsStream {
    // A57: no wait_for_ready, so that a channel in TRANSIENT_FAILURE fails the stream with its reason.
    const call = this.client.makeBidiStreamRequest<DiscoveryRequest, DiscoveryResponse>(
      ADS_METHOD,
      (request) => Buffer.from(toBinary(DiscoveryRequestSchema, request)),
      (bytes) => fromBinary(DiscoveryResponseSchema, bytes),
    );
    return new GrpcAdsStream(call, this.client, handlers);
  }

  openLrsStream(handlers: LrsStreamHandlers): LrsStream {
    return openGrpcLrsStream(this.client, handlers);
  }

  close(): void {
    this.client.close();
  }
}

class GrpcAdsStream extends GrpcBidiStream<DiscoveryRequest, DiscoveryResponse> implements AdsStream {
  constructor(
    call: ClientDuplexStream<DiscoveryRequest, DiscoveryResponse>,
    private readonly client: Client,
    private readonly handlers: AdsStreamHandlers,
  ) {
    super(call, handlers);
    // Defer, so that no handler runs inside openAdsStream.
    process.nextTick(() => this.awaitReady());
  }

  /**
   * A57 lets an implementation that cannot see its messages reach the wire treat the channel's READY as
   * "the stream is on a connected transport": that starts the does-not-exist timers.
   */
  private awaitReady(): void {
    if (this.ended) return;
    const channel = this.client.getChannel();
    const state = channel.getConnectivityState(true);
    if (state === connectivityState.READY) {
      this.handlers.onConnected();
      return;
    }
    if (state === connectivityState.SHUTDOWN) return;
    channel.watchConnectivityState(state, Number.POSITIVE_INFINITY, () => this.awaitReady());
  }
}

/** The transport factory an XdsClient takes, for grpc-js. */
export const grpcXdsTransportFactory: XdsTransportFactory = (server) => new GrpcXdsTransport(server);
