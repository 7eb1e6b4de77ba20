// grpc-js with lbtree's trace lines collected, for tests that check lbtree's code really ran, and grpc-js's own
// outlier_detection lines (`| outlier_detection |`), for tests that check grpc-js's policy ran rather than
// lbtree's. grpc-js and lbtree's adapter read GRPC_TRACE when they load, so this module sets it before it loads
// grpc-js; a test file loads grpc-js (and modules that load it) only after importing this one, never by an
// earlier static import.
process.env.GRPC_TRACE = 'lbtree,outlier_detection';
process.env.GRPC_VERBOSITY = 'DEBUG';
export const grpc = await import('@grpc/grpc-js');

/** Every trace line grpc-js logged in this process, oldest first. */
export const traces: string[] = [];
grpc.setLogger({ error: (...args: unknown[]) => traces.push(args.join(' ')) } as unknown as Console);
