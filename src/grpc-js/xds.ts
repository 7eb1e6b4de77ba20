// The `lbtree/grpc-js/xds` entry: lbtree's xDS client over grpc-js, for programs that watch resources
// themselves. Apart from `lbtree/grpc-js` because it loads the xDS decoders, which `register()` alone never needs.

export { leaseXdsClient, type XdsClientLease } from './xds-client-pool.js';
export { GrpcXdsTransport, grpcXdsTransportFactory, xdsClientTrace } from './xds-transport.js';
