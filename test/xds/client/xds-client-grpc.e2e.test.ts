// lbtree's xDS client on grpc-js, in one test process: the ADS transport and the shared client of a bootstrap
// (./grpc-transport.e2e.ts), and the client against lbtree's control plane (./control-plane.e2e.ts). A
// process costs about 0.7 s of CPU to load grpc-js and the xDS decoders before its first test; each module
// starts its own servers and clients, so they share nothing else. Their describe() blocks run one after another.
import './grpc-transport.e2e.js';
import './control-plane.e2e.js';
