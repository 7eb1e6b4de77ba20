// The @grpc/grpc-js-xds end-to-end scenarios, run in one test process: loading grpc-js-xds (it parses Envoy's
// .proto files with protobufjs) costs a process about 2.5 s of CPU, more than most scenarios do. They share
// nothing else: each module starts its own control plane and backends, and each channel has its own xDS
// client (a per-channel bootstrap, ./grpc-js-xds-harness.ts). Their describe() blocks run one after another.
import './grpc-js-xds-traffic.e2e.js';
import './grpc-js-xds-updates.e2e.js';
import './grpc-js-xds-aggregate.e2e.js';
