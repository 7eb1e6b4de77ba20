// The @grpc/grpc-js adapter lands with its own issue; until then this entry point exports nothing.
export {};
