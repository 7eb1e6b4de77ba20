import { connectivityState, type experimental } from '@grpc/grpc-js';

/** A grpc-js subchannel that stays IDLE, is healthy and does nothing: for helper-adapter tests. */
export function idleGrpcSubchannel(): experimental.SubchannelInterface {
  return new Proxy({} as experimental.SubchannelInterface, {
    get: (_target, name) =>
      name === 'getConnectivityState'
        ? () => connectivityState.IDLE
        : name === 'isHealthy'
          ? () => true
          : () => undefined,
  });
}
