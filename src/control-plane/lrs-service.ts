// The LoadReportingService (A27 LRS) as grpc-js sees it: one bidirectional method whose messages are
// (de)serialized by @bufbuild/protobuf instead of a proto loader.
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import type * as grpc from '@grpc/grpc-js';
import {
  type LoadStatsRequest,
  LoadStatsRequestSchema,
  type LoadStatsResponse,
  LoadStatsResponseSchema,
} from '../protos/gen/envoy/service/load_stats/v3/lrs_pb.js';

export const STREAM_LOAD_STATS_PATH = '/envoy.service.load_stats.v3.LoadReportingService/StreamLoadStats';

export const LRS_SERVICE: grpc.ServiceDefinition = {
  streamLoadStats: {
    path: STREAM_LOAD_STATS_PATH,
    requestStream: true,
    responseStream: true,
    requestSerialize: (request: LoadStatsRequest) => Buffer.from(toBinary(LoadStatsRequestSchema, request)),
    requestDeserialize: (bytes: Buffer) => fromBinary(LoadStatsRequestSchema, bytes),
    responseSerialize: (response: LoadStatsResponse) =>
      Buffer.from(toBinary(LoadStatsResponseSchema, response)),
    responseDeserialize: (bytes: Buffer) => fromBinary(LoadStatsResponseSchema, bytes),
  },
};
