// lbtree's public face: the LB API and every policy. Subpath entries: `lbtree/sim` (the deterministic
// simulator), `lbtree/grpc-js` (the @grpc/grpc-js adapter), `lbtree/xds` (xDS-configured policies).
export * from './core/index.js';
export * from './hash/index.js';
export * from './policies/index.js';
