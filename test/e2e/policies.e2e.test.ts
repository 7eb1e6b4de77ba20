// lbtree's policies on plain grpc-js channels (`register()`, `endpoints:` targets) end to end, in one test
// process: priority, ring_hash and round_robin. A process costs about 1 s of CPU to load grpc-js and lbtree
// before its first test; each module starts its own backends and channels, so they share nothing else.
// Their describe() blocks run one after another.
import './priority.e2e.js';
import './ring-hash.e2e.js';
import './round-robin.e2e.js';
