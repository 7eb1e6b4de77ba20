/**
 * The xDS client taking in a large configuration: lbtree's XdsClient beside @grpc/grpc-js-xds's XdsClient,
 * each against the same lbtree control plane (in its own process) in the same run.
 *
 * The control plane serves 1,000 EDS clusters and their ClusterLoadAssignments (10 endpoints each). Each client
 * does what the cds policies of a channel do: watch every cluster, and on each cluster's first update watch its
 * EDS resource. Figures, median of the runs (the two clients alternate, a fresh client each run):
 *   - time to the full set: from creating the client to the last ClusterLoadAssignment delivered to a watcher;
 *   - CPU: user + system time of this process over the same span (the control plane runs elsewhere);
 *   - retained heap: heap growth with the client and its cache alive, after full GCs.
 * grpc-js-xds exposes its client only through its internal modules (build/src/xds-client.js and the resource
 * types); it is driven through them exactly as its own cds / xds_cluster_resolver policies do.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { register as registerGrpcJsXds } from '@grpc/grpc-js-xds';
import { validateBootstrapConfig } from '@grpc/grpc-js-xds/build/src/xds-bootstrap.js';
import { XdsClient as GrpcJsXdsClient, Watcher } from '@grpc/grpc-js-xds/build/src/xds-client.js';
import { ClusterResourceType } from '@grpc/grpc-js-xds/build/src/xds-resource-type/cluster-resource-type.js';
import { EndpointResourceType } from '@grpc/grpc-js-xds/build/src/xds-resource-type/endpoint-resource-type.js';
import { grpcXdsTransportFactory } from '../src/grpc-js/xds-transport.js';
import { parseBootstrap, XdsClient } from '../src/xds/client/index.js';
import { clusterResourceType, endpointResourceType, type XdsCluster } from '../src/xds/resources/index.js';
import { gc } from './gc.js';
import { median, printRow, printTableHeader } from './report.js';

const CLUSTERS = Number(process.env.BENCH_XDS_CLUSTERS ?? 1_000);
const ENDPOINTS = 10;
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);

interface Run {
  /** EDS resources received (CLUSTERS when the run completed; fewer when it hit the cap). */
  readonly received: number;
  readonly ms: number;
  readonly cpuMs: number;
  readonly heapBytes: number;
}

/** A client under test: starts watching everything, resolves when every EDS resource arrived; then closes. */
interface ClientUnderTest {
  start(address: string, nodeId: string, done: () => void): void;
  /** EDS resources received so far. */
  received(): number;
  close(): void;
}

function bootstrapJson(address: string, nodeId: string) {
  return {
    xds_servers: [
      { server_uri: address, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] },
    ],
    node: { id: nodeId, locality: {} },
  };
}

function clusterNames(): string[] {
  return Array.from({ length: CLUSTERS }, (_, c) => `cluster-${c}`);
}

function lbtreeClient(): ClientUnderTest {
  let client: XdsClient | undefined;
  const endpointsSeen = new Set<string>();
  return {
    received: () => endpointsSeen.size,
    start(address, nodeId, done) {
      const c = new XdsClient({
        bootstrap: parseBootstrap(bootstrapJson(address, nodeId)),
        transport: grpcXdsTransportFactory,
      });
      client = c;
      const ignore = () => {};
      for (const name of clusterNames()) {
        let edsWatched = false;
        c.watch(clusterResourceType, name, {
          onResourceChanged(cluster) {
            if (edsWatched) return;
            edsWatched = true;
            const edsName = edsNameOf(cluster, name);
            c.watch(endpointResourceType, edsName, {
              onResourceChanged() {
                endpointsSeen.add(edsName);
                if (endpointsSeen.size === CLUSTERS) done();
              },
              onResourceError: ignore,
              onAmbientError: ignore,
            });
          },
          onResourceError: ignore,
          onAmbientError: ignore,
        });
      }
    },
    close() {
      client?.close();
    },
  };
}

/** The EDS name of a validated lbtree cluster (its eds_service_name, else its own name). */
function edsNameOf(cluster: XdsCluster, name: string): string {
  return cluster.discovery.kind === 'eds' ? cluster.discovery.edsServiceName : name;
}

