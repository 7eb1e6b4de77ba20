// What the @grpc/grpc-js-xds end-to-end files share: lbtree's control plane on loopback, real grpc-js
// backends, grpc-js-xds registered first and lbtree after it (as the README says), a channel per scenario
// with its own xDS client, and lbtree's trace lines (GRPC_TRACE=lbtree) collected to show whose policies ran.
// Test files import grpc-js (and modules that load it) only through this module: it sets GRPC_TRACE first,
// which grpc-js and lbtree's adapter read when they load.
import { createRequire } from 'node:module';
import type { Backend, BackendClientType } from '../../src/cli/loopback-backends.js';
import type { ResourceJson } from '../../src/control-plane/index.js';

process.env.GRPC_TRACE = 'lbtree';
process.env.GRPC_VERBOSITY = 'DEBUG';
export const grpc = await import('@grpc/grpc-js');
export const cp = await import('../../src/control-plane/index.js');
const { BackendClient, startBackends, whoami } = await import('../../src/cli/loopback-backends.js');
const { rpcsUntil, servedByExactly } = await import('../support/rpc-window.js');

// Test files take these from here, never by a static import that would load grpc-js before GRPC_TRACE is set.
export { rpcsUntil, servedByExactly, whoami };

const { register } = await import('../../src/grpc-js/index.js');

const traces: string[] = [];
grpc.setLogger({ error: (...args: unknown[]) => traces.push(args.join(' ')) } as unknown as Console);

/** grpc-js-xds's per-channel bootstrap option: each channel gets its own xDS client. */
const BOOTSTRAP_OPTION = 'grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config';

export class XdsHarness {
  readonly plane = new cp.ControlPlane();
  backends: Record<string, Backend> = {};
  /** The resources of every scenario, by service; each change pushes them all. */
  private readonly services = new Map<string, ResourceJson[]>();
  private readonly clients: BackendClientType[] = [];

  /** Starts the backends and the control plane; `beforeRegister` adds custom policies before `register()`. */
  async start(backendNames: string[], beforeRegister: () => void = () => {}): Promise<void> {
    const list = await startBackends(backendNames);
    this.backends = Object.fromEntries(list.map((b) => [b.name, b]));
    await this.plane.listen('127.0.0.1:0');
    createRequire(import.meta.url)('@grpc/grpc-js-xds').register();
    beforeRegister();
    register();
  }

  async close(): Promise<void> {
    for (const c of this.clients) c.close();
    for (const b of Object.values(this.backends)) b.stop();
    await this.plane.close();
  }

  backend(name: string): Backend {
    const b = this.backends[name];
    if (!b) throw new Error(`no backend ${name}`);
    return b;
  }

  /** Replaces one service's resources and pushes every service's; returns the version. */
  publish(service: string, resources: ResourceJson[]): string {
    this.services.set(service, resources);
    return this.plane.setResources([...this.services.values()].flat());
  }

  /** A channel to `xds:///service` with its own xDS client, reporting `nodeId` to the control plane. */
  channel(service: string, nodeId: string): BackendClientType {
    const client = new BackendClient(`xds:///${service}`, grpc.credentials.createInsecure(), {
      [BOOTSTRAP_OPTION]: JSON.stringify(this.plane.bootstrap({ nodeId })),
    });
    this.clients.push(client);
    return client;
  }

  /** A mark to read trace lines from. */
  traceMark(): number {
    return traces.length;
  }

  /** lbtree's trace lines since `mark`, one per line. */
  lbtreeTraces(mark = 0): string {
    return traces
      .slice(mark)
      .filter((t) => t.includes('| lbtree |'))
      .join('\n');
  }
}
