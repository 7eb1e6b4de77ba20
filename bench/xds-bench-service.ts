import { type Backend, startBackends } from '../src/cli/loopback-backends.js';
import { ControlPlane, xdsService } from '../src/control-plane/index.js';

/** The `xds:///bench` service of the per-call benches: three loopback backends in one round_robin cluster. */
export interface XdsBenchService {
  readonly addresses: readonly string[];
  readonly plane: ControlPlane;
  stop(): Promise<void>;
}

/** Starts the three backends and lbtree's control plane serving them as `bench` (listening on loopback). */
export async function startXdsBenchService(): Promise<XdsBenchService> {
  const backends: Backend[] = await startBackends(['b1', 'b2', 'b3']);
  const addresses = backends.map((b) => b.address);
  const plane = new ControlPlane({
    resources: xdsService({
      name: 'bench',
      clusters: [
        { name: 'bench-cluster', lbPolicy: 'ROUND_ROBIN', localities: [{ zone: 'z', endpoints: addresses }] },
      ],
    }),
  });
  await plane.listen('127.0.0.1:0');
  return {
    addresses,
    plane,
    async stop() {
      await plane.close();
      for (const b of backends) b.stop();
    },
  };
}
