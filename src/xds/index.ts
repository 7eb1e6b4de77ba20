// xDS-configured load balancing (A52) lands with its own issue; until then this entry point exports nothing.
export {};
