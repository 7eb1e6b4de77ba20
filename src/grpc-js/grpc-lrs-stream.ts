// The LRS call (A27) on the grpc-js channel of an xDS server: what GrpcXdsTransport.openLrsStream returns.
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import type { Client, ClientDuplexStream, ServiceError, StatusObject } from '@grpc/grpc-js';
import {
  type LoadStatsRequest,
  LoadStatsRequestSchema,
  type LoadStatsResponse,
  LoadStatsResponseSchema,
} from '../protos/gen/envoy/service/load_stats/v3/lrs_pb.js';
import type { LrsStream, LrsStreamHandlers } from '../xds/client/transport.js';

export const LRS_METHOD = '/envoy.service.load_stats.v3.LoadReportingService/StreamLoadStats';

export function openGrpcLrsStream(client: Client, handlers: LrsStreamHandlers): LrsStream {
  const call = client.makeBidiStreamRequest<LoadStatsRequest, LoadStatsResponse>(
    LRS_METHOD,
    (request) => Buffer.from(toBinary(LoadStatsRequestSchema, request)),
    (bytes) => fromBinary(LoadStatsResponseSchema, bytes),
  );
  return new GrpcLrsStream(call, handlers);
}

class GrpcLrsStream implements LrsStream {
  private ended = false;

  constructor(
    private readonly call: ClientDuplexStream<LoadStatsRequest, LoadStatsResponse>,
    private readonly handlers: LrsStreamHandlers,
  ) {
    call.on('data', (response: LoadStatsResponse) => {
      if (!this.ended) handlers.onResponse(response);
    });
    call.on('status', (status: StatusObject) => this.end(status));
    // The status event carries the outcome; an 'error' listener keeps the stream from throwing it.
    call.on('error', (error: ServiceError) => this.end(error));
  }

  send(request: LoadStatsRequest): void {
    if (!this.ended) this.call.write(request);
  }

  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.call.cancel();
  }

  private end(status: { code: number; details: string }): void {
    if (this.ended) return;
    this.ended = true;
    this.handlers.onClose({ code: status.code, details: status.details });
  }
}
