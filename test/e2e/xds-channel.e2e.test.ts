// lbtree's `xds:` channel end to end, in one test process: the control plane changing things under traffic
// (./xds-live.e2e.ts) and backends going away (./xds-failover.e2e.ts). A process costs about 1 s of CPU to
// load grpc-js and lbtree's xDS stack before its first test; both modules start their own control plane and
// backends through ../support/lbtree-xds-harness.ts, so they share nothing else. Their describe() blocks run
// one after another.
import './xds-live.e2e.js';
import './xds-failover.e2e.js';
