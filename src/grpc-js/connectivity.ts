import { connectivityState as GrpcState } from '@grpc/grpc-js';
import type { ConnectivityState } from '../core/index.js';

const FROM_GRPC: readonly ConnectivityState[] = [
  'IDLE',
  'CONNECTING',
  'READY',
  'TRANSIENT_FAILURE',
  'SHUTDOWN',
];

/** grpc-js's numeric enum → our state names (grpc-js numbers them in this order). */
export function fromGrpcState(state: GrpcState): ConnectivityState {
  return FROM_GRPC[state] ?? 'SHUTDOWN';
}

export function toGrpcState(state: ConnectivityState): GrpcState {
  return GrpcState[state];
}
