// What the @grpc/grpc-js-xds end-to-end files share: the control plane, backends and traces of
// ../support/xds-harness.ts, with grpc-js-xds registered first and lbtree after it (as the README says), and a
// channel per scenario with its own xDS client. Test files import grpc-js (and modules that load it) only
// through this module, which sets GRPC_TRACE before grpc-js loads.
import { createRequire } from 'node:module';
import type { BackendClientType } from '../../src/cli/loopback-backends.js';
import { BackendClient, grpc, XdsScenarios } from '../support/xds-harness.js';

export { cp, grpc, rpcsUntil, servedByExactly, whoami } from '../support/xds-harness.js';

const { register } = await import('../../src/grpc-js/index.js');

/** grpc-js-xds's per-channel bootstrap option: each channel gets its own xDS client. */
const BOOTSTRAP_OPTION = 'grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config';

export class XdsHarness extends XdsScenarios {
  /** Starts the backends and the control plane; `beforeRegister` adds custom policies before `register()`. */
  async start(backendNames: string[], beforeRegister: () => void = () => {}): Promise<void> {
    await this.startPlane(backendNames);
    createRequire(import.meta.url)('@grpc/grpc-js-xds').register();
    beforeRegister();
    register();
  }

  /** A channel to `xds:///service` with its own xDS client, reporting `nodeId` to the control plane. */
  channel(service: string, nodeId: string): BackendClientType {
    return this.track(
      new BackendClient(`xds:///${service}`, grpc.credentials.createInsecure(), {
        [BOOTSTRAP_OPTION]: JSON.stringify(this.plane.bootstrap({ nodeId })),
      }),
    );
  }
}
