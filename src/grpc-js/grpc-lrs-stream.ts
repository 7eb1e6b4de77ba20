// The LRS call (A27) on the grpc-js channel of an xDS server: what GrpcXdsTransport.openLrsStream returns.
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import type { Client } from '@grpc/grpc-js';
import {
  type LoadStatsRequest,
  LoadStatsRequestSchema,
  type LoadStatsResponse,
  LoadStatsResponseSchema,
} from '../protos/gen/envoy/service/load_stats/v3/lrs_pb.js';
import type { LrsStream, LrsStreamHandlers } from '../xds/client/transport.js';
import { GrpcBidiStream } from './grpc-bidi-stream.js';

export const LRS_METHOD = '/envoy.service.load_stats.v3.LoadReportingService/StreamLoadStats';

export function openGrpcLrsStream(client: Client, handlers: LrsStreamHandlers): LrsStream {
  const call = client.makeBidiStreamRequest<LoadStatsRequest, LoadStatsResponse>(
    LRS_METHOD,
    (request) => Buffer.from(toBinary(LoadStatsRequestSchema, request)),
    (bytes) => fromBinary(LoadStatsResponseSchema, bytes),
  );
  return new GrpcLrsStream(call, handlers);
}

/** The LRS call: nothing beyond a bidirectional stream's own behaviour. */
class GrpcLrsStream extends GrpcBidiStream<LoadStatsRequest, LoadStatsResponse> implements LrsStream {}
