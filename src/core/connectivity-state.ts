/** The connectivity states a subchannel or a policy reports (gRPC connectivity semantics). */
export type ConnectivityState = 'IDLE' | 'CONNECTING' | 'READY' | 'TRANSIENT_FAILURE' | 'SHUTDOWN';

export const IDLE = 'IDLE';
export const CONNECTING = 'CONNECTING';
export const READY = 'READY';
export const TRANSIENT_FAILURE = 'TRANSIENT_FAILURE';
export const SHUTDOWN = 'SHUTDOWN';