function grpcJsXdsClient(): ClientUnderTest {
  const watches: (() => void)[] = [];
  const endpointsSeen = new Set<string>();
  return {
    received: () => endpointsSeen.size,
    start(address, nodeId, done) {
      const c = new GrpcJsXdsClient(validateBootstrapConfig(bootstrapJson(address, nodeId)));
      const ignore = () => {};
      for (const name of clusterNames()) {
        let edsWatched = false;
        const clusterWatcher = new Watcher({
          onResourceChanged(update: { edsServiceName?: string }) {
            if (edsWatched) return;
            edsWatched = true;
            const edsName = update.edsServiceName || name;
            const endpointWatcher = new Watcher({
              onResourceChanged() {
                endpointsSeen.add(edsName);
                if (endpointsSeen.size === CLUSTERS) done();
              },
              onError: ignore,
              onResourceDoesNotExist: ignore,
            });
            EndpointResourceType.startWatch(c, edsName, endpointWatcher);
            watches.push(() => EndpointResourceType.cancelWatch(c, edsName, endpointWatcher));
          },
          onError: ignore,
          onResourceDoesNotExist: ignore,
        });
        ClusterResourceType.startWatch(c, name, clusterWatcher);
        watches.push(() => ClusterResourceType.cancelWatch(c, name, clusterWatcher));
      }
    },
    close() {
      // grpc-js-xds's client has no close: the last cancelled watch ends its stream and channel.
      for (const cancel of watches.splice(0)) cancel();
    },
  };
}

/** One run; a run that has not received the full set after `capMs` stops there (its figures are lower bounds). */
async function measure(
  make: () => ClientUnderTest,
  address: string,
  nodeId: string,
  capMs: number,
): Promise<Run> {
  gc();
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const cpuBefore = process.cpuUsage();
  const start = process.hrtime.bigint();
  const client = make();
  await new Promise<void>((resolve) => {
    const timeout = setTimeout(resolve, capMs);
    client.start(address, nodeId, () => {
      clearTimeout(timeout);
      resolve();
    });
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const cpu = process.cpuUsage(cpuBefore);
  gc();
  gc();
  const heapBytes = process.memoryUsage().heapUsed - heapBefore;
  client.close();
  // Let the closed streams wind down before the next run.
  await new Promise((r) => setTimeout(r, 200));
  return { received: client.received(), ms, cpuMs: (cpu.user + cpu.system) / 1000, heapBytes };
}

async function startControlPlane(): Promise<{ address: string; process: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'bench/control-plane-process.ts', String(CLUSTERS), String(ENDPOINTS)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return { address: (JSON.parse(line) as { address: string }).address, process: child };
}

/** How long a grpc-js-xds run may take: it subscribes one name per request, so each run is quadratic. */
const GRPC_JS_XDS_CAP_MS = Number(process.env.BENCH_XDS_CAP_MS ?? 120_000);

export async function runXdsClientBench(): Promise<void> {
  registerGrpcJsXds();
  const controlPlane = await startControlPlane();
  const address = controlPlane.address;
  try {
    const ours: Run[] = [];
    // One warm-up run, not counted; lbtree's runs never come near the cap.
    await measure(lbtreeClient, address, 'warmup-lbtree', 600_000);
    for (let i = 0; i < REPEATS; i++) ours.push(await measure(lbtreeClient, address, `lbtree-${i}`, 600_000));
    // grpc-js-xds: one run (no warm-up), capped.
    const theirs = [await measure(grpcJsXdsClient, address, 'grpc-js-xds', GRPC_JS_XDS_CAP_MS)];
    printTableHeader(
      `xDS client: ${CLUSTERS.toLocaleString('en')} clusters + their EDS (${ENDPOINTS} endpoints each) from lbtree's control plane (lbtree: median of ${REPEATS}; grpc-js-xds: one run)`,
      'grpc-js-xds',
    );
    const pick = (runs: Run[], key: keyof Run) => median(runs.map((r) => r[key]));
    printRow('time to the full set', pick(ours, 'ms'), pick(theirs, 'ms'), 'ms');
    printRow('CPU (user + system)', pick(ours, 'cpuMs'), pick(theirs, 'cpuMs'), 'ms');
    printRow('retained heap', pick(ours, 'heapBytes') / 2 ** 20, pick(theirs, 'heapBytes') / 2 ** 20, 'MiB');
    const got = theirs[0]!.received;
    if (got < CLUSTERS) {
      console.log(
        `\ngrpc-js-xds had ${got} of ${CLUSTERS} EDS resources when its run was stopped at ${GRPC_JS_XDS_CAP_MS / 1000} s: its figures are lower bounds.`,
      );
    }
  } finally {
    controlPlane.process.stdin?.end();
  }
}
