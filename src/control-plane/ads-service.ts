// The ADS service as grpc-js sees it: one bidirectional method whose messages are (de)serialized by
// @bufbuild/protobuf instead of a proto loader.
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import type * as grpc from '@grpc/grpc-js';
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
} from '../protos/gen/envoy/service/discovery/v3/discovery_pb.js';

export const STREAM_AGGREGATED_RESOURCES_PATH =
  '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';

export const ADS_SERVICE: grpc.ServiceDefinition = {
  streamAggregatedResources: {
    path: STREAM_AGGREGATED_RESOURCES_PATH,
    requestStream: true,
    responseStream: true,
    requestSerialize: (request: DiscoveryRequest) => Buffer.from(toBinary(DiscoveryRequestSchema, request)),
    requestDeserialize: (bytes: Buffer) => fromBinary(DiscoveryRequestSchema, bytes),
    responseSerialize: (response: DiscoveryResponse) =>
      Buffer.from(toBinary(DiscoveryResponseSchema, response)),
    responseDeserialize: (bytes: Buffer) => fromBinary(DiscoveryResponseSchema, bytes),
  },
};
