// What every end-to-end file with an xDS control plane shares: lbtree's control plane on loopback, real grpc-js
// backends, the scenarios' resources (each change pushes them all), continuous wait-for-ready traffic, and
// lbtree's trace lines (GRPC_TRACE=lbtree) collected to show that lbtree's code ran. Test files import grpc-js
// (and modules that load it) only through this module or the harnesses built on it, which load grpc-js through
// ./traced-grpc.ts (GRPC_TRACE set first).
import type { Backend, BackendClientType } from '../../src/cli/loopback-backends.js';
import type { ResourceJson } from '../../src/control-plane/index.js';

const traced = await import('./traced-grpc.js');
export const grpc = traced.grpc;
const traces = traced.traces;
export const cp = await import('../../src/control-plane/index.js');
const { startBackends, whoami } = await import('../../src/cli/loopback-backends.js');
const { rpcsUntil, servedByExactly } = await import('./rpc-window.js');
export const { BackendClient } = await import('../../src/cli/loopback-backends.js');

export { until } from './until.js';
// Test files take these from here, never by a static import that would load grpc-js before GRPC_TRACE is set.
export { rpcsUntil, servedByExactly, whoami };

/** The control plane, the backends and the resources of every scenario of one test file. */
export class XdsScenarios {
  readonly plane = new cp.ControlPlane();
  backends: Record<string, Backend> = {};
  /** The resources of every scenario, by service; each change pushes them all. */
  private readonly services = new Map<string, ResourceJson[]>();
  private readonly clients: BackendClientType[] = [];

  /** Starts the backends and the control plane. */
  protected async startPlane(backendNames: string[]): Promise<void> {
    const list = await startBackends(backendNames);
    this.backends = Object.fromEntries(list.map((b) => [b.name, b]));
    await this.plane.listen('127.0.0.1:0');
  }

  /** Closes `client` with the harness. */
  protected track(client: BackendClientType): BackendClientType {
    this.clients.push(client);
    return client;
  }

  async close(): Promise<void> {
    for (const c of this.clients) c.close();
    for (const b of Object.values(this.backends)) {
      b.release();
      b.stop();
    }
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

/** What continuous traffic saw: answers per backend, failures with their statuses. */
export interface LoadReport {
  served: number;
  readonly byBackend: Map<string, number>;
  readonly failures: string[];
  /** The most recent answers, newest last (at most 50). */
  readonly latest: string[];
}

/**
 * Wait-for-ready RPCs, `concurrency` at a time, until `stop()`; every answer and failure is counted. The
 * report is live: a test waits on it for a condition.
 */
export function startLoad(
  client: BackendClientType,
  options: { concurrency?: number; headers?: (i: number) => Record<string, string> } = {},
): { report: LoadReport; stop: () => Promise<LoadReport> } {
  const report: LoadReport = { served: 0, byBackend: new Map(), failures: [], latest: [] };
  let running = true;
  let sent = 0;
  const worker = async () => {
    while (running) {
      const i = sent++;
      try {
        const name = await whoami(client, {
          waitForReady: true,
          deadlineMs: 10_000,
          ...(options.headers ? { headers: options.headers(i) } : {}),
        });
        report.served++;
        report.byBackend.set(name, (report.byBackend.get(name) ?? 0) + 1);
        report.latest.push(name);
        if (report.latest.length > 50) report.latest.shift();
      } catch (e) {
        const err = e as { code?: number; details?: string; message?: string };
        report.failures.push(`${err.code}: ${err.details ?? err.message}`);
      }
    }
  };
  const workers = Array.from({ length: options.concurrency ?? 4 }, worker);
  return {
    report,
    stop: async () => {
      running = false;
      await Promise.all(workers);
      return report;
    },
  };
}
