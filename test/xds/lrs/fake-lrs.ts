import { create } from '@bufbuild/protobuf';
import { DurationSchema } from '@bufbuild/protobuf/wkt';
import type { Status } from '../../../src/core/index.js';
import {
  type LoadStatsRequest,
  LoadStatsResponseSchema,
} from '../../../src/protos/gen/envoy/service/load_stats/v3/lrs_pb.js';
import type { XdsServerConfig } from '../../../src/xds/client/bootstrap.js';
import type { LrsStream, LrsStreamHandlers, XdsTransportFactory } from '../../../src/xds/client/transport.js';

/** One LRS call of the in-memory transport: what the client sent, and the server's buttons. */
export class FakeLrsCall implements LrsStream {
  readonly requests: LoadStatsRequest[] = [];
  closedByClient = false;

  constructor(private readonly handlers: LrsStreamHandlers) {}

  send(request: LoadStatsRequest): void {
    this.requests.push(request);
  }

  close(): void {
    this.closedByClient = true;
  }

  /** A LoadStatsResponse; `intervalMs` undefined leaves load_reporting_interval unset. */
  respond(fields: {
    clusters?: string[];
    sendAllClusters?: boolean;
    intervalMs?: number;
    seconds?: bigint;
    nanos?: number;
  }): void {
    const interval =
      fields.seconds !== undefined || fields.nanos !== undefined
        ? create(DurationSchema, { seconds: fields.seconds ?? 0n, nanos: fields.nanos ?? 0 })
        : fields.intervalMs === undefined
          ? undefined
          : create(DurationSchema, {
              seconds: BigInt(Math.floor(fields.intervalMs / 1000)),
              nanos: (fields.intervalMs % 1000) * 1e6,
            });
    this.handlers.onResponse(
      create(LoadStatsResponseSchema, {
        clusters: fields.clusters ?? [],
        sendAllClusters: fields.sendAllClusters ?? false,
        ...(interval && { loadReportingInterval: interval }),
      }),
    );
  }

  fail(status: Status): void {
    this.handlers.onClose(status);
  }

  /** The load reports (every request after the first, which carries the node). */
  get reports(): LoadStatsRequest[] {
    return this.requests.slice(1);
  }
}

/** The in-memory transport's LRS side: every call opened, newest last. */
export class FakeLrsServer {
  readonly calls: FakeLrsCall[] = [];
  servers: XdsServerConfig[] = [];
  transportsClosed = 0;

  readonly factory: XdsTransportFactory = (server) => {
    this.servers.push(server);
    return {
      openAdsStream: () => {
        throw new Error('this fake transport carries LRS only');
      },
      openLrsStream: (handlers) => {
        const call = new FakeLrsCall(handlers);
        this.calls.push(call);
        return call;
      },
      close: () => {
        this.transportsClosed++;
      },
    };
  };

  get call(): FakeLrsCall {
    const c = this.calls[this.calls.length - 1];
    if (!c) throw new Error('no LRS call was opened');
    return c;
  }
}
