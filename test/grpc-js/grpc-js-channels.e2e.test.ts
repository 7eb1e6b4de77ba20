// lbtree on plain grpc-js channels, in one test process: bad input (./channel-errors.e2e.ts) and grpc-js-only
// child policies under lbtree parents (./grpc-js-children.e2e.ts). A process costs about 0.6 s of CPU to load
// grpc-js and lbtree before its first test; each module starts its own servers and channels and calls the same
// register(), so they share nothing else. Their describe() blocks run one after another. grpc-js comes from
// traced-grpc (GRPC_TRACE set before it loads): the children's tests read grpc-js's own trace lines.
await import('../support/traced-grpc.js');
await import('./channel-errors.e2e.js');
await import('./grpc-js-children.e2e.js');
