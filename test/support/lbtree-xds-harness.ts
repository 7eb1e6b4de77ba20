// The end-to-end files of lbtree's own xds: resolver: the shared control plane, backends and traces of
// ./xds-harness.ts, with `register({ xds })` on the plane's bootstrap and channels to `xds:///service` on lbtree's
// resolver. One xDS client (one ADS stream) serves every channel of the process, as A27 asks.
import type { BackendClientType } from '../../src/cli/loopback-backends.js';
import type { ResourceJson } from '../../src/control-plane/index.js';
import { BackendClient, cp, grpc, XdsScenarios } from './xds-harness.js';

export * from './xds-harness.js';

const { register } = await import('../../src/grpc-js/index.js');

/** Backends that come back are reconnected to within 100–500 ms instead of grpc-js's 1–120 s. */
const FAST_RECONNECT: Record<string, number> = {
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 500,
};

export class LbtreeXdsHarness extends XdsScenarios {
  constructor(readonly nodeId: string) {
    super();
  }

  /** Starts the backends and the control plane, then `register({ xds })`; `beforeRegister` adds custom policies. */
  async start(backendNames: string[], beforeRegister: () => void = () => {}): Promise<void> {
    await this.startPlane(backendNames);
    beforeRegister();
    register({ xds: { bootstrap: this.plane.bootstrap({ nodeId: this.nodeId }) } });
  }

  /** Publishes and waits until lbtree's xDS client ACKs the version for `typeUrl` (CDS by default). */
  async publishAcked(
    service: string,
    resources: ResourceJson[],
    typeUrl = cp.CLUSTER_TYPE_URL,
  ): Promise<string> {
    const version = this.publish(service, resources);
    await this.plane.waitForAck({ nodeId: this.nodeId, typeUrl, version });
    return version;
  }

  /** A channel to `xds:///service` on lbtree's resolver. */
  channel(service: string, options: Record<string, unknown> = {}): BackendClientType {
    return this.track(
      new BackendClient(`xds:///${service}`, grpc.credentials.createInsecure(), {
        ...FAST_RECONNECT,
        ...options,
      }),
    );
  }
}
