import { create } from '@bufbuild/protobuf';
import { type Any, AnySchema } from '@bufbuild/protobuf/wkt';
import type { Status } from '../../../src/core/index.js';
import { formatStatus } from '../../../src/core/index.js';
import {
  type DiscoveryRequest,
  DiscoveryResponseSchema,
} from '../../../src/protos/gen/envoy/service/discovery/v3/discovery_pb.js';
import type { XdsServerConfig } from '../../../src/xds/client/bootstrap.js';
import type { AdsStream, AdsStreamHandlers, XdsTransportFactory } from '../../../src/xds/client/transport.js';
import type { XdsResourceWatcher } from '../../../src/xds/client/watcher.js';

/** One ADS stream of the in-memory transport: what the client sent, and buttons for the server's side. */
export class FakeAdsStream implements AdsStream {
  readonly requests: DiscoveryRequest[] = [];
  closedByClient = false;
  private nonce = 0;

  constructor(private readonly handlers: AdsStreamHandlers) {}

  send(request: DiscoveryRequest): void {
    this.requests.push(request);
  }

  close(): void {
    this.closedByClient = true;
  }

  connect(): void {
    this.handlers.onConnected();
  }

  /** Sends a response; returns its nonce. */
  respond(typeUrl: string, version: string, resources: Any[]): string {
    const nonce = `n${++this.nonce}`;
    this.handlers.onResponse(
      create(DiscoveryResponseSchema, { typeUrl, versionInfo: version, nonce, resources }),
    );
    return nonce;
  }

  fail(status: Status): void {
    this.handlers.onClose(status);
  }

  /** The requests of one type, in order. */
  requestsOf(typeUrl: string): DiscoveryRequest[] {
    return this.requests.filter((r) => r.typeUrl === typeUrl);
  }

  lastOf(typeUrl: string): DiscoveryRequest {
    const all = this.requestsOf(typeUrl);
    const last = all[all.length - 1];
    if (!last) throw new Error(`no ${typeUrl} request on this stream`);
    return last;
  }
}

/** The in-memory transport: every stream the client opened, newest last. */
export class FakeAdsServer {
  readonly streams: FakeAdsStream[] = [];
  server: XdsServerConfig | undefined;
  transportClosed = false;

  readonly factory: XdsTransportFactory = (server) => {
    this.server = server;
    return {
      openAdsStream: (handlers) => {
        const stream = new FakeAdsStream(handlers);
        this.streams.push(stream);
        return stream;
      },
      close: () => {
        this.transportClosed = true;
      },
    };
  };

  get stream(): FakeAdsStream {
    const s = this.streams[this.streams.length - 1];
    if (!s) throw new Error('no stream opened');
    return s;
  }
}

/** In-memory servers by URI: the streams the client opened to each, and whether it closed the transport. */
export class FakeAdsServers {
  readonly streams = new Map<string, FakeAdsStream[]>();
  readonly closed = new Set<string>();
  readonly factory: XdsTransportFactory = (server) => ({
    openAdsStream: (handlers) => {
      const stream = new FakeAdsStream(handlers);
      const list = this.streams.get(server.serverUri) ?? [];
      list.push(stream);
      this.streams.set(server.serverUri, list);
      this.closed.delete(server.serverUri);
      return stream;
    },
    close: () => {
      this.closed.add(server.serverUri);
    },
  });

  /** The newest stream to the server. */
  stream(uri: string): FakeAdsStream {
    const list = this.streams.get(uri);
    const s = list?.[list.length - 1];
    if (!s) throw new Error(`no stream to ${uri}`);
    return s;
  }

  count(uri: string): number {
    return this.streams.get(uri)?.length ?? 0;
  }
}

export function anyOf(typeUrl: string, value: Uint8Array): Any {
  return create(AnySchema, { typeUrl, value });
}

/** A watcher that writes what it hears as short strings. */
export class RecordingWatcher<T> implements XdsResourceWatcher<T> {
  readonly events: string[] = [];
  readonly statuses: Status[] = [];

  constructor(private readonly show: (value: T) => string = (v) => JSON.stringify(v)) {}

  onResourceChanged(value: T): void {
    this.events.push(`changed ${this.show(value)}`);
  }

  onResourceError(status: Status): void {
    this.statuses.push(status);
    this.events.push(`error ${formatStatus(status).split(':')[0]}`);
  }

  onAmbientError(status: Status): void {
    this.statuses.push(status);
    this.events.push(`ambient ${formatStatus(status).split(':')[0]}`);
  }

  /** Events since the last call. */
  take(): string[] {
    return this.events.splice(0);
  }
}
